//! The window template: max and average pooling (1d/2d/3d, padding, dilation, ceil_mode,
//! count_include_pad, divisor_override) with a fused pointwise prologue and epilogue.
//!
//! One program computes BLOCK output elements and walks the window with loops over each
//! kernel dim. Heuristic: BLOCK = 256 (or the next power of two of the output size when
//! smaller), 4 warps.
//!
//! The prologue (pointwise ops whose result only the pool reads) is computed at each tap
//! from the pooled input's own index (`Sp::Tap`), so its result is never written: a tap
//! outside the input is the pool's identity (`-inf`, 0), not the prologue of a padding
//! value. Its statements that do not depend on the tap (per-channel loads and math on
//! them) are computed once, before the loops. Where windows overlap the prologue is
//! computed once per window holding the element: arithmetic for bytes.

use super::epilogue::add_epilogue;
use super::kernel::{decompose, emit_stmts, kernel_head, store_line, LaunchConfig, TritonKernel};
use super::statements::{align, IndexSource, Program, Sp};
use super::tap_norm::{apply_norm, TapNorm, STATS_PARAMS};
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

/// Output indices `o{d}`; at a tap, the pooled input's: `o{d}` for a leading dim, the
/// tap's `h{j}` for spatial dim `j`.
struct FlatIndex {
    lead: usize,
}

impl IndexSource for FlatIndex {
    fn dim_index(&self, sp: Sp, d: usize) -> String {
        match sp {
            Sp::Tap if d >= self.lead => format!("h{}", d - self.lead),
            Sp::Full | Sp::Row | Sp::Tap => format!("o{d}"),
        }
    }
    fn mask(&self, sp: Sp) -> String {
        match sp {
            Sp::Tap => "tap_mask".into(),
            Sp::Full | Sp::Row => "mask".into(),
        }
    }
    fn mask_of(&self, sp: Sp, dims: &[usize]) -> String {
        // a load along leading dims only is the same at every tap: hoisted before the loops
        match sp {
            Sp::Tap if dims.iter().any(|&d| d >= self.lead) => "tap_mask".into(),
            Sp::Full | Sp::Row | Sp::Tap => "mask".into(),
        }
    }
}

/// The prologue's statements that are the same at every tap: loads along leading dims
/// only, constants, the statistics `seeds`, and pointwise math on them alone.
fn tap_invariant(prog: &Program, lead: usize, seeds: &[usize]) -> Vec<bool> {
    let mut inv = vec![false; prog.stmts.len()];
    for i in 0..prog.stmts.len() {
        let s = &prog.stmts[i];
        inv[i] = seeds.contains(&i)
            || match prog.load_of(i) {
                Some((_, _, map)) => map.iter().all(|m| m.is_none_or(|d| d < lead)),
                None => {
                    s.constant.is_some() || (!s.deps.is_empty() && s.deps.iter().all(|&d| inv[d]))
                }
            };
    }
    inv
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
    (nodes, outputs): (&[NodeId], &[ValueId]),
    config: Option<LaunchConfig>,
    order: Option<&[usize]>,
    tap_norm: Option<TapNorm>,
) -> Option<TritonKernel> {
    let main = *nodes.iter().find(|&&n| {
        matches!(
            g.node(n).op.kind().pooling(),
            Some((Pool::Max | Pool::Avg, _))
        )
    })?;
    let mn = g.node(main);
    let pos = nodes.iter().position(|&n| n == main)?;
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
    let ix = FlatIndex { lead };
    // the pooled input at a tap: loaded, or computed by the prologue
    let mut prologue: Vec<NodeId> = tap_norm.map(|t| t.nodes.to_vec()).unwrap_or_default();
    prologue.extend_from_slice(&nodes[..pos]);
    let (tap, seeds) = add_prologue(g, &mut prog, &prologue, x, &ix, tap_norm)?;
    let acc = prog.expr(Sp::Full, drtc_ir::DType::F32, "acc".into(), vec![]);
    prog.vars.insert((mn.outputs[0], Sp::Full), acc);
    add_epilogue(g, &mut prog, &nodes[pos..], main, &out_shape, &ix)?;
    let roots: Vec<usize> = outputs
        .iter()
        .map(|&v| prog.value(g, v, Sp::Full, vec![], &ix))
        .collect();
    let config = config.unwrap_or_else(|| window_config(numel));
    let read = prog.inputs.iter().map(|a| a.value);
    let wide = super::pointwise::needs_int64(g, outputs.iter().copied().chain(read));
    let mut body = String::new();
    let pid = if wide {
        "tl.program_id(0).to(tl.int64)"
    } else {
        "tl.program_id(0)"
    };
    writeln!(body, "    offs = {pid} * BLOCK + tl.arange(0, BLOCK)").unwrap();
    writeln!(body, "    mask = offs < {numel}").unwrap();
    let dim_order: Vec<usize> = match order {
        Some(o) if o.len() == rank => o.to_vec(),
        Some(_) => return None,
        None => (0..rank).collect(),
    };
    let names: Vec<String> = dim_order.iter().map(|d| format!("o{d}")).collect();
    let physical: Vec<i64> = dim_order.iter().map(|&d| out_shape[d]).collect();
    decompose(&mut body, "    ", "offs", &physical, &names);
    for (d, &s) in out_shape.iter().enumerate() {
        if s == 1 {
            // a tensor, not a Python int, so every index and mask below is a tensor
            writeln!(body, "    o{d} = offs * 0").unwrap();
        }
    }
    let invariant = tap_invariant(&prog, lead, &seeds);
    let tap_order = prog.closure(&[tap], &|i| invariant[i]);
    let hoisted = prog.closure(&[tap], &|_| false);
    let hoisted: Vec<usize> = hoisted.into_iter().filter(|&i| invariant[i]).collect();
    emit_stmts(&mut body, &prog, &hoisted, "    ");
    let ct = compute_ty(tx.dtype);
    if is_max {
        writeln!(body, "    acc = tl.full([BLOCK], float('-inf'), {ct})").unwrap();
    } else {
        writeln!(body, "    acc = tl.zeros([BLOCK], {ct})").unwrap();
    }
    let mut indent = String::from("    ");
    let mut valid = vec!["mask".to_string()];
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
    }
    let other = if is_max { "float('-inf')" } else { "0.0" };
    writeln!(body, "{indent}tap_mask = {}", valid.join(" & ")).unwrap();
    emit_stmts(&mut body, &prog, &tap_order, &indent);
    writeln!(
        body,
        "{indent}v = tl.where(tap_mask, {}.to({ct}), {other})",
        prog.var(tap)
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
    for (k, (&v, &r)) in outputs.iter().zip(&roots).enumerate() {
        body.push_str(&store_line(g, &prog, (k, v, r), "offs", "[BLOCK]", "mask"));
    }
    let (extra, scratch_args) = match tap_norm {
        Some(t) => {
            let (mean, var) = super::reduction::batch_stats_names(t.norm);
            (STATS_PARAMS.map(String::from).to_vec(), vec![mean, var])
        }
        None => (vec![], vec![]),
    };
    let listed: Vec<NodeId> = prologue.iter().chain(&nodes[pos..]).copied().collect();
    let head = (outputs.len(), &extra[..], &["BLOCK"][..]);
    let mut source = kernel_head(g, name, &prog, head, &listed, &[], &dim_order);
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
        scratch_args,
        operand_prep: vec![],
    })
}

/// The pooled input `x` at a tap, in space `Tap`: computed by the `prologue` nodes
/// (pointwise, over `x`'s shape, or `norm` from its statistics) from loads
/// at the tap's index, or loaded when there are none. Also the statistics' statements.
fn add_prologue(
    g: &Graph,
    prog: &mut Program,
    prologue: &[NodeId],
    x: ValueId,
    ix: &FlatIndex,
    norm: Option<TapNorm>,
) -> Option<(usize, Vec<usize>)> {
    let shape = &g.ty(x).shape;
    let identity: Vec<usize> = (0..shape.len()).collect();
    let mut seeds = vec![];
    for &n in prologue {
        if drtc_passes::fuse::is_inlined_constant(g, n) {
            continue;
        }
        let node = g.node(n);
        let out_shape = &g.ty(node.outputs[0]).shape;
        if out_shape != shape {
            return None;
        }
        if norm.is_some_and(|t| t.norm == n) {
            let (y, stats) = apply_norm(g, prog, n, (ix, ix.lead))?;
            prog.vars.insert((node.outputs[0], Sp::Tap), y);
            seeds.extend(stats);
            continue;
        }
        let args: Vec<usize> = node
            .inputs
            .iter()
            .map(|&v| prog.value(g, v, Sp::Tap, align(&g.ty(v).shape, shape, &identity), ix))
            .collect();
        prog.pointwise(g, n, Sp::Tap, args)?;
    }
    let tap = prog.value(g, x, Sp::Tap, align(shape, shape, &identity), ix);
    Some((tap, seeds))
}
