//! Pointwise spellings: activations with attributes, dropout, and the binary and
//! comparison functions (`torch.add`, `torch.where`, ...).

use super::helpers::*;
use crate::python::args::Args;
use crate::python::ast::{BinOp, CmpOp};
use crate::python::emitter::{Emitter, Phase};
use crate::python::error::{FrontendError, Span};
use crate::python::operators::{binary, operands, tensor_compare};
use crate::python::value::Val;
use drtc_ir::{Attr, Op};

type R<T> = Result<T, FrontendError>;

/// Lowers `key` when it is spelled in this section; `Ok(None)` when it is not.
pub(super) fn call(em: &mut Emitter, key: &str, a: &Args, span: &Span) -> R<Option<Val>> {
    let (ns, name) = key.split_once('.').unwrap_or(("", key));
    let v = match (ns, name) {
        ("F", "leaky_relu") => {
            let b = bind(a, key, &["input", "negative_slope", "inplace"])?;
            let s = b.float("negative_slope", 0.01)?;
            unary(
                em,
                &b,
                Op::LeakyRelu,
                vec![("negative_slope", Attr::Float(s))],
            )
        }
        ("F", "gelu") => {
            let b = bind(a, key, &["input", "approximate"])?;
            let ap = b.str("approximate", "none")?;
            if ap != "none" && ap != "tanh" {
                return Err(FrontendError::lowering(
                    format!("gelu's approximate must be 'none' or 'tanh', got {ap:?}"),
                    b.span_of("approximate"),
                ));
            }
            unary(em, &b, Op::Gelu, vec![("approximate", Attr::Str(ap))])
        }
        ("F", "softplus") => {
            let b = bind(a, key, &["input", "beta", "threshold"])?;
            let (beta, th) = (b.float("beta", 1.0)?, b.float("threshold", 20.0)?);
            unary(
                em,
                &b,
                Op::Softplus,
                vec![("beta", Attr::Float(beta)), ("threshold", Attr::Float(th))],
            )
        }
        ("F", "elu") => {
            let b = bind(a, key, &["input", "alpha", "inplace"])?;
            let alpha = b.float("alpha", 1.0)?;
            unary(em, &b, Op::Elu, vec![("alpha", Attr::Float(alpha))])
        }
        ("F", "hardtanh") => {
            let b = bind(a, key, &["input", "min_val", "max_val", "inplace"])?;
            let (lo, hi) = (b.float("min_val", -1.0)?, b.float("max_val", 1.0)?);
            unary(
                em,
                &b,
                Op::Hardtanh,
                vec![("min_val", Attr::Float(lo)), ("max_val", Attr::Float(hi))],
            )
        }
        ("F", "relu6") => {
            let b = bind(a, key, &["input", "inplace"])?;
            unary(
                em,
                &b,
                Op::Hardtanh,
                vec![("min_val", Attr::Float(0.0)), ("max_val", Attr::Float(6.0))],
            )
        }
        ("torch" | "Tensor", "clamp" | "clip" | "clamp_") => {
            let b = bind(a, key, &["input", "min", "max"])?;
            let x = tensor_arg(em, &b, "input")?;
            let lo = b.opt("min").cloned();
            let hi = b.opt("max").cloned();
            if lo.is_none() && hi.is_none() {
                return Err(FrontendError::lowering(
                    "clamp needs at least one of `min` and `max`",
                    b.span.clone(),
                ));
            }
            let is_tensor = |v: &Option<Val>| matches!(v, Some(Val::Tensor(_) | Val::Param(_)));
            if is_tensor(&lo) || is_tensor(&hi) {
                let mut cur = x;
                if let Some(l) = lo {
                    let l = em.read(l, &b.span)?;
                    let (p, q) = operands(em, &Val::Tensor(cur), &l, &b.span)?;
                    cur = em.emit(Op::Maximum, &[p, q], vec![], &b.span)?;
                }
                if let Some(h) = hi {
                    let h = em.read(h, &b.span)?;
                    let (p, q) = operands(em, &Val::Tensor(cur), &h, &b.span)?;
                    cur = em.emit(Op::Minimum, &[p, q], vec![], &b.span)?;
                }
                return Ok(Some(Val::Tensor(cur)));
            }
            let attr = |v: Option<f64>| v.map_or(Attr::None, Attr::Float);
            let (l, h) = (b.opt_float("min")?, b.opt_float("max")?);
            Ok(Val::Tensor(em.emit(
                Op::Clamp,
                &[x],
                vec![("min", attr(l)), ("max", attr(h))],
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "clamp_min") => {
            let b = bind(a, key, &["input", "min"])?;
            let m = b.float("min", 0.0)?;
            unary(em, &b, Op::Clamp, vec![("min", Attr::Float(m))])
        }
        ("torch" | "Tensor", "square") => {
            let b = bind(a, key, &["input"])?;
            let x = tensor_arg(em, &b, "input")?;
            Ok(Val::Tensor(em.emit(Op::Mul, &[x, x], vec![], &b.span)?))
        }
        ("F", "dropout" | "dropout1d" | "dropout2d" | "dropout3d" | "alpha_dropout") => {
            let b = bind(a, key, &["input", "p", "training", "inplace"])?;
            let x = tensor_arg(em, &b, "input")?;
            let p = b.float("p", 0.5)?;
            if !(0.0..=1.0).contains(&p) {
                return Err(FrontendError::lowering(
                    format!("dropout probability has to be between 0 and 1, but got {p}"),
                    b.span_of("p"),
                ));
            }
            if p > 0.0 && b.bool("training", true)? && em.phase == Phase::Forward {
                return Err(random_error(&format!("{key}(p={p})"), span));
            }
            Ok(Val::Tensor(x))
        }
        (
            "torch",
            "bernoulli" | "normal" | "multinomial" | "poisson" | "rand_like" | "randn_like"
            | "randint_like",
        ) if em.phase == Phase::Forward => Err(random_error(key, span)),

        // ---- binary
        ("torch" | "Tensor", "add" | "sub" | "subtract" | "add_" | "sub_") => {
            let b = bind(a, key, &["input", "other", "alpha"])?;
            let x = b.required("input")?.clone();
            let mut y = b.required("other")?.clone();
            if let Some(alpha) = b.opt("alpha").cloned() {
                y = binary(em, BinOp::Mul, y, alpha, span)?;
            }
            let op = if name.starts_with("add") {
                BinOp::Add
            } else {
                BinOp::Sub
            };
            binary(em, op, x, y, span)
        }
        ("torch" | "Tensor", "mul" | "multiply" | "mul_") => {
            let b = bind(a, key, &["input", "other"])?;
            binary(
                em,
                BinOp::Mul,
                b.required("input")?.clone(),
                b.required("other")?.clone(),
                span,
            )
        }
        ("torch" | "Tensor", "div" | "divide" | "true_divide" | "div_") => {
            let b = bind(a, key, &["input", "other", "rounding_mode"])?;
            if b.opt("rounding_mode").is_some() {
                return Err(FrontendError::unsupported(
                    "division with a rounding_mode is not in drtc's op set",
                    b.span_of("rounding_mode"),
                ));
            }
            binary(
                em,
                BinOp::Div,
                b.required("input")?.clone(),
                b.required("other")?.clone(),
                span,
            )
        }
        ("torch" | "Tensor", "pow") => {
            let b = bind(a, key, &["input", "exponent"])?;
            binary(
                em,
                BinOp::Pow,
                b.required("input")?.clone(),
                b.required("exponent")?.clone(),
                span,
            )
        }
        ("torch" | "Tensor", "maximum" | "minimum" | "fmax" | "fmin") => {
            let b = bind(a, key, &["input", "other"])?;
            let x = tensor_arg(em, &b, "input")?;
            let y = tensor_arg(em, &b, "other")?;
            let op = if name.ends_with("max") || name == "maximum" {
                Op::Maximum
            } else {
                Op::Minimum
            };
            Ok(Val::Tensor(em.emit(op, &[x, y], vec![], &b.span)?))
        }
        ("torch" | "Tensor", "lerp") => {
            let b = bind(a, key, &["input", "end", "weight"])?;
            let x = tensor_arg(em, &b, "input")?;
            let e = tensor_arg(em, &b, "end")?;
            let w = tensor_or_scalar(em, &b, "weight", x)?;
            Ok(Val::Tensor(em.emit(
                Op::Lerp,
                &[x, e, w],
                vec![],
                &b.span,
            )?))
        }
        (
            "torch" | "Tensor",
            "eq" | "ne" | "lt" | "le" | "gt" | "ge" | "greater" | "less" | "greater_equal"
            | "less_equal" | "not_equal",
        ) => {
            let b = bind(a, key, &["input", "other"])?;
            let op = match name {
                "eq" => CmpOp::Eq,
                "ne" | "not_equal" => CmpOp::Ne,
                "lt" | "less" => CmpOp::Lt,
                "le" | "less_equal" => CmpOp::Le,
                "gt" | "greater" => CmpOp::Gt,
                _ => CmpOp::Ge,
            };
            let x = b.required("input")?.clone();
            let x = em.read(x, span)?;
            let y = b.required("other")?.clone();
            let y = em.read(y, span)?;
            tensor_compare(em, op, &x, &y, span)
        }
        ("torch" | "Tensor", "where") => {
            let b = bind(a, key, &["condition", "input", "other"])?;
            let c = tensor_arg(em, &b, "condition")?;
            let x = b.required("input")?.clone();
            let x = em.read(x, span)?;
            let y = b.required("other")?.clone();
            let y = em.read(y, span)?;
            let (p, q) = operands(em, &x, &y, span)?;
            Ok(Val::Tensor(em.emit(
                Op::Where,
                &[c, p, q],
                vec![],
                &b.span,
            )?))
        }

        _ => return Ok(None),
    };
    v.map(Some)
}
