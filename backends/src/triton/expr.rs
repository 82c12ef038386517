//! Pointwise ops as Triton expressions over already-loaded values.
//!
//! Values are computed in `compute_ty` of their dtype (halves in f32). Each function
//! returns `None` for what has no Triton form yet, so the caller can fall back to PyTorch.

use super::ty::{compute_ty, float_lit, lit};
use drtc_ir::{Attr, Attrs, DType, Op};

/// An argument of an expression: its code, dtype, and value when it is a known constant.
#[derive(Clone, Debug)]
pub struct Operand {
    pub expr: String,
    pub dtype: DType,
    pub constant: Option<f64>,
}

/// `x` converted to the compute type of `d`.
pub fn convert(x: &Operand, d: DType) -> String {
    if let Some(c) = x.constant {
        return lit(c, d);
    }
    if compute_ty(x.dtype) == compute_ty(d) {
        x.expr.clone()
    } else if d == DType::Bool {
        format!("({} != 0)", x.expr)
    } else {
        format!("({}).to({})", x.expr, compute_ty(d))
    }
}

fn f(attrs: &Attrs, name: &str) -> Option<f64> {
    attrs.get(name).and_then(Attr::as_float)
}

fn tanh(x: &str) -> String {
    format!("(2.0 * tl.sigmoid(2.0 * {x}) - 1.0)")
}

fn softplus(x: &str, beta: f64, threshold: f64) -> String {
    let b = float_lit(beta);
    format!(
        "tl.where({x} * {b} > {t}, {x}, tl.log(1.0 + tl.exp(tl.minimum({x} * {b}, {t}))) / {b})",
        t = float_lit(threshold)
    )
}

/// `x ** y` where `y` may be a known constant.
fn pow(x: &str, y: &Operand, yexpr: &str) -> String {
    match y.constant {
        Some(0.0) => format!("(({x}) * 0.0 + 1.0)"),
        Some(0.5) => format!("tl.sqrt({x})"),
        Some(-0.5) => format!("tl.rsqrt({x})"),
        Some(c) if c.fract() == 0.0 && c.abs() <= 8.0 => {
            let n = c.abs() as usize;
            let prod = vec![format!("({x})"); n].join(" * ");
            if c > 0.0 {
                format!("({prod})")
            } else {
                format!("(1.0 / ({prod}))")
            }
        }
        // general case: |x|^y with the sign of x for odd integer y is not known statically
        _ => format!("tl.exp2({yexpr} * tl.log2({x}))"),
    }
}

/// The Triton expression of pointwise `op` on `args`, producing dtype `out`.
pub fn pointwise_expr(op: Op, attrs: &Attrs, args: &[Operand], out: DType) -> Option<String> {
    // operands converted to the promoted type of the inputs (for comparisons) or the result
    let promoted = args
        .iter()
        .skip(1)
        .fold(args.first().map(|a| a.dtype).unwrap_or(out), |d, a| {
            drtc_ir::dtype::promote_types(d, a.dtype)
        });
    let c = |i: usize| convert(&args[i], out);
    let x = || c(0);
    let compare = |sym: &str| {
        format!(
            "({} {sym} {})",
            convert(&args[0], promoted),
            convert(&args[1], promoted)
        )
    };
    Some(match op {
        Op::Add => format!("({} + {})", c(0), c(1)),
        Op::Sub => format!("({} - {})", c(0), c(1)),
        Op::Mul => format!("({} * {})", c(0), c(1)),
        Op::Div => format!("({} / {})", c(0), c(1)),
        Op::Maximum => format!("tl.maximum({}, {})", c(0), c(1)),
        Op::Minimum => format!("tl.minimum({}, {})", c(0), c(1)),
        Op::Pow => {
            if !out.is_float() {
                return None;
            }
            pow(&c(0), &args[1], &c(1))
        }
        Op::Lerp => format!("({a} + {w} * ({b} - {a}))", a = c(0), b = c(1), w = c(2)),
        Op::Eq => compare("=="),
        Op::Ne => compare("!="),
        Op::Lt => compare("<"),
        Op::Le => compare("<="),
        Op::Gt => compare(">"),
        Op::Ge => compare(">="),
        Op::Where => format!("tl.where({}, {}, {})", convert(&args[0], DType::Bool), c(1), c(2)),
        Op::Cast | Op::Dropout => x(),
        Op::Relu => {
            if out.is_float() {
                format!("tl.maximum({}, 0.0)", x())
            } else {
                format!("tl.maximum({}, 0)", x())
            }
        }
        Op::LeakyRelu => {
            let s = float_lit(f(attrs, "negative_slope")?);
            format!("tl.where({x} > 0.0, {x}, {x} * {s})", x = x())
        }
        Op::Sigmoid => format!("tl.sigmoid({})", x()),
        Op::Tanh => tanh(&x()),
        Op::Silu => format!("({x} * tl.sigmoid({x}))", x = x()),
        Op::Gelu => match attrs.get("approximate").and_then(Attr::as_str) {
            Some("tanh") => {
                let x = x();
                let inner = format!("0.7978845608028654 * ({x} + 0.044715 * {x} * {x} * {x})");
                format!("(0.5 * {x} * (1.0 + {}))", tanh(&inner))
            }
            _ => format!("(0.5 * {x} * (1.0 + tl.erf({x} * 0.7071067811865476)))", x = x()),
        },
        Op::Selu => format!(
            "(1.0507009873554805 * tl.where({x} > 0.0, {x}, 1.6732632423543772 * (tl.exp({x}) - 1.0)))",
            x = x()
        ),
        Op::Hardsigmoid => format!("tl.minimum(tl.maximum({} / 6.0 + 0.5, 0.0), 1.0)", x()),
        Op::Hardswish => format!("({x} * tl.minimum(tl.maximum({x} / 6.0 + 0.5, 0.0), 1.0))", x = x()),
        Op::Softplus => softplus(&x(), f(attrs, "beta")?, f(attrs, "threshold")?),
        Op::Softsign => format!("({x} / (1.0 + tl.abs({x})))", x = x()),
        Op::Elu => {
            let a = float_lit(f(attrs, "alpha")?);
            format!("tl.where({x} > 0.0, {x}, {a} * (tl.exp({x}) - 1.0))", x = x())
        }
        Op::Hardtanh => format!(
            "tl.minimum(tl.maximum({}, {}), {})",
            x(),
            lit(f(attrs, "min_val")?, out),
            lit(f(attrs, "max_val")?, out)
        ),
        Op::Clamp => {
            let mut e = x();
            if let Some(lo) = f(attrs, "min") {
                e = format!("tl.maximum({e}, {})", lit(lo, out));
            }
            if let Some(hi) = f(attrs, "max") {
                e = format!("tl.minimum({e}, {})", lit(hi, out));
            }
            e
        }
        Op::Logsigmoid => format!(
            "(tl.minimum({x}, 0.0) - tl.log(1.0 + tl.exp(-tl.abs({x}))))",
            x = x()
        ),
        Op::Mish => {
            let x = x();
            format!("({x} * {})", tanh(&softplus(&x, 1.0, 20.0)))
        }
        Op::Abs => format!("tl.abs({})", x()),
        Op::Neg => format!("(-{})", x()),
        Op::Sign => {
            let (one, zero) = (lit(1.0, out), lit(0.0, out));
            format!(
                "tl.where({x} > {zero}, {one}, tl.where({x} < {zero}, -{one}, {zero}))",
                x = x()
            )
        }
        Op::Cos | Op::Sin | Op::Exp | Op::Exp2 | Op::Log | Op::Sqrt | Op::Rsqrt | Op::Erf => {
            format!("tl.{}({})", op.name(), x())
        }
        Op::Reciprocal => format!("(1.0 / {})", x()),
        // not pointwise: other templates (or PyTorch) compute these, never an expression
        Op::Full
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
        | Op::Stack => return None,
    })
}
