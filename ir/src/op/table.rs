//! The op table: one entry per op. Columns: text name, kind (`kind.rs`: the category and
//! what templates ask of it, such as a pooling's rank), arity, attributes (with
//! defaults, in printing order), inference rule (`infer.rs`), FLOP rule (`flops.rs`) and,
//! optionally, PyTorch's spellings (`torch.rs`: the calls, their parameter names, the
//! parameter-free `nn` modules; a row without it is not callable from Python code) and, for
//! a pointwise op, its further facts after `=>` (`pointwise.rs`: Triton expression, domain,
//! constant folding).
//!
//! PyTorch semantics, defaults included. Optional inputs are trailing (`Range`).

use super::flops::{self as fl, pointwise as pw};
use super::infer as inf;
use super::kind::Kind::*;
use super::kind::Pool;
use super::pointwise as pd;
use super::torch::row::{nn, nn_set, t, tm, UNARY};
use super::torch::Torch;
use super::{Arity, OpDef};
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
    (@torch) => { Torch::NONE };
    (@torch $torch:expr) => { $torch };
    (@pw) => { None };
    (@pw $pw:expr) => { Some(&$pw) };
    (@has) => { false };
    (@has $pw:expr) => { true };
    ($( $(#[$doc:meta])* $variant:ident = $name:literal : $kind:expr, $arity:expr,
        [$($attr:expr),* $(,)?], $infer:path, $flops:expr $(, $torch:expr)? $(=> $pw:expr)?; )*) => {
        // every pointwise row links its facts (`pointwise.rs`)
        $(const _: () = assert!(
            !matches!($kind, Pointwise) || op_table!(@has $($pw)?),
            concat!("the pointwise op `", $name, "` links no facts (`=> pd::...`)")
        );)*

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
                            kind: $kind,
                            category: $kind.category(),
                            arity: $arity,
                            attrs: &[$($attr),*],
                            infer: $infer,
                            flops: $flops,
                            torch: op_table!(@torch $($torch)?),
                            pointwise: op_table!(@pw $($pw)?),
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
    /// `torch.arange(end)`: 0, 1, ..., end - 1. Made by rewrites (`expand-losses`' one-hot
    /// of a class index); a template computes it as the index of the dim it runs along.
    Arange = "arange": Creation, Exact(0), [req("end", K::Int), crate::attr::attr("dtype", K::DType, D::DType(DType::I64))], inf::arange, fl::zero;
    /// `x.to(dtype)`, `.float()`, `.bool()`.
    Cast = "cast": Pointwise, Exact(1), [req("dtype", K::DType)], inf::cast, pw::<1> => pd::CAST;
    /// `F.dropout`, `nn.Dropout`: identity unless training with p > 0 (then random).
    Dropout = "dropout": Pointwise, Exact(1), [float("p", 0.5), boolean("training", false)], inf::dropout, pw::<1>, t(&["F.dropout", "F.dropout1d", "F.dropout2d", "F.dropout3d", "F.alpha_dropout"], &["input", "p", "training", "inplace"]) => pd::DROPOUT;

    // ---- pointwise binary, broadcasting
    Add = "add": Pointwise, Exact(2), [], inf::broadcast, pw::<1>, t(&["torch.add", "Tensor.add", "torch.add_", "Tensor.add_"], &["input", "other", "alpha"]) => pd::ADD;
    Sub = "sub": Pointwise, Exact(2), [], inf::subtract, pw::<1>, t(&["torch.sub", "Tensor.sub", "torch.subtract", "Tensor.subtract", "torch.sub_", "Tensor.sub_"], &["input", "other", "alpha"]) => pd::SUB;
    Mul = "mul": Pointwise, Exact(2), [], inf::broadcast, pw::<1>, t(&["torch.mul", "Tensor.mul", "torch.multiply", "Tensor.multiply", "torch.mul_", "Tensor.mul_"], &["input", "other"]) => pd::MUL;
    /// True division (`/`, `torch.div`).
    Div = "div": Pointwise, Exact(2), [], inf::broadcast_float, pw::<1>, t(&["torch.div", "Tensor.div", "torch.divide", "Tensor.divide", "torch.true_divide", "Tensor.true_divide", "torch.div_", "Tensor.div_"], &["input", "other", "rounding_mode"]) => pd::DIV;
    Maximum = "maximum": Pointwise, Exact(2), [], inf::broadcast, pw::<1>, t(&["torch.maximum", "Tensor.maximum", "torch.fmax", "Tensor.fmax"], &["input", "other"]) => pd::MAXIMUM;
    Minimum = "minimum": Pointwise, Exact(2), [], inf::broadcast, pw::<1>, t(&["torch.minimum", "Tensor.minimum", "torch.fmin", "Tensor.fmin"], &["input", "other"]) => pd::MINIMUM;
    /// `x ** y`, `torch.pow`.
    Pow = "pow": Pointwise, Exact(2), [], inf::power, pw::<2>, t(&["torch.pow", "Tensor.pow"], &["input", "exponent"]) => pd::POW;
    /// `lerp(start, end, weight) = start + weight * (end - start)`.
    Lerp = "lerp": Pointwise, Exact(3), [], inf::lerp, pw::<3>, t(&["torch.lerp", "Tensor.lerp"], &["input", "end", "weight"]) => pd::LERP;
    Eq = "eq": Pointwise, Exact(2), [], inf::compare, pw::<1>, t(&["torch.eq", "Tensor.eq"], &["input", "other"]) => pd::EQ;
    Ne = "ne": Pointwise, Exact(2), [], inf::compare, pw::<1>, t(&["torch.ne", "Tensor.ne", "torch.not_equal", "Tensor.not_equal"], &["input", "other"]) => pd::NE;
    Lt = "lt": Pointwise, Exact(2), [], inf::compare, pw::<1>, t(&["torch.lt", "Tensor.lt", "torch.less", "Tensor.less"], &["input", "other"]) => pd::LT;
    Le = "le": Pointwise, Exact(2), [], inf::compare, pw::<1>, t(&["torch.le", "Tensor.le", "torch.less_equal", "Tensor.less_equal"], &["input", "other"]) => pd::LE;
    Gt = "gt": Pointwise, Exact(2), [], inf::compare, pw::<1>, t(&["torch.gt", "Tensor.gt", "torch.greater", "Tensor.greater"], &["input", "other"]) => pd::GT;
    Ge = "ge": Pointwise, Exact(2), [], inf::compare, pw::<1>, t(&["torch.ge", "Tensor.ge", "torch.greater_equal", "Tensor.greater_equal"], &["input", "other"]) => pd::GE;
    /// `torch.where(cond, a, b)`.
    Where = "where": Pointwise, Exact(3), [], inf::select_where, pw::<1>, t(&["torch.where", "Tensor.where"], &["condition", "input", "other"]) => pd::WHERE;

    // ---- pointwise unary
    Relu = "relu": Pointwise, Exact(1), [], inf::numeric, pw::<1>, tm(&["torch.relu", "F.relu", "Tensor.relu", "torch.relu_", "F.relu_", "Tensor.relu_"], UNARY, &[nn("ReLU", &["inplace"])]) => pd::RELU;
    LeakyRelu = "leaky_relu": Pointwise, Exact(1), [float("negative_slope", 0.01)], inf::float_only, pw::<2>, tm(&["F.leaky_relu"], &["input", "negative_slope", "inplace"], &[nn("LeakyReLU", &["negative_slope", "inplace"])]) => pd::LEAKY_RELU;
    Sigmoid = "sigmoid": Pointwise, Exact(1), [], inf::unary_float, pw::<4>, tm(&["torch.sigmoid", "F.sigmoid", "Tensor.sigmoid", "torch.sigmoid_", "F.sigmoid_", "Tensor.sigmoid_"], UNARY, &[nn("Sigmoid", &[])]) => pd::SIGMOID;
    Tanh = "tanh": Pointwise, Exact(1), [], inf::unary_float, pw::<4>, tm(&["torch.tanh", "F.tanh", "Tensor.tanh", "torch.tanh_", "F.tanh_", "Tensor.tanh_"], UNARY, &[nn("Tanh", &[])]) => pd::TANH;
    /// swish: `x * sigmoid(x)`.
    Silu = "silu": Pointwise, Exact(1), [], inf::float_only, pw::<5>, tm(&["F.silu"], UNARY, &[nn("SiLU", &["inplace"])]) => pd::SILU;
    /// `approximate` is "none" (erf) or "tanh".
    Gelu = "gelu": Pointwise, Exact(1), [string("approximate", "none")], inf::float_only, pw::<8>, tm(&["F.gelu"], &["input", "approximate"], &[nn("GELU", &["approximate"])]) => pd::GELU;
    Selu = "selu": Pointwise, Exact(1), [], inf::float_only, pw::<5>, tm(&["torch.selu", "F.selu"], UNARY, &[nn("SELU", &["inplace"])]) => pd::SELU;
    Hardsigmoid = "hardsigmoid": Pointwise, Exact(1), [], inf::float_only, pw::<3>, tm(&["F.hardsigmoid"], UNARY, &[nn("Hardsigmoid", &["inplace"])]) => pd::HARDSIGMOID;
    Hardswish = "hardswish": Pointwise, Exact(1), [], inf::float_only, pw::<4>, tm(&["F.hardswish"], UNARY, &[nn("Hardswish", &["inplace"])]) => pd::HARDSWISH;
    Softplus = "softplus": Pointwise, Exact(1), [float("beta", 1.0), float("threshold", 20.0)], inf::float_only, pw::<4>, tm(&["F.softplus"], &["input", "beta", "threshold"], &[nn("Softplus", &["beta", "threshold"])]) => pd::SOFTPLUS;
    Softsign = "softsign": Pointwise, Exact(1), [], inf::softsign, pw::<3>, tm(&["F.softsign"], UNARY, &[nn("Softsign", &[])]) => pd::SOFTSIGN;
    Elu = "elu": Pointwise, Exact(1), [float("alpha", 1.0)], inf::float_only, pw::<4>, tm(&["F.elu"], &["input", "alpha", "inplace"], &[nn("ELU", &["alpha", "inplace"])]) => pd::ELU;
    Hardtanh = "hardtanh": Pointwise, Exact(1), [float("min_val", -1.0), float("max_val", 1.0)], inf::numeric, pw::<2>, tm(&["F.hardtanh"], &["input", "min_val", "max_val", "inplace"], &[nn("Hardtanh", &["min_val", "max_val", "inplace"]), nn_set("ReLU6", &["inplace"], &[("min_val", D::Float(0.0)), ("max_val", D::Float(6.0))])]) => pd::HARDTANH;
    /// `torch.clamp(x, min=None, max=None)`.
    Clamp = "clamp": Pointwise, Exact(1), [none("min", K::OptFloat), none("max", K::OptFloat)], inf::clamp, pw::<2>, t(&["torch.clamp", "Tensor.clamp", "torch.clip", "Tensor.clip", "torch.clamp_", "Tensor.clamp_"], &["input", "min", "max"]) => pd::CLAMP;
    Logsigmoid = "logsigmoid": Pointwise, Exact(1), [], inf::float_only, pw::<5>, tm(&["F.logsigmoid"], UNARY, &[nn("LogSigmoid", &[])]) => pd::LOGSIGMOID;
    /// `x * tanh(softplus(x))`.
    Mish = "mish": Pointwise, Exact(1), [], inf::float_only, pw::<10>, tm(&["F.mish"], UNARY, &[nn("Mish", &["inplace"])]) => pd::MISH;
    Abs = "abs": Pointwise, Exact(1), [], inf::numeric, pw::<1>, t(&["torch.abs", "Tensor.abs", "torch.absolute", "Tensor.absolute"], UNARY) => pd::ABS;
    Neg = "neg": Pointwise, Exact(1), [], inf::numeric, pw::<1>, t(&["torch.neg", "Tensor.neg", "torch.negative", "Tensor.negative"], UNARY) => pd::NEG;
    Sign = "sign": Pointwise, Exact(1), [], inf::same, pw::<1>, t(&["torch.sign", "Tensor.sign"], UNARY) => pd::SIGN;
    Cos = "cos": Pointwise, Exact(1), [], inf::unary_float, pw::<4>, t(&["torch.cos", "Tensor.cos"], UNARY) => pd::COS;
    Sin = "sin": Pointwise, Exact(1), [], inf::unary_float, pw::<4>, t(&["torch.sin", "Tensor.sin"], UNARY) => pd::SIN;
    Exp = "exp": Pointwise, Exact(1), [], inf::unary_float, pw::<4>, t(&["torch.exp", "Tensor.exp"], UNARY) => pd::EXP;
    Exp2 = "exp2": Pointwise, Exact(1), [], inf::unary_float, pw::<4>, t(&["torch.exp2", "Tensor.exp2"], UNARY) => pd::EXP2;
    Log = "log": Pointwise, Exact(1), [], inf::unary_float, pw::<4>, t(&["torch.log", "Tensor.log"], UNARY) => pd::LOG;
    Sqrt = "sqrt": Pointwise, Exact(1), [], inf::unary_float, pw::<2>, t(&["torch.sqrt", "Tensor.sqrt"], UNARY) => pd::SQRT;
    Rsqrt = "rsqrt": Pointwise, Exact(1), [], inf::unary_float, pw::<2>, t(&["torch.rsqrt", "Tensor.rsqrt"], UNARY) => pd::RSQRT;
    Erf = "erf": Pointwise, Exact(1), [], inf::unary_float, pw::<4>, t(&["torch.erf", "Tensor.erf", "torch.special.erf"], UNARY) => pd::ERF;
    Reciprocal = "reciprocal": Pointwise, Exact(1), [], inf::unary_float, pw::<1>, t(&["torch.reciprocal", "Tensor.reciprocal"], UNARY) => pd::RECIPROCAL;

    // ---- reductions (dim: ints | none = all dims)
    Sum = "sum": Reduce, Exact(1), [DIMS, KEEPDIM], inf::reduce_accumulate, fl::reduction, t(&["torch.sum", "Tensor.sum"], &["input", "dim", "keepdim", "dtype"]);
    Mean = "mean": Reduce, Exact(1), [DIMS, KEEPDIM], inf::reduce_float, fl::reduction, t(&["torch.mean", "Tensor.mean"], &["input", "dim", "keepdim", "dtype"]);
    Prod = "prod": Reduce, Exact(1), [DIMS, KEEPDIM], inf::reduce_accumulate, fl::reduction, t(&["torch.prod", "Tensor.prod"], &["input", "dim", "keepdim", "dtype"]);
    /// `torch.max(x, dim).values`, `torch.amax`, `torch.max(x)`.
    Max = "max": Reduce, Exact(1), [DIMS, KEEPDIM], inf::reduce_same, fl::reduction, t(&["torch.amax", "Tensor.amax"], &["input", "dim", "keepdim"]);
    /// `torch.min(x, dim).values`, `torch.amin`, `torch.min(x)`.
    Min = "min": Reduce, Exact(1), [DIMS, KEEPDIM], inf::reduce_same, fl::reduction, t(&["torch.amin", "Tensor.amin"], &["input", "dim", "keepdim"]);
    Argmax = "argmax": Reduce, Exact(1), [none("dim", K::OptInt), KEEPDIM], inf::reduce_arg, fl::reduction, t(&["torch.argmax", "Tensor.argmax"], &["input", "dim", "keepdim"]);
    Argmin = "argmin": Reduce, Exact(1), [none("dim", K::OptInt), KEEPDIM], inf::reduce_arg, fl::reduction, t(&["torch.argmin", "Tensor.argmin"], &["input", "dim", "keepdim"]);
    /// Variance with Bessel's `correction` (1 = unbiased, PyTorch's default).
    Var = "var": Reduce, Exact(1), [DIMS, float("correction", 1.0), KEEPDIM], inf::reduce_float, fl::per_input::<3>, t(&["torch.var", "Tensor.var"], &["input", "dim", "unbiased", "keepdim", "correction"]);
    Std = "std": Reduce, Exact(1), [DIMS, float("correction", 1.0), KEEPDIM], inf::reduce_float, fl::per_input::<3>, t(&["torch.std", "Tensor.std"], &["input", "dim", "unbiased", "keepdim", "correction"]);
    /// p-norm over dims (`torch.norm`, `torch.linalg.vector_norm`); p = 2 by default.
    Norm = "norm": Reduce, Exact(1), [float("p", 2.0), DIMS, KEEPDIM], inf::reduce_float, fl::per_input::<2>, t(&["torch.norm", "Tensor.norm", "torch.linalg.vector_norm", "torch.linalg.norm"], &["input", "p", "dim", "keepdim", "dtype"]);
    Logsumexp = "logsumexp": Reduce, Exact(1), [req("dim", K::Ints), KEEPDIM], inf::reduce_to_float, fl::per_input::<3>, t(&["torch.logsumexp", "Tensor.logsumexp"], &["input", "dim", "keepdim"]);
    Softmax = "softmax": Reduce, Exact(1), [req("dim", K::Int)], inf::along_dim_float, fl::per_input::<5>, tm(&["torch.softmax", "F.softmax", "Tensor.softmax"], &["input", "dim", "_stacklevel", "dtype"], &[nn("Softmax", &["dim"])]);
    LogSoftmax = "log_softmax": Reduce, Exact(1), [req("dim", K::Int)], inf::along_dim_float, fl::per_input::<5>, tm(&["torch.log_softmax", "F.log_softmax", "Tensor.log_softmax"], &["input", "dim", "_stacklevel", "dtype"], &[nn("LogSoftmax", &["dim"])]);
    /// `reverse` (drtc's own, not a torch argument: set by the `reverse-scans` rewrite) runs
    /// the scan from the last index: `flip(cumsum(flip(x, [dim]), dim), [dim])`.
    Cumsum = "cumsum": Scan, Exact(1), [req("dim", K::Int), boolean("reverse", false)], inf::scan_accumulate, fl::reduction, t(&["torch.cumsum", "Tensor.cumsum"], &["input", "dim", "dtype"]);
    /// `reverse` as for `cumsum`.
    Cumprod = "cumprod": Scan, Exact(1), [req("dim", K::Int), boolean("reverse", false)], inf::scan_accumulate, fl::reduction, t(&["torch.cumprod", "Tensor.cumprod"], &["input", "dim", "dtype"]);
    /// `torch.cummax(x, dim).values`.
    Cummax = "cummax": Scan, Exact(1), [req("dim", K::Int)], inf::along_dim, fl::reduction, t(&["torch.cummax", "Tensor.cummax"], &["input", "dim"]);
    /// `torch.cummin(x, dim).values`.
    Cummin = "cummin": Scan, Exact(1), [req("dim", K::Int)], inf::along_dim, fl::reduction, t(&["torch.cummin", "Tensor.cummin"], &["input", "dim"]);

    // ---- losses
    MseLoss = "mse_loss": Loss, Exact(2), [REDUCTION], inf::pointwise_loss, fl::per_input::<3>, tm(&["F.mse_loss"], &["input", "target", "size_average", "reduce", "reduction"], &[nn("MSELoss", &["size_average", "reduce", "reduction"])]);
    /// Huber with `beta` (`F.smooth_l1_loss`).
    SmoothL1Loss = "smooth_l1_loss": Loss, Exact(2), [REDUCTION, float("beta", 1.0)], inf::pointwise_loss, fl::per_input::<5>, tm(&["F.smooth_l1_loss"], &["input", "target", "size_average", "reduce", "reduction", "beta"], &[nn("SmoothL1Loss", &["size_average", "reduce", "reduction", "beta"])]);
    KlDiv = "kl_div": Loss, Exact(2), [REDUCTION, boolean("log_target", false)], inf::kl_div_loss, fl::per_input::<5>, tm(&["F.kl_div"], &["input", "target", "size_average", "reduce", "reduction", "log_target"], &[nn("KLDivLoss", &["size_average", "reduce", "reduction", "log_target"])]);
    CrossEntropy = "cross_entropy": Loss, Exact(2), [REDUCTION], inf::cross_entropy, fl::per_input::<6>, tm(&["F.cross_entropy"], &["input", "target", "weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing"], &[nn("CrossEntropyLoss", &["weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing"])]);
    TripletMarginLoss = "triplet_margin_loss": Loss, Exact(3), [float("margin", 1.0), float("p", 2.0), float("eps", 1e-6), boolean("swap", false), REDUCTION], inf::triplet_loss, fl::per_input::<12>, tm(&["F.triplet_margin_loss"], &["anchor", "positive", "negative", "margin", "p", "eps", "swap", "size_average", "reduce", "reduction"], &[nn("TripletMarginLoss", &["margin", "p", "eps", "swap", "size_average", "reduce", "reduction"])]);

    // ---- contractions
    /// `torch.matmul` / `@`: 1-D promotion and batch broadcasting.
    Matmul = "matmul": Product, Exact(2), [], inf::matmul, fl::matmul, t(&["torch.matmul", "Tensor.matmul", "torch.mm", "Tensor.mm"], &["input", "other"]);
    Bmm = "bmm": Product, Exact(2), [], inf::bmm, fl::matmul, t(&["torch.bmm", "Tensor.bmm"], &["input", "mat2"]);
    /// `x @ weight.T + bias` (`nn.Linear`, `F.linear`).
    Linear = "linear": Product, Range(2, 3), [], inf::linear, fl::matmul, t(&["F.linear"], &["input", "weight", "bias"]);
    Einsum = "einsum": Composite, AtLeast(1), [req("equation", K::Str)], inf::einsum, fl::einsum, t(&["torch.einsum"], &["equation", "*operands"]);
    /// `F.scaled_dot_product_attention(q, k, v, attn_mask?)`.
    Attention = "scaled_dot_product_attention": Composite, Range(3, 4), [float("dropout_p", 0.0), boolean("is_causal", false), none("scale", K::OptFloat)], inf::attention, fl::attention, t(&["F.scaled_dot_product_attention"], &["query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa"]);

    // ---- library: convolutions (x, weight, bias?)
    Conv1d = "conv1d": Conv { rank: 1, transposed: false }, Range(2, 3), [ints("stride", &[1]), ints("padding", &[0]), ints("dilation", &[1]), int("groups", 1)], inf::conv1d, fl::conv, t(&["F.conv1d"], &["input", "weight", "bias", "stride", "padding", "dilation", "groups"]);
    Conv2d = "conv2d": Conv { rank: 2, transposed: false }, Range(2, 3), [ints("stride", &[1, 1]), ints("padding", &[0, 0]), ints("dilation", &[1, 1]), int("groups", 1)], inf::conv2d, fl::conv, t(&["F.conv2d"], &["input", "weight", "bias", "stride", "padding", "dilation", "groups"]);
    Conv3d = "conv3d": Conv { rank: 3, transposed: false }, Range(2, 3), [ints("stride", &[1, 1, 1]), ints("padding", &[0, 0, 0]), ints("dilation", &[1, 1, 1]), int("groups", 1)], inf::conv3d, fl::conv, t(&["F.conv3d"], &["input", "weight", "bias", "stride", "padding", "dilation", "groups"]);
    ConvTranspose1d = "conv_transpose1d": Conv { rank: 1, transposed: true }, Range(2, 3), [ints("stride", &[1]), ints("padding", &[0]), ints("output_padding", &[0]), int("groups", 1), ints("dilation", &[1])], inf::conv_transpose1d, fl::conv_transpose, t(&["F.conv_transpose1d"], &["input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation"]);
    ConvTranspose2d = "conv_transpose2d": Conv { rank: 2, transposed: true }, Range(2, 3), [ints("stride", &[1, 1]), ints("padding", &[0, 0]), ints("output_padding", &[0, 0]), int("groups", 1), ints("dilation", &[1, 1])], inf::conv_transpose2d, fl::conv_transpose, t(&["F.conv_transpose2d"], &["input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation"]);
    ConvTranspose3d = "conv_transpose3d": Conv { rank: 3, transposed: true }, Range(2, 3), [ints("stride", &[1, 1, 1]), ints("padding", &[0, 0, 0]), ints("output_padding", &[0, 0, 0]), int("groups", 1), ints("dilation", &[1, 1, 1])], inf::conv_transpose3d, fl::conv_transpose, t(&["F.conv_transpose3d"], &["input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation"]);

    // ---- windows (stride none = kernel_size)
    MaxPool1d = "max_pool1d": Window(Pool::Max, 1), Exact(1), [req("kernel_size", K::Ints), none("stride", K::OptInts), ints("padding", &[0]), ints("dilation", &[1]), boolean("ceil_mode", false)], inf::max_pool1d, fl::window::<1>, tm(&["F.max_pool1d"], &["input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"], &[nn("MaxPool1d", &["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"])]);
    MaxPool2d = "max_pool2d": Window(Pool::Max, 2), Exact(1), [req("kernel_size", K::Ints), none("stride", K::OptInts), ints("padding", &[0, 0]), ints("dilation", &[1, 1]), boolean("ceil_mode", false)], inf::max_pool2d, fl::window::<2>, tm(&["F.max_pool2d"], &["input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"], &[nn("MaxPool2d", &["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"])]);
    MaxPool3d = "max_pool3d": Window(Pool::Max, 3), Exact(1), [req("kernel_size", K::Ints), none("stride", K::OptInts), ints("padding", &[0, 0, 0]), ints("dilation", &[1, 1, 1]), boolean("ceil_mode", false)], inf::max_pool3d, fl::window::<3>, tm(&["F.max_pool3d"], &["input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"], &[nn("MaxPool3d", &["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"])]);
    AvgPool1d = "avg_pool1d": Window(Pool::Avg, 1), Exact(1), [req("kernel_size", K::Ints), none("stride", K::OptInts), ints("padding", &[0]), boolean("ceil_mode", false), boolean("count_include_pad", true)], inf::avg_pool1d, fl::window::<1>, tm(&["F.avg_pool1d"], &["input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"], &[nn("AvgPool1d", &["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"])]);
    AvgPool2d = "avg_pool2d": Window(Pool::Avg, 2), Exact(1), [req("kernel_size", K::Ints), none("stride", K::OptInts), ints("padding", &[0, 0]), boolean("ceil_mode", false), boolean("count_include_pad", true), none("divisor_override", K::OptInt)], inf::avg_pool2d, fl::window::<2>, tm(&["F.avg_pool2d"], &["input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"], &[nn("AvgPool2d", &["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"])]);
    AvgPool3d = "avg_pool3d": Window(Pool::Avg, 3), Exact(1), [req("kernel_size", K::Ints), none("stride", K::OptInts), ints("padding", &[0, 0, 0]), boolean("ceil_mode", false), boolean("count_include_pad", true), none("divisor_override", K::OptInt)], inf::avg_pool3d, fl::window::<3>, tm(&["F.avg_pool3d"], &["input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"], &[nn("AvgPool3d", &["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"])]);
    AdaptiveAvgPool1d = "adaptive_avg_pool1d": Window(Pool::AdaptiveAvg, 1), Exact(1), [req("output_size", K::Ints)], inf::adaptive_avg_pool1d, fl::window::<1>, tm(&["F.adaptive_avg_pool1d"], &["input", "output_size"], &[nn("AdaptiveAvgPool1d", &["output_size"])]);
    AdaptiveAvgPool2d = "adaptive_avg_pool2d": Window(Pool::AdaptiveAvg, 2), Exact(1), [req("output_size", K::Ints)], inf::adaptive_avg_pool2d, fl::window::<2>, tm(&["F.adaptive_avg_pool2d"], &["input", "output_size"], &[nn("AdaptiveAvgPool2d", &["output_size"])]);
    AdaptiveAvgPool3d = "adaptive_avg_pool3d": Window(Pool::AdaptiveAvg, 3), Exact(1), [req("output_size", K::Ints)], inf::adaptive_avg_pool3d, fl::window::<3>, tm(&["F.adaptive_avg_pool3d"], &["input", "output_size"], &[nn("AdaptiveAvgPool3d", &["output_size"])]);

    // ---- normalization (x, weight?, bias?)
    /// Training mode: batch statistics (KernelBench's default mode).
    BatchNorm = "batch_norm": Norm, Range(1, 3), [boolean("training", true), float("momentum", 0.1), float("eps", 1e-5)], inf::batch_norm, fl::normalization, t(&["F.batch_norm"], &["input", "running_mean", "running_var", "weight", "bias", "training", "momentum", "eps"]);
    LayerNorm = "layer_norm": Norm, Range(1, 3), [req("normalized_shape", K::Ints), float("eps", 1e-5)], inf::last_dims_norm, fl::normalization, t(&["F.layer_norm"], &["input", "normalized_shape", "weight", "bias", "eps"]);
    GroupNorm = "group_norm": Norm, Range(1, 3), [req("num_groups", K::Int), float("eps", 1e-5)], inf::group_norm, fl::normalization, t(&["F.group_norm"], &["input", "num_groups", "weight", "bias", "eps"]);
    InstanceNorm = "instance_norm": Norm, Range(1, 3), [float("eps", 1e-5)], inf::instance_norm, fl::normalization, t(&["F.instance_norm"], &["input", "running_mean", "running_var", "weight", "bias", "use_input_stats", "momentum", "eps"]);
    /// `F.rms_norm`; eps none = machine epsilon of the dtype.
    RmsNorm = "rms_norm": Norm, Range(1, 2), [req("normalized_shape", K::Ints), none("eps", K::OptFloat)], inf::last_dims_norm, fl::normalization, t(&["F.rms_norm"], &["input", "normalized_shape", "weight", "eps"]);

    // ---- layout
    Transpose = "transpose": View, Exact(1), [req("dim0", K::Int), req("dim1", K::Int)], inf::transpose, fl::zero, t(&["torch.transpose", "Tensor.transpose", "torch.swapaxes", "Tensor.swapaxes", "torch.swapdims", "Tensor.swapdims"], &["input", "dim0", "dim1"]);
    Permute = "permute": View, Exact(1), [req("dims", K::Ints)], inf::permute, fl::zero, t(&["torch.permute", "Tensor.permute"], &["input", "*dims"]);
    /// `view`, `reshape`: the target shape, one dim may be -1.
    Reshape = "reshape": View, Exact(1), [req("shape", K::Ints)], inf::reshape, fl::zero, t(&["Tensor.view", "Tensor.reshape", "torch.reshape"], &["input", "*shape"]);
    Flatten = "flatten": View, Exact(1), [int("start_dim", 0), int("end_dim", -1)], inf::flatten, fl::zero, tm(&["torch.flatten", "Tensor.flatten"], &["input", "start_dim", "end_dim"], &[nn_set("Flatten", &["start_dim", "end_dim"], &[("start_dim", D::Int(1))])]);
    Squeeze = "squeeze": View, Exact(1), [DIMS], inf::squeeze, fl::zero, t(&["torch.squeeze", "Tensor.squeeze"], &["input", "dim"]);
    Unsqueeze = "unsqueeze": View, Exact(1), [req("dim", K::Int)], inf::unsqueeze, fl::zero, t(&["torch.unsqueeze", "Tensor.unsqueeze"], &["input", "dim"]);
    Expand = "expand": View, Exact(1), [req("shape", K::Ints)], inf::expand, fl::zero, t(&["Tensor.expand", "torch.broadcast_to"], &["input", "*size"]);
    Narrow = "narrow": View, Exact(1), [req("dim", K::Int), req("start", K::Int), req("length", K::Int)], inf::narrow, fl::zero, t(&["torch.narrow", "Tensor.narrow"], &["input", "dim", "start", "length"]);
    /// `x[start:end:step]` along `dim`.
    Slice = "slice": View, Exact(1), [req("dim", K::Int), int("start", 0), int("end", i64::MAX), int("step", 1)], inf::slice, fl::zero;
    /// `x[..., index, ...]`: removes `dim`.
    Select = "select": View, Exact(1), [req("dim", K::Int), req("index", K::Int)], inf::select, fl::zero, t(&["torch.select", "Tensor.select"], &["input", "dim", "index"]);
    Flip = "flip": Copy, Exact(1), [req("dims", K::Ints)], inf::flip, fl::zero, t(&["torch.flip", "Tensor.flip"], &["input", "*dims"]);
    /// `F.pad` in constant mode: `pad` pairs the last dim first, negative amounts crop.
    Pad = "pad": Copy, Exact(1), [req("pad", K::Ints), string("mode", "constant"), float("value", 0.0)], inf::pad, fl::zero, t(&["F.pad"], &["input", "pad", "mode", "value"]);
    Diag = "diag": Copy, Exact(1), [int("diagonal", 0)], inf::diag, fl::zero, t(&["torch.diag", "Tensor.diag"], &["input", "diagonal"]);
    Triu = "triu": Copy, Exact(1), [int("diagonal", 0)], inf::triangle, fl::zero, t(&["torch.triu", "Tensor.triu"], &["input", "diagonal"]);
    Tril = "tril": Copy, Exact(1), [int("diagonal", 0)], inf::triangle, fl::zero, t(&["torch.tril", "Tensor.tril"], &["input", "diagonal"]);
    Cat = "cat": Copy, AtLeast(1), [int("dim", 0)], inf::cat, fl::zero, t(&["torch.cat", "torch.concat", "torch.concatenate"], &["tensors", "dim"]);
    Stack = "stack": Copy, AtLeast(1), [int("dim", 0)], inf::stack, fl::zero, t(&["torch.stack"], &["tensors", "dim"]);

    // ---- opaque library calls (the export frontend; see `aten.rs`)
    /// An ATen op PyTorch executes: `torch.ops.<target>(<args>)`, result types from the
    /// export metadata. A fusion barrier; reported as a library op by its target.
    Aten = "aten": Opaque, AtLeast(0), [req("target", K::Str), string("args", ""), req("types", K::Str)], super::aten::infer, fl::zero;
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
