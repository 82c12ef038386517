//! The pointwise template: one flat iteration space, broadcasting loads, fused chains.
//!
//! Heuristic: BLOCK = 1024 elements per program (4 warps), or the next power of two of
//! the element count when smaller; the index math uses int64 when any tensor has more
//! than 2^31 - 1 elements.

use super::kernel::{
    decompose, emit_stmts, kernel_head, placement, LaunchConfig, Placements, TritonKernel,
};
use super::statements::{align, IndexSource, Program, Sp};
use super::ty::{next_pow2, storage_ty};
use drtc_ir::{Graph, NodeId, Op, ValueId};
use std::fmt::Write;

struct FlatIndex;

impl IndexSource for FlatIndex {
    fn dim_index(&self, _: Sp, d: usize) -> String {
        format!("i{d}")
    }
    fn mask(&self, _: Sp) -> String {
        "mask".into()
    }
}

/// The heuristic launch configuration for `n` elements.
pub fn pointwise_config(n: u64) -> LaunchConfig {
    let block = next_pow2(n).clamp(16, 1024);
    LaunchConfig {
        blocks: vec![("BLOCK", block)],
        num_warps: if block >= 512 { 4 } else { 2 },
        num_stages: 1,
    }
}

/// Other reasonable configurations, for search.
pub fn pointwise_variants(n: u64) -> Vec<LaunchConfig> {
    [256u64, 512, 1024, 2048, 4096]
        .iter()
        .filter(|&&b| b <= next_pow2(n).max(256))
        .map(|&b| LaunchConfig {
            blocks: vec![("BLOCK", b)],
            num_warps: if b >= 2048 { 8 } else { 4 },
            num_stages: 1,
        })
        .collect()
}

pub(crate) fn needs_int64(g: &Graph, values: impl IntoIterator<Item = ValueId>) -> bool {
    values
        .into_iter()
        .any(|v| g.ty(v).numel() >= (1u64 << 31) - 1)
}

/// Generates the kernel of a pointwise region writing `outputs` over `domain`.
pub fn pointwise_kernel(
    g: &Graph,
    name: &str,
    nodes: &[NodeId],
    outputs: &[ValueId],
    domain: &[i64],
    config: Option<LaunchConfig>,
) -> Option<TritonKernel> {
    let identity: Vec<usize> = (0..domain.len()).collect();
    pointwise_kernel_in_order(g, name, (nodes, outputs), domain, config, &identity, &[])
}

/// [`pointwise_kernel`] whose flat offset walks the domain dims in `order` (outermost
/// first, a permutation of the dims): the outputs are dense in that order (allocated so by
/// the host, e.g. channels-last for `[0, 2, 3, 1]`), and inputs are read through their
/// strides at each dim's logical index. `placed`: outputs written into a slice of a larger
/// tensor ([`Placements`]).
pub fn pointwise_kernel_in_order(
    g: &Graph,
    name: &str,
    (nodes, outputs): (&[NodeId], &[ValueId]),
    domain: &[i64],
    config: Option<LaunchConfig>,
    order: &[usize],
    placed: &Placements,
) -> Option<TritonKernel> {
    let rank = domain.len();
    let mut sorted = order.to_vec();
    sorted.sort_unstable();
    if sorted != (0..rank).collect::<Vec<_>>() {
        return None;
    }
    let numel: u64 = domain.iter().map(|&d| d as u64).product();
    let mut prog = Program::new();
    let ix = FlatIndex;
    for &n in nodes {
        let node = g.node(n);
        if drtc_passes::fuse::is_inlined_constant(g, n) {
            continue;
        }
        let out_shape = &g.ty(node.outputs[0]).shape;
        let use_dims: Vec<usize> = (0..out_shape.len())
            .map(|j| rank - out_shape.len() + j)
            .collect();
        if node.op == Op::Pad {
            prog.pad(g, n, Sp::Full, &use_dims, &ix)?;
            continue;
        }
        if matches!(node.op, Op::Tril | Op::Triu) {
            let x = node.inputs[0];
            let arg = prog.value(
                g,
                x,
                Sp::Full,
                align(&g.ty(x).shape, out_shape, &use_dims),
                &ix,
            );
            prog.triangle(g, n, Sp::Full, arg, &use_dims, &ix)?;
            continue;
        }
        let args: Vec<usize> = node
            .inputs
            .iter()
            .map(|&v| {
                prog.value(
                    g,
                    v,
                    Sp::Full,
                    align(&g.ty(v).shape, out_shape, &use_dims),
                    &ix,
                )
            })
            .collect();
        prog.pointwise(g, n, Sp::Full, args)?;
    }
    let mut roots = vec![];
    for &v in outputs {
        let i = prog.value(g, v, Sp::Full, vec![], &ix);
        roots.push(i);
    }
    let config = config.unwrap_or_else(|| pointwise_config(numel));
    let wide = needs_int64(
        g,
        outputs
            .iter()
            .copied()
            .chain(prog.inputs.iter().map(|a| a.value)),
    );
    let mut body = String::new();
    let pid = if wide {
        "tl.program_id(0).to(tl.int64)"
    } else {
        "tl.program_id(0)"
    };
    writeln!(body, "    offs = {pid} * BLOCK + tl.arange(0, BLOCK)").unwrap();
    writeln!(body, "    mask = offs < {numel}").unwrap();
    let names: Vec<String> = order.iter().map(|d| format!("i{d}")).collect();
    let physical: Vec<i64> = order.iter().map(|&d| domain[d]).collect();
    decompose(&mut body, "    ", "offs", &physical, &names);
    let stmts = prog.closure(&roots, &|_| false);
    emit_stmts(&mut body, &prog, &stmts, "    ");
    for (k, (&v, &r)) in outputs.iter().zip(&roots).enumerate() {
        let st = storage_ty(g.ty(v).dtype);
        let val = if prog.stmts[r].constant.is_some() {
            format!("tl.full([BLOCK], {}, {st})", prog.var(r))
        } else {
            format!("{}.to({st})", prog.var(r))
        };
        // an output stored elsewhere: a slice of a larger tensor, a chain of views' result
        let off = match placement(placed, k) {
            Some(map) => map.offset(domain, &|d| format!("i{d}")),
            None => "offs".to_string(),
        };
        writeln!(body, "    tl.store(out{k} + {off}, {val}, mask=mask)").unwrap();
    }
    let mut source = kernel_head(
        g,
        name,
        &prog,
        (outputs.len(), &[], &["BLOCK"]),
        nodes,
        &[],
        order,
    );
    source.push_str(&body);
    let grid = vec![numel.div_ceil(config.block("BLOCK")).max(1)];
    Some(TritonKernel {
        name: name.to_string(),
        source,
        inputs: prog.inputs,
        outputs: outputs.to_vec(),
        grid,
        grid_expr: None,
        config,
        extra_args: vec![],
        scratch_args: vec![],
        operand_prep: vec![],
        phase_launches: None,
    })
}
