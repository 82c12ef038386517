//! The op table: one entry per op. Columns: text name, category, arity, attributes (with
//! defaults, in printing order), inference rule (`infer.rs`), FLOP rule (`flops.rs`).
//!
//! PyTorch semantics, defaults included. Optional inputs are trailing (`Range`).

use super::flops::{self as fl, pointwise as pw};
use super::infer as inf;
use super::{Arity, Category, OpDef};
use crate::attr::{AttrDef, AttrKind as K, Default as D};
use crate::DType;

const fn req(name: &'static str, kind: K) -> AttrDef {
    crate::attr::attr(name, kind, D::Required)
}
const fn int(name: &'static str, v: i64) -> AttrDef {
    crate::attr::attr(name, K::Int, D::Int(v))
}
const fn float(name: &'static str, v: f64) -> AttrDef {
    crate::attr::attr(name, K::Float, D::Float(v))
}
const fn boolean(name: &'static str, v: bool) -> AttrDef {
    crate::attr::attr(name, K::Bool, D::Bool(v))
}
const fn string(name: &'static str, v: &'static str) -> AttrDef {
    crate::attr::attr(name, K::Str, D::Str(v))
}
const fn ints(name: &'static str, v: &'static [i64]) -> AttrDef {
    crate::attr::attr(name, K::Ints, D::Ints(v))
}
const fn none(name: &'static str, kind: K) -> AttrDef {
    crate::attr::attr(name, kind, D::None)
}

const KEEPDIM: AttrDef = boolean("keepdim", false);
const DIMS: AttrDef = none("dim", K::OptInts);
const REDUCTION: AttrDef = string("reduction", "mean");

macro_rules! op_table {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal : $cat:ident, $arity:expr,
        [$($attr:expr),* $(,)?], $infer:path, $flops:expr; )*) => {
        /// An operation of the IR. Facts about each live in its table entry ([`Op::def`]).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Op {
            $($(#[$doc])* $variant,)*
        }

        impl Op {
            /// Every op, in table order.
            pub const ALL: &'static [Op] = &[$(Op::$variant),*];

            /// The table entry of this op.
            pub fn def(self) -> &'static OpDef {
                match self {
                    $(Op::$variant => {
                        static DEF: OpDef = OpDef {
                            name: $name,
                            category: Category::$cat,
                            arity: $arity,
                            attrs: &[$($attr),*],
                            infer: $infer,
                            flops: $flops,
                        };
                        &DEF
                    })*
                }
            }
        }
    };
}

use Arity::{AtLeast, Exact, Range};

op_table! {
    // ---- creation and casts
    /// A constant tensor filled with `value`.
    Full = "full": Creation, Exact(0), [req("shape", K::Ints), req("value", K::Float), crate::attr::attr("dtype", K::DType, D::DType(DType::F32))], inf::full, fl::zero;
    /// `x.to(dtype)`, `.float()`, `.bool()`.
    Cast = "cast": Pointwise, Exact(1), [req("dtype", K::DType)], inf::cast, pw::<1>;
    /// `F.dropout`, `nn.Dropout`: identity unless training with p > 0 (then random).
    Dropout = "dropout": Pointwise, Exact(1), [float("p", 0.5), boolean("training", false)], inf::dropout, pw::<1>;

    // ---- pointwise binary, broadcasting
    Add = "add": Pointwise, Exact(2), [], inf::broadcast, pw::<1>;
    Sub = "sub": Pointwise, Exact(2), [], inf::subtract, pw::<1>;
    Mul = "mul": Pointwise, Exact(2), [], inf::broadcast, pw::<1>;
    /// True division (`/`, `torch.div`).
    Div = "div": Pointwise, Exact(2), [], inf::broadcast_float, pw::<1>;
    Maximum = "maximum": Pointwise, Exact(2), [], inf::broadcast, pw::<1>;
    Minimum = "minimum": Pointwise, Exact(2), [], inf::broadcast, pw::<1>;
    /// `x ** y`, `torch.pow`.
    Pow = "pow": Pointwise, Exact(2), [], inf::power, pw::<2>;
    /// `lerp(start, end, weight) = start + weight * (end - start)`.
    Lerp = "lerp": Pointwise, Exact(3), [], inf::lerp, pw::<3>;
    Eq = "eq": Pointwise, Exact(2), [], inf::compare, pw::<1>;
    Ne = "ne": Pointwise, Exact(2), [], inf::compare, pw::<1>;
    Lt = "lt": Pointwise, Exact(2), [], inf::compare, pw::<1>;
    Le = "le": Pointwise, Exact(2), [], inf::compare, pw::<1>;
    Gt = "gt": Pointwise, Exact(2), [], inf::compare, pw::<1>;
    Ge = "ge": Pointwise, Exact(2), [], inf::compare, pw::<1>;
    /// `torch.where(cond, a, b)`.
    Where = "where": Pointwise, Exact(3), [], inf::select_where, pw::<1>;

    // ---- pointwise unary
    Relu = "relu": Pointwise, Exact(1), [], inf::numeric, pw::<1>;
    LeakyRelu = "leaky_relu": Pointwise, Exact(1), [float("negative_slope", 0.01)], inf::float_only, pw::<2>;
    Sigmoid = "sigmoid": Pointwise, Exact(1), [], inf::unary_float, pw::<4>;
    Tanh = "tanh": Pointwise, Exact(1), [], inf::unary_float, pw::<4>;
    /// swish: `x * sigmoid(x)`.
    Silu = "silu": Pointwise, Exact(1), [], inf::float_only, pw::<5>;
    /// `approximate` is "none" (erf) or "tanh".
    Gelu = "gelu": Pointwise, Exact(1), [string("approximate", "none")], inf::float_only, pw::<8>;
    Selu = "selu": Pointwise, Exact(1), [], inf::float_only, pw::<5>;
    Hardsigmoid = "hardsigmoid": Pointwise, Exact(1), [], inf::float_only, pw::<3>;
    Hardswish = "hardswish": Pointwise, Exact(1), [], inf::float_only, pw::<4>;
    Softplus = "softplus": Pointwise, Exact(1), [float("beta", 1.0), float("threshold", 20.0)], inf::float_only, pw::<4>;
    Softsign = "softsign": Pointwise, Exact(1), [], inf::softsign, pw::<3>;
    Elu = "elu": Pointwise, Exact(1), [float("alpha", 1.0)], inf::float_only, pw::<4>;
    Hardtanh = "hardtanh": Pointwise, Exact(1), [float("min_val", -1.0), float("max_val", 1.0)], inf::numeric, pw::<2>;
    /// `torch.clamp(x, min=None, max=None)`.
    Clamp = "clamp": Pointwise, Exact(1), [none("min", K::OptFloat), none("max", K::OptFloat)], inf::clamp, pw::<2>;
    Logsigmoid = "logsigmoid": Pointwise, Exact(1), [], inf::float_only, pw::<5>;
    /// `x * tanh(softplus(x))`.
    Mish = "mish": Pointwise, Exact(1), [], inf::float_only, pw::<10>;
    Abs = "abs": Pointwise, Exact(1), [], inf::numeric, pw::<1>;
    Neg = "neg": Pointwise, Exact(1), [], inf::numeric, pw::<1>;
    Sign = "sign": Pointwise, Exact(1), [], inf::same, pw::<1>;
    Cos = "cos": Pointwise, Exact(1), [], inf::unary_float, pw::<4>;
    Sin = "sin": Pointwise, Exact(1), [], inf::unary_float, pw::<4>;
    Exp = "exp": Pointwise, Exact(1), [], inf::unary_float, pw::<4>;
    Exp2 = "exp2": Pointwise, Exact(1), [], inf::unary_float, pw::<4>;
    Log = "log": Pointwise, Exact(1), [], inf::unary_float, pw::<4>;
    Sqrt = "sqrt": Pointwise, Exact(1), [], inf::unary_float, pw::<2>;
    Rsqrt = "rsqrt": Pointwise, Exact(1), [], inf::unary_float, pw::<2>;
    Erf = "erf": Pointwise, Exact(1), [], inf::unary_float, pw::<4>;
    Reciprocal = "reciprocal": Pointwise, Exact(1), [], inf::unary_float, pw::<1>;

    // ---- reductions (dim: ints | none = all dims)
    Sum = "sum": Reduction, Exact(1), [DIMS, KEEPDIM], inf::reduce_accumulate, fl::reduction;
    Mean = "mean": Reduction, Exact(1), [DIMS, KEEPDIM], inf::reduce_float, fl::reduction;
    Prod = "prod": Reduction, Exact(1), [DIMS, KEEPDIM], inf::reduce_accumulate, fl::reduction;
    /// `torch.max(x, dim).values`, `torch.amax`, `torch.max(x)`.
    Max = "max": Reduction, Exact(1), [DIMS, KEEPDIM], inf::reduce_same, fl::reduction;
    /// `torch.min(x, dim).values`, `torch.amin`, `torch.min(x)`.
    Min = "min": Reduction, Exact(1), [DIMS, KEEPDIM], inf::reduce_same, fl::reduction;
    Argmax = "argmax": Reduction, Exact(1), [none("dim", K::OptInt), KEEPDIM], inf::reduce_arg, fl::reduction;
    Argmin = "argmin": Reduction, Exact(1), [none("dim", K::OptInt), KEEPDIM], inf::reduce_arg, fl::reduction;
    /// Variance with Bessel's `correction` (1 = unbiased, PyTorch's default).
    Var = "var": Reduction, Exact(1), [DIMS, float("correction", 1.0), KEEPDIM], inf::reduce_float, fl::per_input::<3>;
    Std = "std": Reduction, Exact(1), [DIMS, float("correction", 1.0), KEEPDIM], inf::reduce_float, fl::per_input::<3>;
    /// p-norm over dims (`torch.norm`, `torch.linalg.vector_norm`); p = 2 by default.
    Norm = "norm": Reduction, Exact(1), [float("p", 2.0), DIMS, KEEPDIM], inf::reduce_float, fl::per_input::<2>;
    Logsumexp = "logsumexp": Reduction, Exact(1), [req("dim", K::Ints), KEEPDIM], inf::reduce_to_float, fl::per_input::<3>;
    Softmax = "softmax": Reduction, Exact(1), [req("dim", K::Int)], inf::along_dim_float, fl::per_input::<5>;
    LogSoftmax = "log_softmax": Reduction, Exact(1), [req("dim", K::Int)], inf::along_dim_float, fl::per_input::<5>;
    Cumsum = "cumsum": Reduction, Exact(1), [req("dim", K::Int)], inf::scan_accumulate, fl::reduction;
    Cumprod = "cumprod": Reduction, Exact(1), [req("dim", K::Int)], inf::scan_accumulate, fl::reduction;
    /// `torch.cummax(x, dim).values`.
    Cummax = "cummax": Reduction, Exact(1), [req("dim", K::Int)], inf::along_dim, fl::reduction;
    /// `torch.cummin(x, dim).values`.
    Cummin = "cummin": Reduction, Exact(1), [req("dim", K::Int)], inf::along_dim, fl::reduction;

    // ---- losses
    MseLoss = "mse_loss": Reduction, Exact(2), [REDUCTION], inf::pointwise_loss, fl::per_input::<3>;
    /// Huber with `beta` (`F.smooth_l1_loss`).
    SmoothL1Loss = "smooth_l1_loss": Reduction, Exact(2), [REDUCTION, float("beta", 1.0)], inf::pointwise_loss, fl::per_input::<5>;
    KlDiv = "kl_div": Reduction, Exact(2), [REDUCTION, boolean("log_target", false)], inf::kl_div_loss, fl::per_input::<5>;
    CrossEntropy = "cross_entropy": Reduction, Exact(2), [REDUCTION], inf::cross_entropy, fl::per_input::<6>;
    TripletMarginLoss = "triplet_margin_loss": Reduction, Exact(3), [float("margin", 1.0), float("p", 2.0), float("eps", 1e-6), boolean("swap", false), REDUCTION], inf::triplet_loss, fl::per_input::<12>;

    // ---- contractions
    /// `torch.matmul` / `@`: 1-D promotion and batch broadcasting.
    Matmul = "matmul": Contraction, Exact(2), [], inf::matmul, fl::matmul;
    Bmm = "bmm": Contraction, Exact(2), [], inf::bmm, fl::matmul;
    /// `x @ weight.T + bias` (`nn.Linear`, `F.linear`).
    Linear = "linear": Contraction, Range(2, 3), [], inf::linear, fl::matmul;
    Einsum = "einsum": Contraction, AtLeast(1), [req("equation", K::Str)], inf::einsum, fl::einsum;
    /// `F.scaled_dot_product_attention(q, k, v, attn_mask?)`.
    Attention = "scaled_dot_product_attention": Contraction, Range(3, 4), [float("dropout_p", 0.0), boolean("is_causal", false), none("scale", K::OptFloat)], inf::attention, fl::attention;

    // ---- library: convolutions (x, weight, bias?)
    Conv1d = "conv1d": Library, Range(2, 3), [ints("stride", &[1]), ints("padding", &[0]), ints("dilation", &[1]), int("groups", 1)], inf::conv1d, fl::conv;
    Conv2d = "conv2d": Library, Range(2, 3), [ints("stride", &[1, 1]), ints("padding", &[0, 0]), ints("dilation", &[1, 1]), int("groups", 1)], inf::conv2d, fl::conv;
    Conv3d = "conv3d": Library, Range(2, 3), [ints("stride", &[1, 1, 1]), ints("padding", &[0, 0, 0]), ints("dilation", &[1, 1, 1]), int("groups", 1)], inf::conv3d, fl::conv;
    ConvTranspose1d = "conv_transpose1d": Library, Range(2, 3), [ints("stride", &[1]), ints("padding", &[0]), ints("output_padding", &[0]), int("groups", 1), ints("dilation", &[1])], inf::conv_transpose1d, fl::conv_transpose;
    ConvTranspose2d = "conv_transpose2d": Library, Range(2, 3), [ints("stride", &[1, 1]), ints("padding", &[0, 0]), ints("output_padding", &[0, 0]), int("groups", 1), ints("dilation", &[1, 1])], inf::conv_transpose2d, fl::conv_transpose;
    ConvTranspose3d = "conv_transpose3d": Library, Range(2, 3), [ints("stride", &[1, 1, 1]), ints("padding", &[0, 0, 0]), ints("output_padding", &[0, 0, 0]), int("groups", 1), ints("dilation", &[1, 1, 1])], inf::conv_transpose3d, fl::conv_transpose;

    // ---- windows (stride none = kernel_size)
    MaxPool1d = "max_pool1d": Window, Exact(1), [req("kernel_size", K::Ints), none("stride", K::OptInts), ints("padding", &[0]), ints("dilation", &[1]), boolean("ceil_mode", false)], inf::max_pool1d, fl::window::<1>;
    MaxPool2d = "max_pool2d": Window, Exact(1), [req("kernel_size", K::Ints), none("stride", K::OptInts), ints("padding", &[0, 0]), ints("dilation", &[1, 1]), boolean("ceil_mode", false)], inf::max_pool2d, fl::window::<2>;
    MaxPool3d = "max_pool3d": Window, Exact(1), [req("kernel_size", K::Ints), none("stride", K::OptInts), ints("padding", &[0, 0, 0]), ints("dilation", &[1, 1, 1]), boolean("ceil_mode", false)], inf::max_pool3d, fl::window::<3>;
    AvgPool1d = "avg_pool1d": Window, Exact(1), [req("kernel_size", K::Ints), none("stride", K::OptInts), ints("padding", &[0]), boolean("ceil_mode", false), boolean("count_include_pad", true)], inf::avg_pool1d, fl::window::<1>;
    AvgPool2d = "avg_pool2d": Window, Exact(1), [req("kernel_size", K::Ints), none("stride", K::OptInts), ints("padding", &[0, 0]), boolean("ceil_mode", false), boolean("count_include_pad", true), none("divisor_override", K::OptInt)], inf::avg_pool2d, fl::window::<2>;
    AvgPool3d = "avg_pool3d": Window, Exact(1), [req("kernel_size", K::Ints), none("stride", K::OptInts), ints("padding", &[0, 0, 0]), boolean("ceil_mode", false), boolean("count_include_pad", true), none("divisor_override", K::OptInt)], inf::avg_pool3d, fl::window::<3>;
    AdaptiveAvgPool1d = "adaptive_avg_pool1d": Window, Exact(1), [req("output_size", K::Ints)], inf::adaptive_avg_pool1d, fl::window::<1>;
    AdaptiveAvgPool2d = "adaptive_avg_pool2d": Window, Exact(1), [req("output_size", K::Ints)], inf::adaptive_avg_pool2d, fl::window::<2>;
    AdaptiveAvgPool3d = "adaptive_avg_pool3d": Window, Exact(1), [req("output_size", K::Ints)], inf::adaptive_avg_pool3d, fl::window::<3>;

    // ---- normalization (x, weight?, bias?)
    /// Training mode: batch statistics (KernelBench's default mode).
    BatchNorm = "batch_norm": Normalization, Range(1, 3), [boolean("training", true), float("momentum", 0.1), float("eps", 1e-5)], inf::batch_norm, fl::normalization;
    LayerNorm = "layer_norm": Normalization, Range(1, 3), [req("normalized_shape", K::Ints), float("eps", 1e-5)], inf::last_dims_norm, fl::normalization;
    GroupNorm = "group_norm": Normalization, Range(1, 3), [req("num_groups", K::Int), float("eps", 1e-5)], inf::group_norm, fl::normalization;
    InstanceNorm = "instance_norm": Normalization, Range(1, 3), [float("eps", 1e-5)], inf::instance_norm, fl::normalization;
    /// `F.rms_norm`; eps none = machine epsilon of the dtype.
    RmsNorm = "rms_norm": Normalization, Range(1, 2), [req("normalized_shape", K::Ints), none("eps", K::OptFloat)], inf::last_dims_norm, fl::normalization;

    // ---- layout
    Transpose = "transpose": Layout, Exact(1), [req("dim0", K::Int), req("dim1", K::Int)], inf::transpose, fl::zero;
    Permute = "permute": Layout, Exact(1), [req("dims", K::Ints)], inf::permute, fl::zero;
    /// `view`, `reshape`: the target shape, one dim may be -1.
    Reshape = "reshape": Layout, Exact(1), [req("shape", K::Ints)], inf::reshape, fl::zero;
    Flatten = "flatten": Layout, Exact(1), [int("start_dim", 0), int("end_dim", -1)], inf::flatten, fl::zero;
    Squeeze = "squeeze": Layout, Exact(1), [DIMS], inf::squeeze, fl::zero;
    Unsqueeze = "unsqueeze": Layout, Exact(1), [req("dim", K::Int)], inf::unsqueeze, fl::zero;
    Expand = "expand": Layout, Exact(1), [req("shape", K::Ints)], inf::expand, fl::zero;
    Narrow = "narrow": Layout, Exact(1), [req("dim", K::Int), req("start", K::Int), req("length", K::Int)], inf::narrow, fl::zero;
    /// `x[start:end:step]` along `dim`.
    Slice = "slice": Layout, Exact(1), [req("dim", K::Int), int("start", 0), int("end", i64::MAX), int("step", 1)], inf::slice, fl::zero;
    /// `x[..., index, ...]`: removes `dim`.
    Select = "select": Layout, Exact(1), [req("dim", K::Int), req("index", K::Int)], inf::select, fl::zero;
    Flip = "flip": Layout, Exact(1), [req("dims", K::Ints)], inf::flip, fl::zero;
    Diag = "diag": Layout, Exact(1), [int("diagonal", 0)], inf::diag, fl::zero;
    Triu = "triu": Layout, Exact(1), [int("diagonal", 0)], inf::triangle, fl::zero;
    Tril = "tril": Layout, Exact(1), [int("diagonal", 0)], inf::triangle, fl::zero;
    Cat = "cat": Layout, AtLeast(1), [int("dim", 0)], inf::cat, fl::zero;
    Stack = "stack": Layout, AtLeast(1), [int("dim", 0)], inf::stack, fl::zero;

    // ---- opaque library calls (the export frontend; see `aten.rs`)
    /// An ATen op PyTorch executes: `torch.ops.<target>(<args>)`, result types from the
    /// export metadata. A fusion barrier; reported as a library op by its target.
    Aten = "aten": Library, AtLeast(0), [req("target", K::Str), string("args", ""), req("types", K::Str)], super::aten::infer, fl::zero;
}

impl serde::Serialize for Op {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Op {
    fn deserialize<De: serde::Deserializer<'de>>(d: De) -> Result<Op, De::Error> {
        let name = String::deserialize(d)?;
        Op::from_name(&name).ok_or_else(|| serde::de::Error::custom(format!("unknown op `{name}`")))
    }
}
