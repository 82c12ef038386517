//! Pointwise spellings: activations with attributes, dropout, and the binary and
//! comparison functions (`torch.add`, `torch.where`, ...).

use super::helpers::*;
use super::{Call, Lowering};
use crate::python::args::{Args, Bound};
use crate::python::ast::BinOp;
use crate::python::emitter::{Emitter, Phase};
use crate::python::error::{FrontendError, Span};
use crate::python::operators::{binary, operands};
use crate::python::value::Val;
use drtc_ir::{Attr, DType, Op};

type R<T> = Result<T, FrontendError>;

/// Lowers `key` when it is spelled in this section; `Ok(None)` when it is not.
pub(super) fn call(em: &mut Emitter, key: &str, a: &Args, span: &Span) -> R<Option<Val>> {
    let (ns, name) = key.split_once('.').unwrap_or(("", key));
    let v = match (ns, name) {
        ("F", "relu6") => {
            let b = bind(a, key, &["input", "inplace"])?;
            unary(
                em,
                &b,
                Op::Hardtanh,
                vec![("min_val", Attr::Float(0.0)), ("max_val", Attr::Float(6.0))],
            )
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
        ("torch" | "Tensor", "masked_fill") => {
            let b = bind(a, key, &["input", "mask", "value"])?;
            masked_fill(em, &b)
        }
        (
            "torch",
            "bernoulli" | "normal" | "multinomial" | "poisson" | "rand_like" | "randn_like"
            | "randint_like",
        ) if em.phase == Phase::Forward => Err(random_error(key, span)),

        _ => return Ok(None),
    };
    v.map(Some)
}

/// The ops of this section whose spellings need more than binding by the table.
pub(super) const CUSTOM: &[(&[Op], Lowering)] = &[
    (&[Op::Gelu], gelu),
    (&[Op::Clamp], clamp),
    (&[Op::Dropout], dropout),
    (&[Op::Add, Op::Sub], add_sub),
    (&[Op::Mul], mul),
    (&[Op::Div], div),
    (&[Op::Pow], pow),
    (&[Op::Lerp], lerp),
    (&[Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge], compare),
    (&[Op::Where], select_where),
];

fn gelu(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
    let ap = attr_arg(&b, op, "approximate")?;
    let s = ap.as_str().unwrap_or_default();
    if s != "none" && s != "tanh" {
        return Err(FrontendError::lowering(
            format!("gelu's approximate must be 'none' or 'tanh', got {s:?}"),
            b.span_of("approximate"),
        ));
    }
    unary(em, &b, op, vec![("approximate", ap)])
}

fn clamp(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
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
        return Ok(Val::Tensor(cur));
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

fn dropout(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let Call { key, span, .. } = *c;
    let b = c.bind(op)?;
    let x = tensor_arg(em, &b, "input")?;
    let p = float_arg(&b, op, "p")?;
    if !(0.0..=1.0).contains(&p) {
        return Err(FrontendError::lowering(
            format!("dropout probability has to be between 0 and 1, but got {p}"),
            b.span_of("p"),
        ));
    }
    // `F.dropout` trains by default, unlike the IR's `dropout` (which models eval mode)
    if p > 0.0 && b.bool("training", true)? && em.phase == Phase::Forward {
        return Err(random_error(&format!("{key}(p={p})"), span));
    }
    Ok(Val::Tensor(x))
}

fn add_sub(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let Call { span, .. } = *c;
    let b = c.bind(op)?;
    let x = b.required("input")?.clone();
    let mut y = b.required("other")?.clone();
    if let Some(alpha) = b.opt("alpha").cloned() {
        y = binary(em, BinOp::Mul, y, alpha, span)?;
    }
    let op = if op == Op::Add {
        BinOp::Add
    } else {
        BinOp::Sub
    };
    binary(em, op, x, y, span)
}

fn mul(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let Call { span, .. } = *c;
    let b = c.bind(op)?;
    binary(
        em,
        BinOp::Mul,
        b.required("input")?.clone(),
        b.required("other")?.clone(),
        span,
    )
}

fn div(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let Call { span, .. } = *c;
    let b = c.bind(op)?;
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

fn pow(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let Call { span, .. } = *c;
    let b = c.bind(op)?;
    binary(
        em,
        BinOp::Pow,
        b.required("input")?.clone(),
        b.required("exponent")?.clone(),
        span,
    )
}

fn lerp(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
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

fn compare(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let Call { span, .. } = *c;
    let b = c.bind(op)?;
    let x = b.required("input")?.clone();
    let x = em.read(x, span)?;
    let y = b.required("other")?.clone();
    let y = em.read(y, span)?;
    let (p, q) = operands(em, &x, &y, span)?;
    Ok(Val::Tensor(em.emit(op, &[p, q], vec![], span)?))
}

/// `masked_fill(input, mask, value)`: `where(mask, value, input)` with `value` (a Python
/// number or a 0-dim tensor) cast to the input's dtype; the result has the input's dtype
/// and the broadcast shape of input and mask, as in PyTorch's out-of-place form.
fn masked_fill(em: &mut Emitter, b: &Bound) -> R<Val> {
    let x = tensor_arg(em, b, "input")?;
    let mask = tensor_arg(em, b, "mask")?;
    if em.ty(mask).dtype != DType::Bool {
        return Err(FrontendError::lowering(
            format!(
                "`{}` expects a bool mask, got {} (compare first: `mask > 0`)",
                b.func,
                em.ty(mask).dtype
            ),
            b.span_of("mask"),
        ));
    }
    let d = em.ty(x).dtype;
    let value = b.required("value")?.clone();
    let value = match em.read(value, &b.span_of("value"))? {
        Val::Tensor(t) => {
            if em.ty(t).rank() != 0 {
                return Err(FrontendError::lowering(
                    format!(
                        "`{}` takes a Python number or a 0-dim tensor as its value, got a \
                         tensor of shape {:?}",
                        b.func,
                        em.ty(t).shape
                    ),
                    b.span_of("value"),
                ));
            }
            cast(em, t, d, &b.span_of("value"))?
        }
        v @ (Val::Int(_) | Val::Float(_) | Val::Bool(_)) => {
            em.scalar_const(&v, Some(d), &b.span_of("value"))?
        }
        v => {
            return Err(FrontendError::lowering(
                format!(
                    "`{}`: the value must be a number or a 0-dim tensor, got {}",
                    b.func,
                    v.type_name()
                ),
                b.span_of("value"),
            ))
        }
    };
    Ok(Val::Tensor(em.emit(
        Op::Where,
        &[mask, value, x],
        vec![],
        &b.span,
    )?))
}

fn select_where(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let Call { span, .. } = *c;
    let b = c.bind(op)?;
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
