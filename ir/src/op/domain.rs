//! Domain facts: which values each op input may hold for the result to be finite.
//!
//! These are mathematical facts of the ops (PyTorch semantics), kept as data beside the op
//! table: a denominator must stay away from zero, a `log` argument must be positive, an
//! `exp` argument must be small enough not to overflow f32. `range/` checks a whole graph
//! against them; the synthesizer wires programs so that they hold.

use super::Op;

/// What one input of an op must satisfy for a finite result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Domain {
    /// Any finite value.
    Any,
    /// Bounded away from zero (a denominator, a reciprocal).
    NonZero,
    /// Strictly positive (log, rsqrt).
    Positive,
    /// Non-negative (sqrt).
    NonNegative,
    /// At most this value: larger arguments overflow (exp: 69, exp2: 99; see below).
    AtMost(f64),
    /// A power's base: positive unless the exponent is a small integer, and the result
    /// must stay finite (checked on the result's range).
    PowBase,
}

/// The largest `exp` argument whose result stays within the safe f32 magnitude of
/// `range::finite_limit` (1e30; ln 1e30 = 69.08), so that later sums cannot overflow.
pub const EXP_MAX_ARG: f64 = 69.0;
/// The same bound for `exp2` (log2 1e30 = 99.66).
pub const EXP2_MAX_ARG: f64 = 99.0;

impl Op {
    /// The domain of data input `slot` (0-based). Inputs not listed accept any finite value.
    pub fn domain(self, slot: usize) -> Domain {
        use Domain as D;
        match self {
            Op::Div => {
                if slot == 1 {
                    D::NonZero
                } else {
                    D::Any
                }
            }
            Op::Reciprocal => D::NonZero,
            Op::Log => D::Positive,
            Op::Rsqrt => D::Positive,
            Op::Sqrt => D::NonNegative,
            Op::Exp => D::AtMost(EXP_MAX_ARG),
            Op::Exp2 => D::AtMost(EXP2_MAX_ARG),
            Op::Pow => {
                if slot == 0 {
                    D::PowBase
                } else {
                    D::Any
                }
            }
            // kl_div takes log-probabilities first and probabilities second (log of target)
            Op::KlDiv => {
                if slot == 1 {
                    D::NonNegative
                } else {
                    D::Any
                }
            }
            Op::Full
            | Op::Cast
            | Op::Dropout
            | Op::Add
            | Op::Sub
            | Op::Mul
            | Op::Maximum
            | Op::Minimum
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
            | Op::Erf
            | Op::Sum
            | Op::Mean
            | Op::Prod
            | Op::Max
            | Op::Min
            | Op::Argmax
            | Op::Argmin
            | Op::Var
            | Op::Std
            | Op::Norm
            | Op::Logsumexp
            | Op::Softmax
            | Op::LogSoftmax
            | Op::Cumsum
            | Op::Cumprod
            | Op::Cummax
            | Op::Cummin
            | Op::MseLoss
            | Op::SmoothL1Loss
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
            | Op::AdaptiveAvgPool1d
            | Op::AdaptiveAvgPool2d
            | Op::AdaptiveAvgPool3d
            | Op::BatchNorm
            | Op::LayerNorm
            | Op::GroupNorm
            | Op::InstanceNorm
            | Op::RmsNorm
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
            | Op::Stack
            | Op::Aten => D::Any,
        }
    }
}
