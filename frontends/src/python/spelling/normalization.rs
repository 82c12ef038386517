//! Normalizations: batch, instance, layer, group and RMS norm.

use super::helpers::*;
use super::{Call, Lowering};
use crate::python::args::Bound;
use crate::python::emitter::Emitter;
use crate::python::error::FrontendError;
use crate::python::value::Val;
use drtc_ir::{Attr, Op, ValueId};

type R<T> = Result<T, FrontendError>;

/// The ops of this section whose spellings need more than binding by the table.
pub(super) const CUSTOM: &[(&[Op], Lowering)] = &[
    (&[Op::BatchNorm], batch_norm),
    (&[Op::InstanceNorm], instance_norm),
    (&[Op::LayerNorm], layer_norm),
    (&[Op::GroupNorm], group_norm),
    (&[Op::RmsNorm], rms_norm),
];

fn batch_norm(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
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
        ("momentum", attr_arg(&b, op, "momentum")?),
        ("eps", attr_arg(&b, op, "eps")?),
    ];
    Ok(Val::Tensor(em.emit(Op::BatchNorm, &ins, attrs, &b.span)?))
}

fn instance_norm(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
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
        vec![("eps", attr_arg(&b, op, "eps")?)],
        &b.span,
    )?))
}

fn layer_norm(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
    let x = tensor_arg(em, &b, "input")?;
    let ns = b.as_ints("normalized_shape", b.required("normalized_shape")?)?;
    let ins = affine_inputs(em, &b, x)?;
    Ok(Val::Tensor(em.emit(
        Op::LayerNorm,
        &ins,
        vec![
            ("normalized_shape", Attr::Ints(ns)),
            ("eps", attr_arg(&b, op, "eps")?),
        ],
        &b.span,
    )?))
}

fn group_norm(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
    let x = tensor_arg(em, &b, "input")?;
    let g = b.req_int("num_groups")?;
    let ins = affine_inputs(em, &b, x)?;
    Ok(Val::Tensor(em.emit(
        Op::GroupNorm,
        &ins,
        vec![
            ("num_groups", Attr::Int(g)),
            ("eps", attr_arg(&b, op, "eps")?),
        ],
        &b.span,
    )?))
}

fn rms_norm(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
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
