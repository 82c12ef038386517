//! The kind of region each single node starts in, and the reduction space of reductions.

use super::support::supports;
use super::RegionKind;
use drtc_ir::{Attr, Graph, NodeId, Op, Shape};

/// Whether `node` is a constant that regions copy in rather than read from memory.
pub fn is_inlined_constant(g: &Graph, node: NodeId) -> bool {
    let n = g.node(node);
    n.op == Op::Full && g.ty(n.outputs[0]).rank() == 0
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
        Op::Softmax | Op::LogSoftmax => {
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
        // no reduction space
        Op::Full
        | Op::Cast
        | Op::Dropout
        | Op::Add
        | Op::Sub
        | Op::Mul
        | Op::Div
        | Op::Maximum
        | Op::Minimum
        | Op::Pow
        | Op::Lerp
        | Op::Eq
        | Op::Ne
        | Op::Lt
        | Op::Le
        | Op::Gt
        | Op::Ge
        | Op::Where
        | Op::Relu
        | Op::LeakyRelu
        | Op::Sigmoid
        | Op::Tanh
        | Op::Silu
        | Op::Gelu
        | Op::Selu
        | Op::Hardsigmoid
        | Op::Hardswish
        | Op::Softplus
        | Op::Softsign
        | Op::Elu
        | Op::Hardtanh
        | Op::Clamp
        | Op::Logsigmoid
        | Op::Mish
        | Op::Abs
        | Op::Neg
        | Op::Sign
        | Op::Cos
        | Op::Sin
        | Op::Exp
        | Op::Exp2
        | Op::Log
        | Op::Sqrt
        | Op::Rsqrt
        | Op::Erf
        | Op::Reciprocal
        | Op::Aten
        | Op::Cumsum
        | Op::Cumprod
        | Op::Cummax
        | Op::Cummin
        | Op::MseLoss
        | Op::SmoothL1Loss
        | Op::KlDiv
        | Op::CrossEntropy
        | Op::TripletMarginLoss
        | Op::Matmul
        | Op::Bmm
        | Op::Linear
        | Op::Einsum
        | Op::Attention
        | Op::Conv1d
        | Op::Conv2d
        | Op::Conv3d
        | Op::ConvTranspose1d
        | Op::ConvTranspose2d
        | Op::ConvTranspose3d
        | Op::MaxPool1d
        | Op::MaxPool2d
        | Op::MaxPool3d
        | Op::AvgPool1d
        | Op::AvgPool2d
        | Op::AvgPool3d
        | Op::Transpose
        | Op::Permute
        | Op::Reshape
        | Op::Flatten
        | Op::Squeeze
        | Op::Unsqueeze
        | Op::Expand
        | Op::Narrow
        | Op::Slice
        | Op::Select
        | Op::Flip
        | Op::Diag
        | Op::Triu
        | Op::Tril
        | Op::Cat
        | Op::Stack => return None,
    }
    Some(ReduceSpace {
        domain: x.shape.clone(),
        reduced,
        groups,
    })
}
