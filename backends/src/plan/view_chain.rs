//! Chains of views written by their producer: a kernel output that only a chain of
//! reshapes and permutations reads, which PyTorch would materialize with a copy (a reshape
//! after a permutation merges dims no stride can describe: a channel shuffle,
//! `reshape(transpose(reshape(x, [n, g, c / g, h, w]), 1, 2), [n, c, h, w])`), is stored by
//! its kernel directly at each element's place in the chain's contiguous result
//! (`triton/store_map.rs`); the chain's views are not emitted. One pass over the tensor
//! fewer, whatever reads the result (a library call included).

use super::concat::{honored, Placement, MAX_ELEMENTS};
use super::region_plan::RegionPlan;
use crate::layout::LayoutPlan;
use crate::triton::{StoreMap, ViewStep};
use drtc_ir::{Attr, Graph, NodeId, Op, ValueId};
use drtc_passes::fuse::{FusionPlan, RegionKind};

/// A kernel output stored into the result of the chain of views that reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewWrite {
    /// The output, of kernel region `producer`.
    pub value: ValueId,
    pub producer: usize,
    /// The chain's result (a contiguous tensor the host allocates), its view nodes in
    /// order, and their steps.
    pub result: ValueId,
    pub nodes: Vec<NodeId>,
    pub steps: Vec<ViewStep>,
}

/// The view step of node `n`, when it is a bijective view (a reshape of any spelling or a
/// permutation).
fn view_step(g: &Graph, n: NodeId) -> Option<ViewStep> {
    let node = g.node(n);
    let rank = g.ty(node.inputs[0]).rank() as i64;
    let norm = |d: i64| (rank > 0).then(|| d.rem_euclid(rank) as usize);
    match node.op {
        Op::Reshape | Op::Flatten | Op::Squeeze | Op::Unsqueeze => {
            Some(ViewStep::Reshape(g.ty(node.outputs[0]).shape.clone()))
        }
        Op::Transpose => {
            let a = norm(node.attrs.get("dim0")?.as_int()?)?;
            let b = norm(node.attrs.get("dim1")?.as_int()?)?;
            let mut perm: Vec<usize> = (0..rank as usize).collect();
            perm.swap(a, b);
            Some(ViewStep::Permute(perm))
        }
        Op::Permute => {
            let dims = node.attrs.get("dims").and_then(Attr::as_ints)?;
            let perm: Option<Vec<usize>> = dims.iter().map(|&d| norm(d)).collect();
            Some(ViewStep::Permute(perm?))
        }
        _ => None,
    }
}

/// Whether the steps make PyTorch copy: a reshape after a permutation that moves a dim of
/// size other than 1 (a conservative test: some such reshapes are views, and then the
/// write only makes the result contiguous, at no extra cost).
fn materializes(steps: &[ViewStep], domain: &[i64]) -> bool {
    let mut shape = domain.to_vec();
    let mut permuted = false;
    for s in steps {
        match s {
            ViewStep::Permute(p) => {
                // the dims of size other than 1 change their relative order
                let order: Vec<usize> = p.iter().copied().filter(|&d| shape[d] != 1).collect();
                permuted |= order.windows(2).any(|w| w[0] > w[1]);
                shape = p.iter().map(|&d| shape[d]).collect();
            }
            ViewStep::Reshape(to) => {
                if permuted {
                    return true;
                }
                shape = to.clone();
            }
        }
    }
    false
}

/// The view writes of `plan`: every output of a pointwise or reduction template region,
/// or of a convolution region (its template's kernel, `concat::honored`), (not
/// channels-last, not placed in a concatenation) that one chain of views alone reads,
/// where the chain materializes, and that the template stores through the chain (its
/// answer).
pub(super) fn view_writes(
    g: &Graph,
    fusion: &FusionPlan,
    (regions, layout): (&[RegionPlan], &LayoutPlan),
    placements: &[Placement],
) -> Vec<ViewWrite> {
    let uses = g.use_counts();
    let sole = |v: ValueId| uses[v.index()] == 1 && !g.outputs().contains(&v);
    let mut out = vec![];
    for (p, r) in fusion.regions.iter().enumerate() {
        let conv = r.kind == RegionKind::Library && regions[p].implementation.conv().is_some();
        if !matches!(r.kind, RegionKind::Pointwise | RegionKind::Reduction) && !conv {
            continue;
        }
        for &v in &r.outputs {
            if !sole(v)
                || layout.values.contains(&v)
                || placements.iter().any(|q| q.value == v)
                || g.ty(v).numel() >= MAX_ELEMENTS
            {
                continue;
            }
            let (mut cur, mut nodes, mut steps) = (v, vec![], vec![]);
            while cur == v || sole(cur) {
                let [u] = g.users(cur)[..] else { break };
                let Some(step) = view_step(g, u) else { break };
                nodes.push(u);
                steps.push(step);
                cur = g.node(u).outputs[0];
            }
            if !materializes(&steps, &g.ty(v).shape) {
                continue;
            }
            let map = StoreMap::Views(steps.clone());
            if honored(g, fusion, (regions, layout), (p, v), map) {
                out.push(ViewWrite {
                    value: v,
                    producer: p,
                    result: cur,
                    nodes,
                    steps,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shuffle_materializes_and_a_lone_permutation_does_not() {
        let shuffle = [
            ViewStep::Reshape(vec![2, 3, 4, 5, 5]),
            ViewStep::Permute(vec![0, 2, 1, 3, 4]),
            ViewStep::Reshape(vec![2, 12, 5, 5]),
        ];
        assert!(materializes(&shuffle, &[2, 12, 5, 5]));
        assert!(!materializes(&shuffle[..2], &[2, 12, 5, 5]));
        // moving only a unit dim is a view
        let unit = [ViewStep::Permute(vec![1, 0, 2]), ViewStep::Reshape(vec![6])];
        assert!(!materializes(&unit, &[1, 2, 3]));
    }
}
