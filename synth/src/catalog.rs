//! Which ops the synthesizer can place, and the shape family each belongs to. The family
//! decides the rank rules (`structure.rs`) and the CP-SAT encoding (`csp.rs`).
//!
//! List A is the DRTriton generator's operator set (ops.md); list B adds the KernelBench
//! ops that make sense in random programs (ops whose random inputs would give NaN, such as
//! `log` or `sqrt`, are left out).

use drtc_ir::{Arity, Kind, Op, Pool};

/// The shape family of an op: how its output shape follows from its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Elementwise, one input, same shape.
    Unary,
    /// Elementwise over `n` broadcasting inputs.
    Broadcast(usize),
    /// `torch.matmul` of two operands of rank >= 2 with broadcast batch dims.
    Matmul,
    /// `torch.bmm` of two rank-3 operands.
    Bmm,
    /// Reduction over one dim with `keepdim`; `min_size` is the least size of that dim
    /// (2 for var/std, whose unbiased estimate divides by n - 1).
    Reduce {
        min_size: i64,
    },
    /// Same shape, computed along one dim (softmax, cumsum).
    AlongDim,
    /// `transpose(-2, -1)`.
    Transpose,
    /// triu / tril.
    Triangle,
    /// cat of two tensors along a dim.
    Cat,
    /// stack of two tensors at a new dim.
    Stack,
    BatchNorm,
    LayerNorm,
    GroupNorm,
    InstanceNorm,
    RmsNorm,
    /// max or avg pooling over `n` spatial dims.
    Pool {
        n: usize,
        max: bool,
    },
    /// adaptive average pooling over `n` spatial dims.
    AdaptivePool {
        n: usize,
    },
    /// convolution over `n` spatial dims.
    Conv {
        n: usize,
        transposed: bool,
    },
    /// `F.linear(x, w, b)`.
    Linear,
    /// A loss of two same-shaped tensors, reduced to a scalar.
    Loss,
    Flatten,
    Unsqueeze,
    Permute,
    Flip,
}

/// The DRTriton generator's operators (ops.md, list A): 61 ops.
pub const LIST_A: &[Op] = &[
    Op::Add,
    Op::Sub,
    Op::Mul,
    Op::Div,
    Op::Maximum,
    Op::Minimum,
    Op::Lerp,
    Op::Matmul,
    Op::Bmm,
    Op::Sum,
    Op::Mean,
    Op::Max,
    Op::Min,
    Op::Argmax,
    Op::Argmin,
    Op::Var,
    Op::Norm,
    Op::Transpose,
    Op::Relu,
    Op::LeakyRelu,
    Op::Sigmoid,
    Op::Tanh,
    Op::Silu,
    Op::Gelu,
    Op::Selu,
    Op::Hardsigmoid,
    Op::Softplus,
    Op::Softsign,
    Op::Elu,
    Op::Hardtanh,
    Op::Clamp,
    Op::Logsigmoid,
    Op::Abs,
    Op::Cos,
    Op::Sin,
    Op::Exp2,
    Op::Softmax,
    Op::LogSoftmax,
    Op::Cumsum,
    Op::Cummax,
    Op::Cummin,
    Op::BatchNorm,
    Op::LayerNorm,
    Op::GroupNorm,
    Op::InstanceNorm,
    Op::AvgPool1d,
    Op::AvgPool2d,
    Op::AvgPool3d,
    Op::MaxPool1d,
    Op::MaxPool2d,
    Op::MaxPool3d,
    Op::Conv1d,
    Op::Conv2d,
    Op::Conv3d,
    Op::ConvTranspose1d,
    Op::ConvTranspose2d,
    Op::ConvTranspose3d,
    Op::Triu,
    Op::Tril,
    Op::Cat,
    Op::Stack,
];

/// KernelBench additions that random programs can use (ops.md, list B, in part).
pub const LIST_B: &[Op] = &[
    Op::Mish,
    Op::Hardswish,
    Op::Exp,
    Op::Neg,
    Op::Sign,
    Op::Erf,
    Op::Logsumexp,
    Op::Std,
    Op::Linear,
    Op::RmsNorm,
    Op::AdaptiveAvgPool1d,
    Op::AdaptiveAvgPool2d,
    Op::AdaptiveAvgPool3d,
    Op::MseLoss,
    Op::SmoothL1Loss,
    Op::Flatten,
    Op::Unsqueeze,
    Op::Permute,
    Op::Flip,
];

/// The family of `op`, or `None` when the synthesizer does not place it.
pub fn family(op: Op) -> Option<Family> {
    use Family as F;
    if op.pointwise().is_some() {
        // a pointwise op is placed when a list names it, its family by its arity (ops whose
        // random inputs give NaN, casts, randomness and boolean results are left out)
        if !LIST_A.contains(&op) && !LIST_B.contains(&op) {
            return None;
        }
        return match op.def().arity {
            Arity::Exact(1) => Some(F::Unary),
            Arity::Exact(n) => Some(F::Broadcast(n)),
            Arity::Range(..) | Arity::AtLeast(_) => None,
        };
    }
    match op.kind() {
        Kind::Window(pool, n) => {
            return Some(match pool {
                Pool::Max => F::Pool { n, max: true },
                Pool::Avg => F::Pool { n, max: false },
                Pool::AdaptiveAvg => F::AdaptivePool { n },
            })
        }
        Kind::Conv { rank, transposed } => {
            return Some(F::Conv {
                n: rank,
                transposed,
            })
        }
        Kind::Creation
        | Kind::Pointwise
        | Kind::Reduce
        | Kind::Scan
        | Kind::Loss
        | Kind::Norm
        | Kind::Product
        | Kind::Composite
        | Kind::Opaque
        | Kind::View
        | Kind::Copy => {}
    }
    Some(match op {
        Op::Matmul => F::Matmul,
        Op::Bmm => F::Bmm,
        Op::Sum
        | Op::Mean
        | Op::Max
        | Op::Min
        | Op::Argmax
        | Op::Argmin
        | Op::Norm
        | Op::Logsumexp => F::Reduce { min_size: 1 },
        Op::Var | Op::Std => F::Reduce { min_size: 2 },
        Op::Transpose => F::Transpose,
        Op::Softmax | Op::LogSoftmax | Op::Cumsum | Op::Cummax | Op::Cummin => F::AlongDim,
        Op::BatchNorm => F::BatchNorm,
        Op::LayerNorm => F::LayerNorm,
        Op::GroupNorm => F::GroupNorm,
        Op::InstanceNorm => F::InstanceNorm,
        Op::RmsNorm => F::RmsNorm,
        Op::Triu | Op::Tril => F::Triangle,
        Op::Cat => F::Cat,
        Op::Stack => F::Stack,
        Op::Linear => F::Linear,
        Op::MseLoss | Op::SmoothL1Loss => F::Loss,
        Op::Flatten => F::Flatten,
        Op::Unsqueeze => F::Unsqueeze,
        Op::Permute => F::Permute,
        Op::Flip => F::Flip,
        // not placed: creation; ops whose random inputs give NaN or overflow (prod,
        // cumprod); losses and contractions over inputs of special forms; views and pads
        // needing chosen shapes
        Op::Full
        | Op::Arange
        | Op::Prod
        | Op::Cumprod
        | Op::KlDiv
        | Op::CrossEntropy
        | Op::TripletMarginLoss
        | Op::Einsum
        | Op::Attention
        | Op::Reshape
        | Op::Squeeze
        | Op::Expand
        | Op::Narrow
        | Op::Slice
        | Op::Select
        | Op::Diag
        | Op::Pad
        // opaque ATen calls come from the export frontend only
        | Op::Aten => return None,
        // every other op is pointwise, a window or a convolution, placed above
        _ => unreachable!("`{op}`'s family follows from its arity or kind"),
    })
}

/// An inclusive range of ranks.
pub type RankRange = (usize, usize);

impl Family {
    /// How many inputs the op takes from the program's tensors (weights are extra, fresh).
    pub fn data_arity(self) -> usize {
        match self {
            Family::Broadcast(n) => n,
            Family::Matmul | Family::Bmm | Family::Cat | Family::Stack | Family::Loss => 2,
            _ => 1,
        }
    }

    /// The ranks input `slot` accepts, given the ranks of the earlier slots; `max` is the
    /// largest rank allowed anywhere.
    pub fn slot_ranks(self, slot: usize, earlier: &[usize], max: usize) -> RankRange {
        use Family as F;
        match self {
            F::Unary | F::Broadcast(_) => (0, max),
            F::Matmul => (2, max),
            F::Bmm => (3, 3),
            F::Reduce { .. } | F::AlongDim | F::LayerNorm | F::RmsNorm | F::Linear | F::Flip => {
                (1, max)
            }
            F::Transpose | F::Triangle => (2, max),
            F::Cat | F::Loss if slot > 0 => (earlier[0], earlier[0]),
            F::Cat | F::Loss => (1, max),
            F::Stack if slot > 0 => (earlier[0], earlier[0]),
            F::Stack => (0, max - 1),
            F::BatchNorm | F::GroupNorm => (2, max),
            F::InstanceNorm => (3, max.min(5)),
            F::Pool { n, .. } | F::AdaptivePool { n } | F::Conv { n, .. } => (n + 2, n + 2),
            F::Flatten => (2, max),
            F::Unsqueeze => (0, max - 1),
            F::Permute => (2, max),
        }
    }
}
