//! The contraction template: batched matrix products (matmul, bmm, linear) with `tl.dot`
//! and a fused pointwise epilogue.
//!
//! Heuristic: BLOCK_M and BLOCK_N are 64 for dims up to 64 and 128 above (at least 16,
//! as `tl.dot` requires); BLOCK_K = 32 (64 for 16-bit inputs); 8 warps for 128x128 tiles,
//! else 4; 3 pipeline stages. Programs are ordered in groups of 8 rows of tiles so that
//! neighbouring programs share operand tiles in L2. fp32 operands use tf32 unless the
//! precision is `ieee`.

use super::epilogue::{add_epilogue, contiguous_offset};
use super::kernel::{decompose, emit_stmts, ops_comment, signature, LaunchConfig, TritonKernel};
use super::program::{IndexSource, InputArg, Program, Sp};
use super::ty::{compute_ty, storage_ty};
use drtc_ir::{DType, Graph, NodeId, Op, ValueId};
use std::fmt::Write;

/// Precision of fp32 matrix products.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Precision {
    /// TensorFloat-32 inputs, fp32 accumulation (within the verification tolerance).
    #[default]
    Tf32,
    /// Full fp32.
    Ieee,
}

pub fn contraction_config(m: u64, n: u64, half: bool) -> LaunchConfig {
    let bm = if m <= 64 { 64 } else { 128 };
    let bn = if n <= 64 { 64 } else { 128 };
    LaunchConfig {
        blocks: vec![
            ("BLOCK_M", bm),
            ("BLOCK_N", bn),
            ("BLOCK_K", if half { 64 } else { 32 }),
        ],
        num_warps: if bm * bn >= 128 * 128 { 8 } else { 4 },
        num_stages: 3,
    }
}

pub fn contraction_variants(m: u64, n: u64, half: bool) -> Vec<LaunchConfig> {
    let mut out = vec![contraction_config(m, n, half)];
    for (bm, bn, bk, w, s) in [
        (64, 64, 32, 4, 4),
        (128, 64, 32, 4, 4),
        (64, 128, 32, 4, 4),
        (128, 128, 32, 8, 3),
        (128, 256, 64, 8, 3),
    ] {
        let c = LaunchConfig {
            blocks: vec![("BLOCK_M", bm), ("BLOCK_N", bn), ("BLOCK_K", bk)],
            num_warps: w,
            num_stages: s,
        };
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

struct TileIndex {
    /// index expression of each output dim
    dims: Vec<String>,
}

impl IndexSource for TileIndex {
    fn dim_index(&self, _: Sp, d: usize) -> String {
        self.dims[d].clone()
    }
    fn mask(&self, _: Sp) -> String {
        "mask".into()
    }
}

fn stride(arg: &InputArg, dim: usize) -> Option<&str> {
    arg.strides
        .iter()
        .find(|(d, _)| *d == dim)
        .map(|(_, s)| s.as_str())
}

/// Generates the kernel of a contraction region.
pub fn contraction_kernel(
    g: &Graph,
    name: &str,
    nodes: &[NodeId],
    outputs: &[ValueId],
    precision: Precision,
    interpret: bool,
    config: Option<LaunchConfig>,
) -> Option<TritonKernel> {
    let main = *nodes
        .iter()
        .find(|&&n| matches!(g.node(n).op, Op::Matmul | Op::Bmm | Op::Linear))?;
    let mn = g.node(main);
    let out_ty = g.ty(mn.outputs[0]);
    let (a, b) = (mn.inputs[0], mn.inputs[1]);
    let (ta, tb) = (g.ty(a), g.ty(b));
    if ta.rank() < 2
        || out_ty.rank() < 2
        || !ta.dtype.is_float()
        || ta.dtype == DType::F64
        || tb.dtype == DType::F64
    {
        return None;
    }
    let domain = out_ty.shape.clone();
    let r = domain.len();
    let (m, n) = (domain[r - 2], domain[r - 1]);
    let k = *ta.shape.last()?;
    let batch: Vec<i64> = domain[..r - 2].to_vec();
    let nbatch: i64 = batch.iter().product();
    let mut prog = Program::new();
    let ia = prog.input_arg(g, a);
    let ib = prog.input_arg(g, b);
    let (arg_a, arg_b) = (prog.inputs[ia].clone(), prog.inputs[ib].clone());
    // operand A: [batch..., M, K]
    let ra = ta.rank();
    let a_m = stride(&arg_a, ra - 2);
    let a_k = stride(&arg_a, ra - 1);
    // operand B: [batch..., K, N] for matmul/bmm, weight [N, K] for linear
    let rb = tb.rank();
    let (b_k, b_n) = if mn.op == Op::Linear {
        (stride(&arg_b, 1), stride(&arg_b, 0))
    } else {
        (stride(&arg_b, rb - 2), stride(&arg_b, rb - 1))
    };
    let batch_names: Vec<String> = (0..batch.len()).map(|d| format!("b{d}")).collect();
    let batch_off = |arg: &InputArg, rank: usize| -> String {
        let nb = rank.saturating_sub(2);
        let mut terms = vec![];
        for j in 0..nb {
            let od = batch.len() as isize - nb as isize + j as isize;
            if od < 0 {
                continue;
            }
            if let Some(s) = stride(arg, j) {
                terms.push(format!("{} * {s}", batch_names[od as usize]));
            }
        }
        if terms.is_empty() {
            "0".into()
        } else {
            terms.join(" + ")
        }
    };
    let a_batch = batch_off(&arg_a, ra);
    let b_batch = if mn.op == Op::Linear {
        "0".to_string()
    } else {
        batch_off(&arg_b, rb)
    };
    let mut dims: Vec<String> = batch_names.clone();
    dims.push("offs_m".into());
    dims.push("offs_n".into());
    let ix = TileIndex { dims };
    // the product, then the bias of linear, then the epilogue
    let half = matches!(ta.dtype, DType::F16 | DType::BF16);
    let mut acc = prog.expr(Sp::Full, DType::F32, "acc".into(), vec![]);
    if mn.op == Op::Linear {
        if let Some(&bias) = mn.inputs.get(2) {
            let map = vec![if g.ty(bias).shape[0] == 1 {
                None
            } else {
                Some(r - 1)
            }];
            let bv = prog.value(g, bias, Sp::Full, map, &ix);
            acc = prog.expr(
                Sp::Full,
                DType::F32,
                format!("t{acc} + t{bv}"),
                vec![acc, bv],
            );
        }
    }
    prog.vars.insert((mn.outputs[0], Sp::Full), acc);
    add_epilogue(g, &mut prog, nodes, main, &domain, &ix)?;
    let roots: Vec<usize> = outputs
        .iter()
        .map(|&v| prog.value(g, v, Sp::Full, vec![], &ix))
        .collect();
    let config = config.unwrap_or_else(|| contraction_config(m as u64, n as u64, half));
    let wide = super::pointwise::needs_int64(
        g,
        outputs
            .iter()
            .copied()
            .chain(prog.inputs.iter().map(|x| x.value)),
    );
    let mut body = String::new();
    let p = if wide { ".to(tl.int64)" } else { "" };
    writeln!(body, "    pid = tl.program_id(0){p}").unwrap();
    writeln!(body, "    num_m = tl.cdiv({m}, BLOCK_M)").unwrap();
    writeln!(body, "    num_n = tl.cdiv({n}, BLOCK_N)").unwrap();
    writeln!(body, "    group = pid // (8 * num_n)").unwrap();
    writeln!(body, "    first_m = group * 8").unwrap();
    writeln!(body, "    size_m = tl.minimum(num_m - first_m, 8)").unwrap();
    writeln!(body, "    pm = first_m + (pid % (8 * num_n)) % size_m").unwrap();
    writeln!(body, "    pn = (pid % (8 * num_n)) // size_m").unwrap();
    if nbatch > 1 {
        writeln!(body, "    pb = tl.program_id(1){p}").unwrap();
        decompose(&mut body, "    ", "pb", &batch, &batch_names);
    }
    for (d, &s) in batch.iter().enumerate() {
        if s == 1 {
            writeln!(body, "    {} = 0", batch_names[d]).unwrap();
        }
    }
    writeln!(
        body,
        "    offs_m = pm * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]"
    )
    .unwrap();
    writeln!(
        body,
        "    offs_n = pn * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]"
    )
    .unwrap();
    writeln!(body, "    offs_k = tl.arange(0, BLOCK_K)").unwrap();
    // a dim of size 1 has no stride argument; `* 0` keeps the tile's shape
    let term = |idx: &str, s: Option<&str>| match s {
        Some(s) => format!(" + {idx} * {s}"),
        None => format!(" + {idx} * 0"),
    };
    writeln!(body, "    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)").unwrap();
    writeln!(body, "    for k0 in range(0, {k}, BLOCK_K):").unwrap();
    writeln!(body, "        ka = k0 + offs_k[None, :]").unwrap();
    writeln!(body, "        kb = k0 + offs_k[:, None]").unwrap();
    writeln!(
        body,
        "        a = tl.load({} + {a_batch}{}{}, mask=(offs_m < {m}) & (ka < {k}), other=0.0)",
        arg_a.ptr,
        term("offs_m", a_m),
        term("ka", a_k)
    )
    .unwrap();
    writeln!(
        body,
        "        b = tl.load({} + {b_batch}{}{}, mask=(kb < {k}) & (offs_n < {n}), other=0.0)",
        arg_b.ptr,
        term("kb", b_k),
        term("offs_n", b_n)
    )
    .unwrap();
    let bf16_in_interpreter = interpret && (ta.dtype == DType::BF16 || tb.dtype == DType::BF16);
    let (ca, cb) = if bf16_in_interpreter || ta.dtype != tb.dtype {
        ("a.to(tl.float32)", "b.to(tl.float32)")
    } else {
        ("a", "b")
    };
    let prec = match precision {
        Precision::Tf32 => "tf32",
        Precision::Ieee => "ieee",
    };
    if ta.dtype == DType::F32 || ca != "a" {
        writeln!(
            body,
            "        acc = tl.dot({ca}, {cb}, acc, input_precision=\"{prec}\")"
        )
        .unwrap();
    } else {
        writeln!(body, "        acc = tl.dot({ca}, {cb}, acc)").unwrap();
    }
    writeln!(body, "    mask = (offs_m < {m}) & (offs_n < {n})").unwrap();
    let order = prog.closure(&roots, &|_| false);
    emit_stmts(&mut body, &prog, &order, "    ");
    let off = contiguous_offset(&domain, &|d| ix.dims[d].clone());
    for (kk, (&v, &rt)) in outputs.iter().zip(&roots).enumerate() {
        let st = storage_ty(g.ty(v).dtype);
        writeln!(
            body,
            "    tl.store(out{kk} + {off} + offs_m * 0 + offs_n * 0, ({} + tl.zeros([BLOCK_M, BLOCK_N], {})).to({st}), mask=mask)",
            prog.var(rt),
            compute_ty(prog.stmts[rt].dtype)
        )
        .unwrap();
    }
    let mut source = String::new();
    writeln!(source, "@triton.jit").unwrap();
    writeln!(
        source,
        "def {name}({}):",
        signature(
            &prog,
            outputs.len(),
            &[],
            &["BLOCK_M", "BLOCK_N", "BLOCK_K"]
        )
    )
    .unwrap();
    source.push_str(&ops_comment(g, nodes));
    writeln!(source, "    # [{m} x {k}] @ [{k} x {n}], {nbatch} batches").unwrap();
    source.push_str(&body);
    let tiles =
        (m as u64).div_ceil(config.block("BLOCK_M")) * (n as u64).div_ceil(config.block("BLOCK_N"));
    let mut grid = vec![tiles.max(1)];
    if nbatch > 1 {
        grid.push(nbatch as u64);
    }
    Some(TritonKernel {
        name: name.to_string(),
        source,
        inputs: prog.inputs,
        outputs: outputs.to_vec(),
        grid,
        config,
        extra_args: vec![],
        scratch_args: vec![],
    })
}
