//! The contraction template: batched matrix products (matmul, bmm, linear) with `tl.dot`
//! and a fused pointwise epilogue, written for Hopper.
//!
//! - Persistent tile scheduling: the grid is at most `PERSISTENT` programs per
//!   multiprocessor (read off the device at launch) and each program walks the tiles
//!   `pid, pid + NUM_PROGS, ...`; `PERSISTENT=0` launches one program per tile.
//! - Grouped ordering: tiles go in groups of `GROUP_M` rows of tiles so programs running
//!   together share operand tiles in L2.
//! - TMA: when the installed Triton has `tl.make_tensor_descriptor`, the GPU is Hopper or
//!   newer, the region has no batch dims and both operands are contiguous along their
//!   inner dim with 16-byte aligned rows, the host passes `USE_TMA=True` and operand
//!   tiles come through tensor descriptors; otherwise (and under the interpreter) through
//!   masked pointer loads. The decision is made per call on the host.
//! - Precision: `tl.dot`'s `input_precision` (tf32, tf32x3, ieee) comes from the region's
//!   implementation, chosen by the precision policy (see `precision.rs`).
//!
//! Heuristic configuration: BLOCK_M is 64 for M up to 64 and 128 above; BLOCK_N the next
//! power of two of N up to 64 (at least 16, as `tl.dot` requires), 128 above, 256 for
//! plain tf32 when N >= 256 and K >= 128; BLOCK_K = 32 (64 for tf32x3 and 16-bit inputs);
//! 8 warps for 128x128 tiles and up, else 4; 3 pipeline stages; GROUP_M = 8; persistent;
//! where K takes one BLOCK_K step, a program per tile; but a store-bound
//! fp32 product (one K step, no batch dims, at least [`STORE_BOUND_MIN_TILES`] output
//! tiles) takes four persistent 4-warp programs per SM (128 x 128 tiles, 64 x 128 with
//! BLOCK_K = 64) and, on the TMA path, stores its tiles through a descriptor of its output.

use super::epilogue::{add_bias, add_epilogue, contiguous_offset, tile_moments};
use super::kernel::{
    decompose, emit_stmts, ops_comment, placement, signature, LaunchConfig, Placements,
    TritonKernel,
};
use super::precision::DotPrecision;
use super::statements::{IndexSource, InputArg, Program, Sp};
use super::ty::{compute_ty, storage_ty};
use drtc_ir::{DType, Graph, NodeId, Op, ValueId};
use std::fmt::Write;

/// The matrix product at the heart of a contraction region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GemmShape {
    pub main: NodeId,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    /// Product of the batch dims of the output.
    pub batch: u64,
    /// 16-bit operands.
    pub half: bool,
}

impl GemmShape {
    pub fn flops(&self) -> u64 {
        2 * self.m * self.n * self.k * self.batch
    }
}

/// The matrix product of a contraction region, when the template can compute it.
pub fn gemm_shape(g: &Graph, nodes: &[NodeId]) -> Option<GemmShape> {
    let main = *nodes
        .iter()
        .find(|&&n| matches!(g.node(n).op, Op::Matmul | Op::Bmm | Op::Linear))?;
    let mn = g.node(main);
    let out_ty = g.ty(mn.outputs[0]);
    let (ta, tb) = (g.ty(mn.inputs[0]), g.ty(mn.inputs[1]));
    if ta.rank() < 2
        || out_ty.rank() < 2
        || !ta.dtype.is_float()
        || ta.dtype == DType::F64
        || tb.dtype == DType::F64
    {
        return None;
    }
    let r = out_ty.rank();
    Some(GemmShape {
        main,
        m: out_ty.shape[r - 2] as u64,
        n: out_ty.shape[r - 1] as u64,
        k: *ta.shape.last()? as u64,
        batch: out_ty.shape[..r - 2].iter().map(|&d| d as u64).product(),
        half: matches!(ta.dtype, DType::F16 | DType::BF16),
    })
}

/// FLOPs of the product per byte of an operand below which copying the operand into a
/// K-contiguous layout costs more than it saves. From `bench/results/gemm_h200.md` (the
/// same 2048x4096x8192 product with A M-contiguous against B K-contiguous): tf32 198.8
/// against 386.4 TFLOP/s saves 2.4e-15 s per FLOP, tf32x3 65.6 against 79.6 saves 2.7e-15;
/// the copy reads and writes the operand, about 5e-13 s per byte at the copy bandwidth:
/// the break-even is about 190-205 FLOPs per byte. A batched product of small matrices
/// (an einsum's contraction over 64 of a large tensor: about 8 FLOPs per byte) reads
/// its operand in place.
pub const PREP_MIN_INTENSITY: u64 = 200;

/// Whether copying an operand of `bytes` K-contiguous pays for a product of `flops`.
pub fn prep_pays(flops: u64, bytes: u64) -> bool {
    flops >= PREP_MIN_INTENSITY.saturating_mul(bytes)
}

/// Fewer output tiles than this leave most of a 132-SM GPU idle under the template, which
/// has no split-K: each tile's program walks all of K alone, where cuBLAS splits K across
/// the machine. Measured in the H200 races
/// (`bench/results/level1_gemm_h200_711e57d_tf32_vs_compile.md`): level-1 task 6
/// (256 x 256 x 524288, 4 tiles) tf32x3 24.9 ms against the library's 0.47; task 4
/// (2048 x 1 x 1048576, 32 tiles) 38.7 against 2.36. So a product of at least
/// [`FEW_TILES_MIN_FLOPS`] with fewer tiles is a library call (`gemm_choice.rs`) and
/// the search does not race the template there.
pub const FEW_TILES: u64 = 66;

/// Products below this many FLOPs keep the template whatever their tile count (they run
/// in microseconds, where the fused epilogue matters more).
pub const FEW_TILES_MIN_FLOPS: u64 = 1_000_000_000;

/// Output tiles of the template's heuristic configuration for `shape` with `dot`.
pub fn template_tiles(shape: &GemmShape, dot: DotPrecision) -> u64 {
    let c = contraction_config(shape.m, shape.n, shape.k, shape.batch, shape.half, dot);
    shape.m.div_ceil(c.block("BLOCK_M")) * shape.n.div_ceil(c.block("BLOCK_N")) * shape.batch
}

/// Whether the template would starve the GPU on `shape` (see [`FEW_TILES`]).
pub fn too_few_tiles(shape: &GemmShape, dot: DotPrecision) -> bool {
    shape.flops() >= FEW_TILES_MIN_FLOPS && template_tiles(shape, dot) < FEW_TILES
}

/// The template's configuration for a product its heuristic tiles would starve
/// ([`too_few_tiles`]) but 64 x 64 tiles would not: at least [`FEW_TILES`] of them, a
/// program each (4 warps, 3 stages; several share a multiprocessor). Offered to the GPU
/// search's race against the library call, never chosen unmeasured: a 1024 x 1024 output
/// is 64 tiles of 128 x 128 and 256 of 64 x 64. At the fp32 policy (tf32x3 against cuBLAS's
/// full fp32) they won level-3 3's sixteen 1024-wide layers and 1's 128 x 8192 one: the
/// models 1.27 and 2.01 ms, torch.compile (highest precision) 1.96 and 3.93 in the same run,
/// H100 (`bench/results/level3_small_tiles_h100_default_vs_compile.md`; 1.82 and 2.48 before,
/// `level3_modes_h100_c97eb35_default_vs_modes.md`); with TF32 on both sides the library won
/// most races (`level3_small_tiles_h100_tf32_vs_compile.md`).
/// `None` where the heuristic tiles are enough or 64 x 64 tiles are still too few.
pub fn small_tiles_config(shape: &GemmShape, dot: DotPrecision) -> Option<LaunchConfig> {
    if !too_few_tiles(shape, dot) {
        return None;
    }
    let tiles = shape.m.div_ceil(64) * shape.n.div_ceil(64) * shape.batch;
    if tiles < FEW_TILES {
        return None;
    }
    let heuristic = contraction_config(shape.m, shape.n, shape.k, shape.batch, shape.half, dot);
    let bk = heuristic.block("BLOCK_K");
    Some(config(64, 64, bk, 4, if shape.k <= bk { 1 } else { 3 }, 0))
}

fn config(bm: u64, bn: u64, bk: u64, warps: u32, stages: u32, persistent: u64) -> LaunchConfig {
    LaunchConfig {
        blocks: vec![
            ("BLOCK_M", bm),
            ("BLOCK_N", bn),
            ("BLOCK_K", bk),
            ("GROUP_M", 8),
            ("PERSISTENT", persistent),
        ],
        num_warps: warps,
        num_stages: stages,
    }
}

/// Output tiles (of 128 x 128) from which a one-step product without batch dims is
/// store-bound enough for [`STORE_BOUND_PER_SM`] persistent programs: each walks about
/// four tiles or more on a 132-SM GPU.
pub const STORE_BOUND_MIN_TILES: u64 = 2048;

/// Persistent programs per SM of a store-bound product (`PERSISTENT`, see
/// [`contraction_config`]).
pub const STORE_BOUND_PER_SM: u64 = 4;

pub fn contraction_config(
    m: u64,
    n: u64,
    k: u64,
    batch: u64,
    half: bool,
    dot: DotPrecision,
) -> LaunchConfig {
    let bm = if m <= 64 { 64 } else { 128 };
    // plain tf32: 128x256 tiles reach cuBLAS on the H200 (367.6 against 373.6 TFLOP/s,
    // 1024x8192x8192), 128x128 only 268; with K = 32 they ran out of shared memory
    // (the epilogue's layout conversion on top of the stages)
    // N up to 64: the next power of two (at least 16, as `tl.dot` requires); a 64-wide tile
    // over N = 16 multiplies zeros: Mamba2's batched [64 x 64] @ [64 x 16] products ran
    // 0.662 ms with BLOCK_N = 64 and 0.266 with 16 on an H100
    // (`bench/results/level3_mamba2_probe_h100_a6d0f02.txt`)
    let bn = match (n, dot) {
        (0..=64, _) => n.next_power_of_two().clamp(16, 64),
        (256.., DotPrecision::Tf32) if m > 64 && k >= 128 && !half => 256,
        _ => 128,
    };
    // tf32x3: BLOCK_K = 64 measured 98 TFLOP/s against 78.5 with 32 (1024x8192x8192)
    let bk = match (half, dot) {
        (true, _) => 64,
        (false, DotPrecision::Tf32x3) if k >= 64 => 64,
        _ => 32,
    };
    let warps = if bm * bn >= 128 * 128 { 8 } else { 4 };
    // one K step per tile (small K; batched products of small matrices): the stages have
    // nothing to overlap, and a persistent program (one per multiprocessor) waits on each
    // tile's loads in turn; a program per tile lets several programs share a
    // multiprocessor, their loads in flight together. `num_stages` 1 is not passed to the
    // launch (`LaunchConfig::num_stages`): these kernels run at Triton's default of 3, as
    // measured (level-1 7's 128 x 128 one-step tiles asked for 262 KB of shared memory,
    // three stages' operand tiles and the output tile)
    if k <= bk {
        // one fp32 product of a large output over a small K (no batch): storing the
        // output is the work (level-1 9, [32768 x 32] @ [32 x 32768]: 4.3 GB written,
        // 0.5 ms of tf32x3 products). Four persistent programs per SM of 4 warps, each
        // tile stored through a TMA descriptor (our reading, not profiled: the store
        // drains while the program computes its next tile, where a program per tile
        // waits on its own; either change alone did not pay in the probe): 1.65 ms
        // against 3.31 for 128 x 128 tiles; with K = 64 (level-1 7) 64 x 128 tiles, 2.72
        // ms against 3.99 (128 x 128 tiles ran out of shared memory), H100,
        // `bench/results/level1_store_bound_long_rows_probe_h100_c810396.txt`; verified
        // end to end, 1.84 and 2.85 ms against cuBLAS's 2.66 and 4.07 in the same search
        // (`level1_store_bound_long_rows_h100_7f54f14_vs_c810396.txt`)
        let tiles = m.div_ceil(128) * n.div_ceil(128);
        if batch == 1 && !half && m > 64 && n > 64 && tiles >= STORE_BOUND_MIN_TILES {
            let bm = if bk > 32 { 64 } else { 128 };
            return config(bm, 128, bk, 4, 1, STORE_BOUND_PER_SM);
        }
        return config(bm, bn, bk, warps, 1, 0);
    }
    config(bm, bn, bk, warps, 3, 1)
}

pub fn contraction_variants(m: u64, n: u64, k: u64, batch: u64, half: bool) -> Vec<LaunchConfig> {
    let mut out = vec![contraction_config(m, n, k, batch, half, DotPrecision::Tf32)];
    let x3 = contraction_config(m, n, k, batch, half, DotPrecision::Tf32x3);
    if !out.contains(&x3) {
        out.push(x3);
    }
    for (bm, bn, bk, w, s, p) in [
        (128, 128, 32, 8, 3, 0),
        (128, 128, 32, 8, 4, 1),
        (128, 256, 32, 8, 3, 1),
        (256, 128, 32, 8, 3, 1),
        (128, 128, 64, 8, 3, 1),
        (128, 64, 32, 4, 4, 1),
        (64, 128, 32, 4, 4, 1),
        (64, 64, 32, 4, 4, 0),
    ] {
        // tiles far larger than the matrix only waste work
        if (bm > 64 && m <= 64) || (bn > 64 && n <= 64) {
            continue;
        }
        let c = config(bm, bn, if half { bk.max(64) } else { bk }, w, s, p);
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

struct TileIndex {
    /// index expression of each output dim
    dims: Vec<String>,
    /// the product's M and N (the last two dims)
    m: u64,
    n: u64,
}

impl IndexSource for TileIndex {
    fn dim_index(&self, _: Sp, d: usize) -> String {
        self.dims[d].clone()
    }
    fn mask(&self, _: Sp) -> String {
        "mask".into()
    }
    /// A vector along N (a bias, a per-channel scale) is loaded as `[1, BLOCK_N]` and a
    /// vector along M as `[BLOCK_M, 1]`; batch indices are always in range (a program
    /// walks whole batches), so only the M and N bounds mask them. Measured on the H200
    /// (16384x4096x4096 with two per-channel vectors): 1.413 -> 1.401 ms.
    fn mask_of(&self, _: Sp, dims: &[usize]) -> String {
        let r = self.dims.len();
        let (m, n) = (dims.contains(&(r - 2)), dims.contains(&(r - 1)));
        match (m, n) {
            (true, false) => format!("(offs_m < {})", self.m),
            (false, true) => format!("(offs_n < {})", self.n),
            // both, or batch dims only: the tile's mask (a load needs one with `other`)
            (true, true) | (false, false) => "mask".into(),
        }
    }
}

/// How the template computes the product, and what its epilogue writes besides the
/// region's outputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DotMode {
    pub dot: DotPrecision,
    pub moments: Option<TileMoments>,
}

/// Column moments of one output `[M, N]` per tile, for a batch norm's statistics that a
/// later reduction region merges (`reduction::GivenMoments`): for each tile row `pm` and
/// column `c`, the sum over the tile's valid rows into `sum[c * chunks + pm]` and the
/// squared deviations around their mean into `m2[c * chunks + pm]`; `chunks` =
/// cdiv(M, BLOCK_M). Saves the reduction's own pass over the output (268 MB for a
/// 16384 x 4096 product), at the cost of two column reductions per tile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileMoments {
    pub value: ValueId,
    pub sum: String,
    pub m2: String,
    pub chunks: u64,
}

/// Generates the kernel of a contraction region whose product is `shape` (the lowering
/// plan's, [`gemm_shape`]).
#[allow(clippy::too_many_arguments)]
pub fn contraction_kernel(
    g: &Graph,
    name: &str,
    (nodes, outputs): (&[NodeId], &[ValueId]),
    shape: &GemmShape,
    mode: DotMode,
    interpret: bool,
    config: Option<LaunchConfig>,
    placed: &Placements,
) -> Option<TritonKernel> {
    let main = shape.main;
    let mn = g.node(main);
    let out_ty = g.ty(mn.outputs[0]);
    let (a, b) = (mn.inputs[0], mn.inputs[1]);
    let (ta, tb) = (g.ty(a), g.ty(b));
    let domain = out_ty.shape.clone();
    let r = domain.len();
    let (m, n, k) = (shape.m, shape.n, shape.k);
    let batch: Vec<i64> = domain[..r - 2].to_vec();
    let nbatch = shape.batch;
    let mut prog = Program::new();
    let ia = prog.input_arg(g, a);
    let ib = prog.input_arg(g, b);
    let (arg_a, arg_b) = (prog.inputs[ia].clone(), prog.inputs[ib].clone());
    // operand A: [batch..., M, K]
    let ra = ta.rank();
    let a_m = arg_a.stride(ra - 2);
    let a_k = arg_a.stride(ra - 1);
    // operand B: [batch..., K, N] for matmul/bmm, weight [N, K] for linear
    let rb = tb.rank();
    let linear = mn.op == Op::Linear;
    let (b_k, b_n) = if linear {
        (arg_b.stride(1), arg_b.stride(0))
    } else {
        (arg_b.stride(rb - 2), arg_b.stride(rb - 1))
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
            if let Some(s) = arg.stride(j) {
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
    let b_batch = if linear {
        "0".to_string()
    } else {
        batch_off(&arg_b, rb)
    };
    let mut dims: Vec<String> = batch_names.clone();
    dims.push("offs_m".into());
    dims.push("offs_n".into());
    let ix = TileIndex { dims, m, n };
    // the product, then the bias of linear, then the epilogue
    let half = shape.half;
    let mut acc = prog.expr(Sp::Full, DType::F32, "acc".into(), vec![]);
    if linear {
        if let Some(&bias) = mn.inputs.get(2) {
            acc = add_bias(g, &mut prog, acc, bias, r - 1, &ix);
        }
    }
    prog.vars.insert((mn.outputs[0], Sp::Full), acc);
    add_epilogue(g, &mut prog, nodes, main, &domain, &ix)?;
    let roots: Vec<usize> = outputs
        .iter()
        .map(|&v| prog.value(g, v, Sp::Full, vec![], &ix))
        .collect();
    let config = config.unwrap_or_else(|| contraction_config(m, n, k, nbatch, half, mode.dot));
    let wide = super::pointwise::needs_int64(
        g,
        outputs
            .iter()
            .copied()
            .chain(prog.inputs.iter().map(|x| x.value)),
    );
    // TMA needs plain 2-D operands (the host checks strides and alignment per call)
    let tma_able = nbatch == 1
        && ra == 2
        && rb == 2
        && !interpret
        && a_m.is_some()
        && a_k.is_some()
        && b_k.is_some()
        && b_n.is_some();
    // the store-bound configuration (one K step, persistent programs: `contraction_config`)
    // stores its tiles through a TMA descriptor of the one plain output, whose rows are
    // 16-byte aligned
    let store_tma = tma_able
        && k <= config.block("BLOCK_K")
        && config.block("PERSISTENT") >= 1
        && outputs.len() == 1
        && placement(placed, 0).is_none()
        && mode.moments.is_none()
        && r == 2
        && (n * g.ty(outputs[0]).dtype.size_bytes()).is_multiple_of(16);
    let mut body = String::new();
    let p = if wide { ".to(tl.int64)" } else { "" };
    writeln!(body, "    num_m = tl.cdiv({m}, BLOCK_M)").unwrap();
    writeln!(body, "    num_n = tl.cdiv({n}, BLOCK_N)").unwrap();
    writeln!(body, "    tiles = num_m * num_n").unwrap();
    if tma_able {
        // each operand through a descriptor over its memory layout: row-major in its
        // logical shape, or transposed (`A_T`/`B_T`: contiguous along M / K)
        let (am, ak, bk, bn) = (
            a_m.unwrap_or("1"),
            a_k.unwrap_or("1"),
            b_k.unwrap_or("1"),
            b_n.unwrap_or("1"),
        );
        let (pa, pb) = (&arg_a.ptr, &arg_b.ptr);
        writeln!(body, "    if USE_TMA:").unwrap();
        writeln!(body, "        if A_T:").unwrap();
        writeln!(body, "            a_desc = tl.make_tensor_descriptor({pa}, shape=[{k}, {m}], strides=[{ak}, 1], block_shape=[BLOCK_K, BLOCK_M])").unwrap();
        writeln!(body, "        else:").unwrap();
        writeln!(body, "            a_desc = tl.make_tensor_descriptor({pa}, shape=[{m}, {k}], strides=[{am}, 1], block_shape=[BLOCK_M, BLOCK_K])").unwrap();
        writeln!(body, "        if B_T:").unwrap();
        writeln!(body, "            b_desc = tl.make_tensor_descriptor({pb}, shape=[{n}, {k}], strides=[{bn}, 1], block_shape=[BLOCK_N, BLOCK_K])").unwrap();
        writeln!(body, "        else:").unwrap();
        writeln!(body, "            b_desc = tl.make_tensor_descriptor({pb}, shape=[{k}, {n}], strides=[{bk}, 1], block_shape=[BLOCK_K, BLOCK_N])").unwrap();
        if store_tma {
            writeln!(body, "        o_desc = tl.make_tensor_descriptor(out0, shape=[{m}, {n}], strides=[{n}, 1], block_shape=[BLOCK_M, BLOCK_N])").unwrap();
        }
    }
    writeln!(
        body,
        "    for tile0 in range(tl.program_id(0), tiles * {nbatch}, NUM_PROGS):"
    )
    .unwrap();
    let ind = "        ";
    writeln!(body, "{ind}tile = tile0{p}").unwrap();
    writeln!(body, "{ind}t = tile % tiles").unwrap();
    writeln!(body, "{ind}group = t // (GROUP_M * num_n)").unwrap();
    writeln!(body, "{ind}first_m = group * GROUP_M").unwrap();
    writeln!(body, "{ind}size_m = tl.minimum(num_m - first_m, GROUP_M)").unwrap();
    writeln!(body, "{ind}pm = first_m + (t % (GROUP_M * num_n)) % size_m").unwrap();
    writeln!(body, "{ind}pn = (t % (GROUP_M * num_n)) // size_m").unwrap();
    if nbatch > 1 {
        writeln!(body, "{ind}pb = tile // tiles").unwrap();
        decompose(&mut body, ind, "pb", &batch, &batch_names);
    }
    for (d, &s) in batch.iter().enumerate() {
        if s == 1 {
            writeln!(body, "{ind}{} = 0", batch_names[d]).unwrap();
        }
    }
    writeln!(
        body,
        "{ind}offs_m = pm * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]"
    )
    .unwrap();
    writeln!(
        body,
        "{ind}offs_n = pn * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]"
    )
    .unwrap();
    writeln!(body, "{ind}offs_k = tl.arange(0, BLOCK_K)").unwrap();
    // a dim of size 1 has no stride argument; `* 0` keeps the tile's shape
    let term = |idx: &str, s: Option<&str>| match s {
        Some(s) => format!(" + {idx} * {s}"),
        None => format!(" + {idx} * 0"),
    };
    writeln!(body, "{ind}acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)").unwrap();
    writeln!(body, "{ind}for k0 in range(0, {k}, BLOCK_K):").unwrap();
    let in2 = format!("{ind}    ");
    let mut loads = String::new();
    writeln!(loads, "ka = k0 + offs_k[None, :]").unwrap();
    writeln!(loads, "kb = k0 + offs_k[:, None]").unwrap();
    writeln!(
        loads,
        "a = tl.load({} + {a_batch}{}{}, mask=(offs_m < {m}) & (ka < {k}), other=0.0)",
        arg_a.ptr,
        term("offs_m", a_m),
        term("ka", a_k)
    )
    .unwrap();
    writeln!(
        loads,
        "b = tl.load({} + {b_batch}{}{}, mask=(kb < {k}) & (offs_n < {n}), other=0.0)",
        arg_b.ptr,
        term("kb", b_k),
        term("offs_n", b_n)
    )
    .unwrap();
    if tma_able {
        writeln!(body, "{in2}if USE_TMA:").unwrap();
        writeln!(body, "{in2}    if A_T:").unwrap();
        writeln!(body, "{in2}        a = a_desc.load([k0, pm * BLOCK_M]).T").unwrap();
        writeln!(body, "{in2}    else:").unwrap();
        writeln!(body, "{in2}        a = a_desc.load([pm * BLOCK_M, k0])").unwrap();
        writeln!(body, "{in2}    if B_T:").unwrap();
        writeln!(body, "{in2}        b = b_desc.load([pn * BLOCK_N, k0]).T").unwrap();
        writeln!(body, "{in2}    else:").unwrap();
        writeln!(body, "{in2}        b = b_desc.load([k0, pn * BLOCK_N])").unwrap();
        writeln!(body, "{in2}else:").unwrap();
        for l in loads.lines() {
            writeln!(body, "{in2}    {l}").unwrap();
        }
    } else {
        for l in loads.lines() {
            writeln!(body, "{in2}{l}").unwrap();
        }
    }
    let bf16_in_interpreter = interpret && (ta.dtype == DType::BF16 || tb.dtype == DType::BF16);
    let (ca, cb) = if bf16_in_interpreter || ta.dtype != tb.dtype {
        ("a.to(tl.float32)", "b.to(tl.float32)")
    } else {
        ("a", "b")
    };
    let prec = if ta.dtype == DType::F32 || ca != "a" {
        format!(", input_precision=\"{}\"", mode.dot.name())
    } else {
        String::new()
    };
    writeln!(body, "{in2}acc = tl.dot({ca}, {cb}, acc{prec})").unwrap();
    writeln!(body, "{ind}mask = (offs_m < {m}) & (offs_n < {n})").unwrap();
    let order = prog.closure(&roots, &|_| false);
    emit_stmts(&mut body, &prog, &order, ind);
    let index = |d: usize| ix.dims[d].clone();
    let contiguous = contiguous_offset(&domain, &index);
    for (kk, (&v, &rt)) in outputs.iter().zip(&roots).enumerate() {
        let st = storage_ty(g.ty(v).dtype);
        // an output stored elsewhere: its slice of a concatenation's result
        let off = match placement(placed, kk) {
            Some(map) => map.offset(&domain, &index),
            None => contiguous.clone(),
        };
        let value = format!(
            "({} + tl.zeros([BLOCK_M, BLOCK_N], {})).to({st})",
            prog.var(rt),
            compute_ty(prog.stmts[rt].dtype)
        );
        let store =
            format!("tl.store(out{kk} + {off} + offs_m * 0 + offs_n * 0, {value}, mask=mask)");
        if store_tma {
            writeln!(body, "{ind}if USE_TMA:").unwrap();
            writeln!(
                body,
                "{ind}    o_desc.store([pm * BLOCK_M, pn * BLOCK_N], {value})"
            )
            .unwrap();
            writeln!(body, "{ind}else:").unwrap();
            writeln!(body, "{ind}    {store}").unwrap();
        } else {
            writeln!(body, "{ind}{store}").unwrap();
        }
    }
    let mut scratch = vec![];
    if let Some(tm) = &mode.moments {
        // plain [M, N] products only: the stitcher asks for no other
        let rt = outputs
            .iter()
            .position(|&v| v == tm.value)
            .map(|kk| roots[kk])
            .filter(|_| {
                nbatch == 1 && r == 2 && tm.chunks == m.div_ceil(config.block("BLOCK_M"))
            })?;
        let (ws, wm) = (&tm.sum, &tm.m2);
        let cols_mask = format!("offs_n < {n}");
        tile_moments(
            &mut body,
            ind,
            (prog.var(rt), m),
            ("offs_n", &cols_mask),
            tm.chunks,
            (ws, wm),
        );
        scratch = vec![ws.clone(), wm.clone()];
    }
    let mut source = String::new();
    writeln!(source, "@triton.jit").unwrap();
    writeln!(
        source,
        "def {name}({}):",
        signature(
            &prog,
            outputs.len(),
            &[scratch.clone(), vec!["NUM_PROGS".to_string()]].concat(),
            &[
                "USE_TMA",
                "A_T",
                "B_T",
                "BLOCK_M",
                "BLOCK_N",
                "BLOCK_K",
                "GROUP_M",
                "PERSISTENT"
            ]
        )
    )
    .unwrap();
    source.push_str(&ops_comment(g, nodes));
    writeln!(
        source,
        "    # [{m} x {k}] @ [{k} x {n}], {nbatch} batches; {} dot",
        mode.dot.name()
    )
    .unwrap();
    source.push_str(&body);
    let tiles = m.div_ceil(config.block("BLOCK_M")) * n.div_ceil(config.block("BLOCK_N"));
    let total = (tiles * nbatch).max(1);
    let grid_expr = match config.block("PERSISTENT") {
        0 => total.to_string(),
        1 => format!("min({total}, _drtc_sms())"),
        per_sm => format!("min({total}, {per_sm} * _drtc_sms())"),
    };
    // the host's TMA test: Hopper+, 2-D operands contiguous along their inner dim,
    // 16-byte aligned rows and base
    let align = if half { 8 } else { 4 };
    let (tma_expr, a_t, b_t) = if tma_able {
        // `{argI}`: the host's name of kernel input I; dims of A (M, K) and B (K, N) in
        // the host tensors
        let (a, b) = (format!("{{arg{ia}}}"), format!("{{arg{ib}}}"));
        let (bk_dim, bn_dim) = if linear { (1, 0) } else { (0, 1) };
        let operand = |x: &str, inner: usize, outer: usize| {
            format!("({x}.stride({inner}) == 1 and {x}.stride({outer}) % {align} == 0)")
        };
        let ok = |x: &str, d0: usize, d1: usize| {
            format!(
                "({} or {}) and {x}.data_ptr() % 16 == 0",
                operand(x, d1, d0),
                operand(x, d0, d1)
            )
        };
        (
            format!(
                "_DRTC_TMA and {} and {}",
                ok(&a, 0, 1),
                ok(&b, bk_dim, bn_dim)
            ),
            format!("{a}.stride(1) != 1"),
            format!("{b}.stride({bn_dim}) != 1"),
        )
    } else {
        (
            "False".to_string(),
            "False".to_string(),
            "False".to_string(),
        )
    };
    // fp32 operands on the GPU: tf32 tensor-core products need both operands contiguous
    // along K (A: [M, K] rows, B: [N, K] rows); Triton 3.6 reaches 67-85 TFLOP/s with an
    // M- or N-contiguous operand against 250-370 with both K-contiguous on the H200
    // (bench/results/gemm_h200.md), so the host copies such an operand once per call
    // where the product is long enough to repay the copy ([`prep_pays`]; large products
    // at most 32 wide are library calls: precision.rs)
    let mut operand_prep = vec![];
    let flops = shape.flops();
    let pays = |t: &drtc_ir::TensorType| prep_pays(flops, t.numel() * 4);
    if !interpret && !half && ia != ib && ta.dtype == DType::F32 && tb.dtype == DType::F32 {
        if pays(ta) {
            operand_prep.push((
                ia,
                "({x} if {x}.stride(-1) == 1 else {x}.contiguous())".to_string(),
            ));
        }
        let b_prep = if linear {
            "({x} if {x}.stride(-1) == 1 else {x}.contiguous())"
        } else {
            "({x} if {x}.stride(-2) == 1 else {x}.transpose(-1, -2).contiguous().transpose(-1, -2))"
        };
        if pays(tb) {
            operand_prep.push((ib, b_prep.to_string()));
        }
    }
    Some(TritonKernel {
        name: name.to_string(),
        source,
        inputs: prog.inputs,
        outputs: outputs.to_vec(),
        grid: vec![total],
        grid_expr: Some(grid_expr.clone()),
        config,
        extra_args: vec![
            ("NUM_PROGS".into(), grid_expr),
            ("USE_TMA".into(), tma_expr),
            ("A_T".into(), a_t),
            ("B_T".into(), b_t),
        ],
        scratch_args: scratch,
        operand_prep,
        phase_launches: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_step_products_of_large_outputs_take_persistent_store_bound_tiles() {
        let x3 = DotPrecision::Tf32x3;
        let tiles = |c: &LaunchConfig| {
            (
                c.block("BLOCK_M"),
                c.block("BLOCK_N"),
                c.block("BLOCK_K"),
                c.block("PERSISTENT"),
                c.num_warps,
            )
        };
        // K = 32: 128 x 128 tiles; K = 64 (BLOCK_K 64 under tf32x3): 64 x 128
        let c = contraction_config(32768, 32768, 32, 1, false, x3);
        assert_eq!(tiles(&c), (128, 128, 32, STORE_BOUND_PER_SM, 4));
        let c = contraction_config(32768, 32768, 64, 1, false, x3);
        assert_eq!(tiles(&c), (64, 128, 64, STORE_BOUND_PER_SM, 4));
        // batched, small, or more than one K step: as before
        let c = contraction_config(64, 16, 64, 4096, false, x3);
        assert_eq!(c.block("PERSISTENT"), 0);
        let c = contraction_config(1024, 1024, 32, 1, false, x3);
        assert_eq!(c.block("PERSISTENT"), 0);
        let c = contraction_config(32768, 32768, 128, 1, false, x3);
        assert_eq!((c.block("PERSISTENT"), c.num_stages), (1, 3));
    }

    #[test]
    fn a_starved_product_is_offered_64_x_64_tiles_where_they_are_enough() {
        let x3 = DotPrecision::Tf32x3;
        let shape = |m, n, k| GemmShape {
            main: NodeId(0),
            m,
            n,
            k,
            batch: 1,
            half: false,
        };
        // 1024 x 1024 (level-3 3's layers): 64 tiles of 128 x 128, 256 of 64 x 64
        let narrow = shape(1024, 1024, 1024);
        assert!(too_few_tiles(&narrow, x3));
        let c = small_tiles_config(&narrow, x3).expect("64 x 64 tiles");
        let t = |c: &LaunchConfig| (c.block("BLOCK_M"), c.block("BLOCK_N"), c.block("BLOCK_K"));
        assert_eq!(
            (t(&c), c.num_warps, c.block("PERSISTENT")),
            ((64, 64, 64), 4, 0)
        );
        // enough tiles already, or too few even at 64 x 64 (level-1 6: 16 tiles)
        assert!(small_tiles_config(&shape(4096, 4096, 4096), x3).is_none());
        assert!(small_tiles_config(&shape(256, 256, 524288), x3).is_none());
    }
}
