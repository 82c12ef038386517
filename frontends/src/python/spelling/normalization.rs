//! Normalizations: batch, instance, layer, group and RMS norm.

use super::helpers::*;
use crate::python::args::{Args, Bound};
use crate::python::emitter::Emitter;
use crate::python::error::{FrontendError, Span};
use crate::python::value::Val;
use drtc_ir::{Attr, Op, ValueId};

type R<T> = Result<T, FrontendError>;

/// Lowers `key` when it is spelled in this section; `Ok(None)` when it is not.
pub(super) fn call(em: &mut Emitter, key: &str, a: &Args, _span: &Span) -> R<Option<Val>> {
    let (ns, name) = key.split_once('.').unwrap_or(("", key));
    let v = match (ns, name) {
        ("F", "batch_norm") => {
            let b = bind(
                a,
                key,
                &[
                    "input",
                    "running_mean",
                    "running_var",
                    "weight",
                    "bias",
                    "training",
                    "momentum",
                    "eps",
                ],
            )?;
            if !b.bool("training", false)? {
                return Err(FrontendError::unsupported(
                    "batch_norm in eval mode (training=False) normalizes with running statistics, which drtc's op set does not model; pass training=True",
                    b.span_of("training"),
                ));
            }
            let x = tensor_arg(em, &b, "input")?;
            let ins = affine_inputs(em, &b, x)?;
            let attrs = vec![
                ("training", Attr::Bool(true)),
                ("momentum", Attr::Float(b.float("momentum", 0.1)?)),
                ("eps", Attr::Float(b.float("eps", 1e-5)?)),
            ];
            Ok(Val::Tensor(em.emit(Op::BatchNorm, &ins, attrs, &b.span)?))
        }
        ("F", "instance_norm") => {
            let b = bind(
                a,
                key,
                &[
                    "input",
                    "running_mean",
                    "running_var",
                    "weight",
                    "bias",
                    "use_input_stats",
                    "momentum",
                    "eps",
                ],
            )?;
            if !b.bool("use_input_stats", true)? {
                return Err(FrontendError::unsupported(
                    "instance_norm with use_input_stats=False is not in drtc's op set",
                    b.span_of("use_input_stats"),
                ));
            }
            let x = tensor_arg(em, &b, "input")?;
            let ins = affine_inputs(em, &b, x)?;
            Ok(Val::Tensor(em.emit(
                Op::InstanceNorm,
                &ins,
                vec![("eps", Attr::Float(b.float("eps", 1e-5)?))],
                &b.span,
            )?))
        }
        ("F", "layer_norm") => {
            let b = bind(
                a,
                key,
                &["input", "normalized_shape", "weight", "bias", "eps"],
            )?;
            let x = tensor_arg(em, &b, "input")?;
            let ns = b.as_ints("normalized_shape", b.required("normalized_shape")?)?;
            let ins = affine_inputs(em, &b, x)?;
            Ok(Val::Tensor(em.emit(
                Op::LayerNorm,
                &ins,
                vec![
                    ("normalized_shape", Attr::Ints(ns)),
                    ("eps", Attr::Float(b.float("eps", 1e-5)?)),
                ],
                &b.span,
            )?))
        }
        ("F", "group_norm") => {
            let b = bind(a, key, &["input", "num_groups", "weight", "bias", "eps"])?;
            let x = tensor_arg(em, &b, "input")?;
            let g = b.req_int("num_groups")?;
            let ins = affine_inputs(em, &b, x)?;
            Ok(Val::Tensor(em.emit(
                Op::GroupNorm,
                &ins,
                vec![
                    ("num_groups", Attr::Int(g)),
                    ("eps", Attr::Float(b.float("eps", 1e-5)?)),
                ],
                &b.span,
            )?))
        }
        ("F", "rms_norm") => {
            let b = bind(a, key, &["input", "normalized_shape", "weight", "eps"])?;
            let x = tensor_arg(em, &b, "input")?;
            let ns = b.as_ints("normalized_shape", b.required("normalized_shape")?)?;
            let mut ins = vec![x];
            if let Some(w) = opt_tensor_arg(em, &b, "weight")? {
                ins.push(w);
            }
            let eps = b.opt_float("eps")?.map_or(Attr::None, Attr::Float);
            Ok(Val::Tensor(em.emit(
                Op::RmsNorm,
                &ins,
                vec![("normalized_shape", Attr::Ints(ns)), ("eps", eps)],
                &b.span,
            )?))
        }

        _ => return Ok(None),
    };
    v.map(Some)
}

/// `[x, weight?, bias?]` for normalizations; a bias without a weight is not expressible.
fn affine_inputs(em: &mut Emitter, b: &Bound, x: ValueId) -> R<Vec<ValueId>> {
    let w = opt_tensor_arg(em, b, "weight")?;
    let bias = opt_tensor_arg(em, b, "bias")?;
    match (w, bias) {
        (None, Some(_)) => Err(FrontendError::unsupported(
            "a normalization with a bias but no weight is not in drtc's op set",
            b.span_of("bias"),
        )),
        (w, bias) => Ok(std::iter::once(x).chain(w).chain(bias).collect()),
    }
}
