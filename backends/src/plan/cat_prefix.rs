//! Concatenations that extend one another: where one `cat`'s operands are the first
//! operands of a later `cat` along the same dim (a dense block: `features.append(new);
//! x = torch.cat(features, 1)`, each concatenation all the earlier ones and one more), the
//! earlier result is the first slice of the later one. The last concatenation of the chain
//! is allocated when the first one is reached, each operand is copied into its slice of it
//! once, and every earlier concatenation is a view of its first slice: a chain of L
//! concatenations copies each operand once instead of once per concatenation that holds
//! it (L (L + 1) / 2 operand copies).
//!
//! Decided here, once, and read by the stitcher (`in_place.rs`: the allocation, the
//! copies made so far, the views).

use super::concat::{operand_slices, result_channels_last, MAX_ELEMENTS};
use crate::layout::LayoutPlan;
use drtc_ir::{Graph, NodeId, Op, ValueId};
use drtc_passes::fuse::{FusionPlan, RegionKind};

/// A concatenation computed as the first slice of a later one's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatPrefix {
    /// The concatenation and its region.
    pub node: NodeId,
    pub region: usize,
    /// The last concatenation of its chain: its result holds every operand.
    pub whole: ValueId,
    pub whole_region: usize,
    /// The dim both join along and the prefix's length there.
    pub dim: usize,
    pub len: i64,
    /// The whole result is allocated channels-last (the rule of `concat.rs`).
    pub channels_last: bool,
}

/// One concatenation of the program: its region, node, result, dim and operands.
struct Cat {
    region: usize,
    node: NodeId,
    result: ValueId,
    dim: usize,
    inputs: Vec<ValueId>,
}

/// The concatenations of `fusion` that are the first slice of a later one's result: for
/// each, the concatenation with the most operands that starts with all of its operands,
/// along the same dim, later in the program. A concatenation whose result is a program
/// output stays a tensor of its own (outputs never alias each other).
pub(super) fn cat_prefixes(g: &Graph, fusion: &FusionPlan, layout: &LayoutPlan) -> Vec<CatPrefix> {
    let cats: Vec<Cat> = (fusion.regions.iter().enumerate())
        .filter_map(|(region, r)| {
            let [node] = r.nodes[..] else { return None };
            let n = g.node(node);
            let result = n.outputs[0];
            let ty = g.ty(result);
            let fits = ty.rank() > 0 && ty.numel() < MAX_ELEMENTS;
            (r.kind == RegionKind::Fallback && n.op == Op::Cat && fits).then(|| Cat {
                region,
                node,
                result,
                dim: operand_slices(g, node).0,
                inputs: n.inputs.clone(),
            })
        })
        .collect();
    let mut out = vec![];
    for a in &cats {
        if g.outputs().contains(&a.result) {
            continue;
        }
        let whole = (cats.iter())
            .filter(|b| {
                b.region > a.region
                    && b.dim == a.dim
                    && b.inputs.len() > a.inputs.len()
                    && b.inputs.starts_with(&a.inputs)
                    && g.ty(b.result).dtype == g.ty(a.result).dtype
            })
            .max_by_key(|b| (b.inputs.len(), std::cmp::Reverse(b.region)));
        if let Some(b) = whole {
            out.push(CatPrefix {
                node: a.node,
                region: a.region,
                whole: b.result,
                whole_region: b.region,
                dim: a.dim,
                len: g.ty(a.result).shape[a.dim],
                channels_last: result_channels_last(g, fusion, layout, b.node),
            });
        }
    }
    out
}
