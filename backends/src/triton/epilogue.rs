//! Pointwise epilogues of contraction and window kernels: ops applied to the main
//! result before it is stored, over the output's own index.

use super::statements::{align, IndexSource, Program, Sp};
use drtc_ir::{DType, Graph, NodeId, ValueId};

/// Adds the epilogue nodes (every node of the region but `main` and inlined constants)
/// to `prog`, reading in-region values and loading others over `domain`.
pub fn add_epilogue(
    g: &Graph,
    prog: &mut Program,
    nodes: &[NodeId],
    main: NodeId,
    domain: &[i64],
    ix: &dyn IndexSource,
) -> Option<()> {
    let identity: Vec<usize> = (0..domain.len()).collect();
    for &n in nodes {
        let node = g.node(n);
        if n == main || drtc_passes::fuse::is_inlined_constant(g, n) {
            continue;
        }
        let out_shape = &g.ty(node.outputs[0]).shape;
        let args: Vec<usize> = node
            .inputs
            .iter()
            .map(|&v| {
                prog.value(
                    g,
                    v,
                    Sp::Full,
                    align(&g.ty(v).shape, out_shape, &identity),
                    ix,
                )
            })
            .collect();
        prog.pointwise(g, n, Sp::Full, args)?;
    }
    Some(())
}

/// `acc + bias` in fp32, the bias a vector along output dim `dim` (broadcast when it has
/// one element): a linear's or a convolution's own bias.
pub fn add_bias(
    g: &Graph,
    prog: &mut Program,
    acc: usize,
    bias: ValueId,
    dim: usize,
    ix: &dyn IndexSource,
) -> usize {
    let map = vec![(g.ty(bias).shape[0] != 1).then_some(dim)];
    let bv = prog.value(g, bias, Sp::Full, map, ix);
    prog.expr(
        Sp::Full,
        DType::F32,
        format!("t{acc} + t{bv}"),
        vec![acc, bv],
    )
}

/// The contiguous offset expression of an output of shape `domain` with per-dim indices.
pub fn contiguous_offset(domain: &[i64], index: &dyn Fn(usize) -> String) -> String {
    let mut stride = 1i64;
    let mut terms = vec![];
    for d in (0..domain.len()).rev() {
        if domain[d] != 1 {
            terms.push(format!("{} * {stride}", index(d)));
        }
        stride *= domain[d];
    }
    if terms.is_empty() {
        "0".into()
    } else {
        terms.join(" + ")
    }
}
