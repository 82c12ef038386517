//! The window template: max and average pooling (1d/2d/3d, padding, dilation, ceil_mode,
//! count_include_pad, divisor_override) with a fused pointwise epilogue.
//!
//! One program computes BLOCK output elements and walks the window with loops over each
//! kernel dim. Heuristic: BLOCK = 256 (or the next power of two of the output size when
//! smaller), 4 warps.

use super::epilogue::{add_epilogue, contiguous_offset};
use super::kernel::{decompose, emit_stmts, kernel_head, store_line, LaunchConfig, TritonKernel};
use super::statements::{IndexSource, Program, Sp};
use super::ty::{compute_ty, next_pow2};
use drtc_ir::{Attr, Graph, NodeId, Pool, ValueId};
use std::fmt::Write;

pub fn window_config(n: u64) -> LaunchConfig {
    LaunchConfig {
        blocks: vec![("BLOCK", next_pow2(n).clamp(16, 256))],
        num_warps: 4,
        num_stages: 1,
    }
}

struct FlatIndex;

impl IndexSource for FlatIndex {
    fn dim_index(&self, _: Sp, d: usize) -> String {
        format!("o{d}")
    }
    fn mask(&self, _: Sp) -> String {
        "mask".into()
    }
}

fn list(attrs: &drtc_ir::Attrs, name: &str, n: usize) -> Option<Vec<i64>> {
    let v = attrs.get(name)?.as_ints()?;
    Some(if v.len() == 1 {
        vec![v[0]; n]
    } else {
        v.to_vec()
    })
}

/// Generates the kernel of a window region. `order` (outermost first) is the order in
/// which the outputs are dense: `None` for row-major, `[0, 2, 3, 1]` for a channels-last
/// pooling, whose consecutive programs' lanes then read consecutive channels of a
/// channels-last input.
pub fn window_kernel(
    g: &Graph,
    name: &str,
    nodes: &[NodeId],
    outputs: &[ValueId],
    config: Option<LaunchConfig>,
    order: Option<&[usize]>,
) -> Option<TritonKernel> {
    let main = *nodes.iter().find(|&&n| {
        matches!(
            g.node(n).op.kind().pooling(),
            Some((Pool::Max | Pool::Avg, _))
        )
    })?;
    let mn = g.node(main);
    let (pool, nsp) = mn.op.kind().pooling()?;
    let is_max = pool == Pool::Max;
    let x = mn.inputs[0];
    let tx = g.ty(x);
    if !tx.dtype.is_float() {
        return None;
    }
    let out_shape = g.ty(mn.outputs[0]).shape.clone();
    let rank = out_shape.len();
    let lead = rank - nsp;
    let kernel = list(&mn.attrs, "kernel_size", nsp)?;
    let stride = match mn.attrs.get("stride") {
        Some(Attr::Ints(v)) if !v.is_empty() => list(&mn.attrs, "stride", nsp)?,
        _ => kernel.clone(),
    };
    let padding = list(&mn.attrs, "padding", nsp)?;
    let dilation = if is_max {
        list(&mn.attrs, "dilation", nsp)?
    } else {
        vec![1; nsp]
    };
    let numel: u64 = out_shape.iter().map(|&d| d as u64).product();
    let mut prog = Program::new();
    let ix_arg = prog.input_arg(g, x);
    let arg = prog.inputs[ix_arg].clone();
    let stride_of = |d: usize| arg.stride(d).map(str::to_string);
    let acc = prog.expr(Sp::Full, drtc_ir::DType::F32, "acc".into(), vec![]);
    prog.vars.insert((mn.outputs[0], Sp::Full), acc);
    let ix = FlatIndex;
    add_epilogue(g, &mut prog, nodes, main, &out_shape, &ix)?;
    let roots: Vec<usize> = outputs
        .iter()
        .map(|&v| prog.value(g, v, Sp::Full, vec![], &ix))
        .collect();
    let config = config.unwrap_or_else(|| window_config(numel));
    let wide = super::pointwise::needs_int64(g, outputs.iter().copied().chain([x]));
    let mut body = String::new();
    let pid = if wide {
        "tl.program_id(0).to(tl.int64)"
    } else {
        "tl.program_id(0)"
    };
    writeln!(body, "    offs = {pid} * BLOCK + tl.arange(0, BLOCK)").unwrap();
    writeln!(body, "    mask = offs < {numel}").unwrap();
    let order: Vec<usize> = match order {
        Some(o) if o.len() == rank => o.to_vec(),
        Some(_) => return None,
        None => (0..rank).collect(),
    };
    let names: Vec<String> = order.iter().map(|d| format!("o{d}")).collect();
    let physical: Vec<i64> = order.iter().map(|&d| out_shape[d]).collect();
    decompose(&mut body, "    ", "offs", &physical, &names);
    for (d, &s) in out_shape.iter().enumerate() {
        if s == 1 {
            // a tensor, not a Python int, so every index and mask below is a tensor
            writeln!(body, "    o{d} = offs * 0").unwrap();
        }
    }
    let mut base = vec![];
    for d in 0..lead {
        if let Some(s) = stride_of(d) {
            base.push(format!("o{d} * {s}"));
        }
    }
    writeln!(
        body,
        "    base = {}",
        if base.is_empty() {
            "0".into()
        } else {
            base.join(" + ")
        }
    )
    .unwrap();
    let ct = compute_ty(tx.dtype);
    if is_max {
        writeln!(body, "    acc = tl.full([BLOCK], float('-inf'), {ct})").unwrap();
    } else {
        writeln!(body, "    acc = tl.zeros([BLOCK], {ct})").unwrap();
    }
    let mut indent = String::from("    ");
    let mut valid = vec!["mask".to_string()];
    let mut off = vec!["base".to_string()];
    for j in 0..nsp {
        let d = lead + j;
        let size = tx.shape[d];
        writeln!(body, "{indent}for k{j} in range({}):", kernel[j]).unwrap();
        indent.push_str("    ");
        writeln!(
            body,
            "{indent}h{j} = o{d} * {} - {} + k{j} * {}",
            stride[j], padding[j], dilation[j]
        )
        .unwrap();
        valid.push(format!("(h{j} >= 0) & (h{j} < {size})"));
        if let Some(s) = stride_of(d) {
            off.push(format!("h{j} * {s}"));
        }
    }
    let other = if is_max { "float('-inf')" } else { "0.0" };
    writeln!(
        body,
        "{indent}v = tl.load({} + {}, mask={}, other={other}).to({ct})",
        arg.ptr,
        off.join(" + "),
        valid.join(" & ")
    )
    .unwrap();
    if is_max {
        writeln!(body, "{indent}acc = tl.maximum(acc, v)").unwrap();
    } else {
        writeln!(body, "{indent}acc += v").unwrap();
        let div_override = mn.attrs.get("divisor_override").and_then(Attr::as_int);
        let include_pad = mn
            .attrs
            .get("count_include_pad")
            .and_then(Attr::as_bool)
            .unwrap_or(true);
        let divisor = if let Some(dv) = div_override {
            format!("{dv}.0")
        } else {
            let mut factors = vec![];
            for j in 0..nsp {
                let d = lead + j;
                let size = tx.shape[d];
                let start = format!("(o{d} * {} - {})", stride[j], padding[j]);
                if include_pad {
                    factors.push(format!(
                        "(tl.minimum({start} + {}, {}) - {start})",
                        kernel[j],
                        size + padding[j]
                    ));
                } else {
                    factors.push(format!(
                        "(tl.minimum({start} + {}, {size}) - tl.maximum({start}, 0))",
                        kernel[j]
                    ));
                }
            }
            format!("({}).to({ct})", factors.join(" * "))
        };
        writeln!(body, "    acc = acc / {divisor}").unwrap();
    }
    let order = prog.closure(&roots, &|_| false);
    emit_stmts(&mut body, &prog, &order, "    ");
    let off = contiguous_offset(&out_shape, &|d| format!("o{d}"));
    let _ = off;
    for (k, (&v, &r)) in outputs.iter().zip(&roots).enumerate() {
        body.push_str(&store_line(g, &prog, (k, v, r), "offs", "[BLOCK]", "mask"));
    }
    let mut source = kernel_head(
        g,
        name,
        &prog,
        outputs.len(),
        &["BLOCK"],
        nodes,
        &[],
        &order,
    );
    source.push_str(&body);
    Some(TritonKernel {
        name: name.to_string(),
        source,
        inputs: prog.inputs,
        outputs: outputs.to_vec(),
        grid: vec![numel.div_ceil(config.block("BLOCK")).max(1)],
        grid_expr: None,
        config,
        extra_args: vec![],
        scratch_args: vec![],
        operand_prep: vec![],
    })
}
