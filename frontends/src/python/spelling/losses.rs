//! Losses: `F.mse_loss`, `F.smooth_l1_loss`, `F.huber_loss`, `F.kl_div`, `F.cross_entropy`,
//! `F.triplet_margin_loss`.

use super::helpers::*;
use super::{Call, Lowering};
use crate::python::args::{Args, Bound};
use crate::python::ast::BinOp;
use crate::python::emitter::Emitter;
use crate::python::error::{FrontendError, Span};
use crate::python::operators::binary;
use crate::python::value::Val;
use drtc_ir::{Attr, Op};

type R<T> = Result<T, FrontendError>;

/// Lowers `key` when it is spelled in this section; `Ok(None)` when it is not.
pub(super) fn call(em: &mut Emitter, key: &str, a: &Args, span: &Span) -> R<Option<Val>> {
    match key {
        "F.huber_loss" => huber_loss(em, key, a, span).map(Some),
        _ => Ok(None),
    }
}

/// `F.huber_loss(input, target, reduction, delta)`: `delta * smooth_l1_loss(beta=delta)`.
pub fn huber_loss(em: &mut Emitter, key: &str, a: &Args, span: &Span) -> R<Val> {
    let b = bind(a, key, &["input", "target", "reduction", "delta"])?;
    // PyTorch's default delta; not an IR attribute (the IR op is smooth_l1_loss)
    let delta = b.float("delta", 1.0)?;
    let l = loss2(em, &b, Op::SmoothL1Loss, vec![("beta", Attr::Float(delta))])?;
    if delta == 1.0 {
        return Ok(l);
    }
    binary(em, BinOp::Mul, l, Val::Float(delta), span)
}

/// The legacy `size_average` / `reduce` arguments of losses: only their defaults.
fn legacy_reduction(b: &Bound) -> R<()> {
    for n in ["size_average", "reduce"] {
        if b.opt(n).is_some() {
            return Err(FrontendError::unsupported(
                format!("the deprecated `{n}` argument is not supported; use reduction="),
                b.span_of(n),
            ));
        }
    }
    Ok(())
}

fn loss2(em: &mut Emitter, b: &Bound, op: Op, mut attrs: Vec<(&'static str, Attr)>) -> R<Val> {
    legacy_reduction(b)?;
    let x = tensor_arg(em, b, "input")?;
    let y = tensor_arg(em, b, "target")?;
    attrs.push(("reduction", attr_arg(b, op, "reduction")?));
    Ok(Val::Tensor(em.emit(op, &[x, y], attrs, &b.span)?))
}

/// The ops of this section whose spellings need more than binding by the table.
pub(super) const CUSTOM: &[(&[Op], Lowering)] = &[
    (&[Op::MseLoss], mse_loss),
    (&[Op::SmoothL1Loss], smooth_l1_loss),
    (&[Op::KlDiv], kl_div),
    (&[Op::CrossEntropy], cross_entropy),
    (&[Op::TripletMarginLoss], triplet_margin_loss),
];

fn mse_loss(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
    loss2(em, &b, Op::MseLoss, vec![])
}

fn smooth_l1_loss(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
    let beta = attr_arg(&b, op, "beta")?;
    loss2(em, &b, op, vec![("beta", beta)])
}

fn kl_div(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
    let lt = attr_arg(&b, op, "log_target")?;
    loss2(em, &b, op, vec![("log_target", lt)])
}

fn cross_entropy(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
    if b.opt("weight").is_some() {
        return Err(FrontendError::unsupported(
            "cross_entropy with class weights is not in drtc's op set",
            b.span_of("weight"),
        ));
    }
    if b.float("label_smoothing", 0.0)? != 0.0 {
        return Err(FrontendError::unsupported(
            "cross_entropy with label_smoothing is not in drtc's op set",
            b.span_of("label_smoothing"),
        ));
    }
    if b.int("ignore_index", -100)? != -100 {
        return Err(FrontendError::unsupported(
            "cross_entropy with a custom ignore_index is not in drtc's op set",
            b.span_of("ignore_index"),
        ));
    }
    loss2(em, &b, Op::CrossEntropy, vec![])
}

fn triplet_margin_loss(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
    legacy_reduction(&b)?;
    let x = tensor_arg(em, &b, "anchor")?;
    let y = tensor_arg(em, &b, "positive")?;
    let z = tensor_arg(em, &b, "negative")?;
    let attrs = vec![
        ("margin", attr_arg(&b, op, "margin")?),
        ("p", attr_arg(&b, op, "p")?),
        ("eps", attr_arg(&b, op, "eps")?),
        ("swap", attr_arg(&b, op, "swap")?),
        ("reduction", attr_arg(&b, op, "reduction")?),
    ];
    Ok(Val::Tensor(em.emit(
        Op::TripletMarginLoss,
        &[x, y, z],
        attrs,
        &b.span,
    )?))
}
