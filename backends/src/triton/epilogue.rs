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

/// Lines at `ind` storing a tile's column moments for a later region's batch statistics
/// (`gemm_moments.rs`): each column's sum and squared deviations around the tile's own
/// mean, over the valid rows of tile value `t` (`mask`; tile `pm` of BLOCK_M rows, of
/// `m`), at `ws` / `wm` + column * `chunks` + `pm`. `cols` is the tile's column indices as
/// a `[1, BLOCK_N]` vector, `cols_mask` which exist.
pub fn tile_moments(
    out: &mut String,
    ind: &str,
    (t, m): (&str, u64),
    (cols, cols_mask): (&str, &str),
    chunks: u64,
    (ws, wm): (&str, &str),
) {
    let lines = [
        "# the tile's column moments, for the batch statistics of a later region".to_string(),
        format!("tv = tl.where(mask, {t}, 0.0)"),
        format!("tn = tl.maximum(tl.minimum({m} - pm * BLOCK_M, BLOCK_M), 1).to(tl.float32)"),
        "tsum = tl.sum(tv, axis=0)[None, :]".to_string(),
        format!("tdev = tl.where(mask, {t} - tsum / tn, 0.0)"),
        "tm2 = tl.sum(tdev * tdev, axis=0)[None, :]".to_string(),
        format!("tl.store({ws} + {cols} * {chunks} + pm, tsum, mask={cols_mask})"),
        format!("tl.store({wm} + {cols} * {chunks} + pm, tm2, mask={cols_mask})"),
    ];
    for l in lines {
        out.push_str(ind);
        out.push_str(&l);
        out.push('\n');
    }
}
