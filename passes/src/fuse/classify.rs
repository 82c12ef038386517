//! The kind of region each single node starts in, and the reduction space of reductions.

use super::support::supports;
use super::RegionKind;
use drtc_ir::{Attr, Graph, Kind, NodeId, Op, Pool, Shape};

/// Whether `node` is a constant that regions compute in place rather than read from
/// memory: a scalar (a literal), or an `arange` (the index of the dim it runs along).
pub fn is_inlined_constant(g: &Graph, node: NodeId) -> bool {
    let n = g.node(node);
    (n.op == Op::Full && g.ty(n.outputs[0]).rank() == 0) || n.op == Op::Arange
}

/// The region kind a node starts in: the templates' answer for it ([`supports`]).
pub fn classify(g: &Graph, node: NodeId) -> RegionKind {
    supports(g, node).region_kind()
}

/// The iteration space of a reduction: a domain shape whose `reduced` dims are reduced
/// ("columns"); the others index "rows". `groups` splits one dim into (groups, rest) with
/// the group part a row dim and the rest a column dim (group_norm).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ReduceSpace {
    pub domain: Shape,
    pub reduced: Vec<bool>,
    pub groups: Option<(usize, i64)>,
}

impl ReduceSpace {
    /// The shape of a per-row value with `keepdim` (reduced dims set to 1).
    pub fn keepdim_shape(&self) -> Shape {
        self.domain
            .iter()
            .zip(&self.reduced)
            .map(|(&d, &r)| if r { 1 } else { d })
            .collect()
    }

    /// The shape of a per-row value without `keepdim`.
    pub fn dropped_shape(&self) -> Shape {
        self.domain
            .iter()
            .zip(&self.reduced)
            .filter(|(_, &r)| !r)
            .map(|(&d, _)| d)
            .collect()
    }
}

fn norm_dim(d: i64, rank: usize) -> usize {
    if d < 0 {
        (d + rank as i64).max(0) as usize
    } else {
        d as usize
    }
}

/// The reduction space of a node that starts a reduction region.
pub fn reduce_space(g: &Graph, node: NodeId) -> Option<ReduceSpace> {
    let n = g.node(node);
    let x = g.ty(*n.inputs.first()?);
    let rank = x.rank();
    let mut reduced = vec![false; rank];
    let mut groups = None;
    let ints = |k: &str| n.attrs.get(k).and_then(Attr::as_ints).map(<[i64]>::to_vec);
    match n.op.kind() {
        Kind::Reduce | Kind::Norm | Kind::Scan | Kind::Window(Pool::AdaptiveAvg, _) => {}
        Kind::Creation
        | Kind::Pointwise
        | Kind::Loss
        | Kind::Window(Pool::Max | Pool::Avg, _)
        | Kind::Product
        | Kind::Composite
        | Kind::Conv { .. }
        | Kind::Opaque
        | Kind::View
        | Kind::Copy => return None,
    }
    match n.op {
        Op::Sum
        | Op::Mean
        | Op::Max
        | Op::Min
        | Op::Prod
        | Op::Var
        | Op::Std
        | Op::Norm
        | Op::Logsumexp => match ints("dim") {
            Some(ds) => ds.iter().for_each(|&d| reduced[norm_dim(d, rank)] = true),
            None => reduced.iter_mut().for_each(|r| *r = true),
        },
        // the other reductions need a dim to reduce
        _ if rank == 0 => return None,
        Op::Argmax | Op::Argmin => match n.attrs.get("dim").and_then(Attr::as_int) {
            Some(d) => reduced[norm_dim(d, rank)] = true,
            None => reduced.iter_mut().for_each(|r| *r = true),
        },
        // a scan's columns are the dim it runs along (its result keeps the domain's shape)
        Op::Softmax | Op::LogSoftmax | Op::Cumsum | Op::Cumprod => {
            reduced[norm_dim(n.attrs.get("dim")?.as_int()?, rank)] = true;
        }
        Op::BatchNorm => reduced
            .iter_mut()
            .enumerate()
            .for_each(|(i, r)| *r = i != 1),
        Op::InstanceNorm
        | Op::AdaptiveAvgPool1d
        | Op::AdaptiveAvgPool2d
        | Op::AdaptiveAvgPool3d => reduced
            .iter_mut()
            .enumerate()
            .for_each(|(i, r)| *r = i >= 2),
        Op::LayerNorm | Op::RmsNorm => {
            let k = ints("normalized_shape")?.len();
            reduced
                .iter_mut()
                .enumerate()
                .for_each(|(i, r)| *r = i + k >= rank);
        }
        Op::GroupNorm => {
            reduced
                .iter_mut()
                .enumerate()
                .for_each(|(i, r)| *r = i >= 2);
            groups = Some((1, n.attrs.get("num_groups")?.as_int()?));
        }
        // no reduction space: the kinds above are the only ones with one
        _ => return None,
    }
    Some(ReduceSpace {
        domain: x.shape.clone(),
        reduced,
        groups,
    })
}
