//! Losses: `F.mse_loss`, `F.smooth_l1_loss`, `F.huber_loss`, `F.kl_div`, `F.cross_entropy`,
//! `F.triplet_margin_loss`.

use super::helpers::*;
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
    let (ns, name) = key.split_once('.').unwrap_or(("", key));
    let v = match (ns, name) {
        ("F", "mse_loss" | "l1_loss_unused") => {
            let b = bind(
                a,
                key,
                &["input", "target", "size_average", "reduce", "reduction"],
            )?;
            loss2(em, &b, Op::MseLoss, vec![])
        }
        ("F", "smooth_l1_loss") => {
            let b = bind(
                a,
                key,
                &[
                    "input",
                    "target",
                    "size_average",
                    "reduce",
                    "reduction",
                    "beta",
                ],
            )?;
            let beta = b.float("beta", 1.0)?;
            loss2(em, &b, Op::SmoothL1Loss, vec![("beta", Attr::Float(beta))])
        }
        ("F", "huber_loss") => {
            let b = bind(a, key, &["input", "target", "reduction", "delta"])?;
            let delta = b.float("delta", 1.0)?;
            let l = loss2(em, &b, Op::SmoothL1Loss, vec![("beta", Attr::Float(delta))])?;
            if delta == 1.0 {
                return Ok(Some(l));
            }
            binary(em, BinOp::Mul, l, Val::Float(delta), span)
        }
        ("F", "kl_div") => {
            let b = bind(
                a,
                key,
                &[
                    "input",
                    "target",
                    "size_average",
                    "reduce",
                    "reduction",
                    "log_target",
                ],
            )?;
            let lt = b.bool("log_target", false)?;
            loss2(em, &b, Op::KlDiv, vec![("log_target", Attr::Bool(lt))])
        }
        ("F", "cross_entropy") => {
            let b = bind(
                a,
                key,
                &[
                    "input",
                    "target",
                    "weight",
                    "size_average",
                    "ignore_index",
                    "reduce",
                    "reduction",
                    "label_smoothing",
                ],
            )?;
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
        ("F", "triplet_margin_loss") => {
            let b = bind(
                a,
                key,
                &[
                    "anchor",
                    "positive",
                    "negative",
                    "margin",
                    "p",
                    "eps",
                    "swap",
                    "size_average",
                    "reduce",
                    "reduction",
                ],
            )?;
            legacy_reduction(&b)?;
            let x = tensor_arg(em, &b, "anchor")?;
            let y = tensor_arg(em, &b, "positive")?;
            let z = tensor_arg(em, &b, "negative")?;
            let attrs = vec![
                ("margin", Attr::Float(b.float("margin", 1.0)?)),
                ("p", Attr::Float(b.float("p", 2.0)?)),
                ("eps", Attr::Float(b.float("eps", 1e-6)?)),
                ("swap", Attr::Bool(b.bool("swap", false)?)),
                ("reduction", Attr::Str(b.str("reduction", "mean")?)),
            ];
            Ok(Val::Tensor(em.emit(
                Op::TripletMarginLoss,
                &[x, y, z],
                attrs,
                &b.span,
            )?))
        }

        _ => return Ok(None),
    };
    v.map(Some)
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
    attrs.push(("reduction", Attr::Str(b.str("reduction", "mean")?)));
    Ok(Val::Tensor(em.emit(op, &[x, y], attrs, &b.span)?))
}
