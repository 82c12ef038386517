//! Views and shape: transpose, permute, reshape/view, expand, flatten, squeeze, narrow,
//! select, flip, diag/triu/tril, cat/stack.

use super::helpers::*;
use super::{Call, Lowering};
use crate::python::args::Args;
use crate::python::emitter::Emitter;
use crate::python::error::{FrontendError, Span};
use crate::python::value::Val;
use drtc_ir::{Attr, Op};

type R<T> = Result<T, FrontendError>;

/// Lowers `key` when it is spelled in this section; `Ok(None)` when it is not.
pub(super) fn call(em: &mut Emitter, key: &str, a: &Args, _span: &Span) -> R<Option<Val>> {
    let (ns, name) = key.split_once('.').unwrap_or(("", key));
    let v = match (ns, name) {
        ("torch" | "Tensor", "t") => {
            let b = bind(a, key, &["input"])?;
            let x = tensor_arg(em, &b, "input")?;
            if em.ty(x).rank() > 2 {
                return Err(FrontendError::lowering(
                    "t() expects a tensor with <= 2 dimensions",
                    b.span.clone(),
                ));
            }
            if em.ty(x).rank() < 2 {
                return Ok(Some(Val::Tensor(x)));
            }
            Ok(Val::Tensor(em.emit(
                Op::Transpose,
                &[x],
                vec![("dim0", Attr::Int(0)), ("dim1", Attr::Int(1))],
                &b.span,
            )?))
        }
        ("Tensor", "view_as" | "reshape_as" | "expand_as") => {
            let b = bind(a, key, &["input", "other"])?;
            let x = tensor_arg(em, &b, "input")?;
            let o = tensor_arg(em, &b, "other")?;
            let shape = em.ty(o).shape.clone();
            let op = if name == "expand_as" {
                Op::Expand
            } else {
                Op::Reshape
            };
            Ok(Val::Tensor(em.emit(
                op,
                &[x],
                vec![("shape", Attr::Ints(shape))],
                &b.span,
            )?))
        }
        _ => return Ok(None),
    };
    v.map(Some)
}

/// The ops of this section whose spellings need more than binding by the table.
pub(super) const CUSTOM: &[(&[Op], Lowering)] = &[
    (&[Op::Permute], permute),
    (&[Op::Reshape], reshape),
    (&[Op::Expand], expand),
    (&[Op::Flip], flip),
    (&[Op::Cat, Op::Stack], cat_stack),
];

fn permute(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
    let x = tensor_arg(em, &b, "input")?;
    let dims = size_arg(&b, "dims")?;
    Ok(Val::Tensor(em.emit(
        Op::Permute,
        &[x],
        vec![("dims", Attr::Ints(dims))],
        &b.span,
    )?))
}

fn reshape(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
    let x = tensor_arg(em, &b, "input")?;
    if let Some(Val::DType(_)) = b.required("shape")?.items().and_then(|i| i.first()) {
        return Err(FrontendError::unsupported(
            "view(dtype) reinterprets bits; not supported",
            b.span.clone(),
        ));
    }
    let shape = size_arg(&b, "shape")?;
    Ok(Val::Tensor(em.emit(
        Op::Reshape,
        &[x],
        vec![("shape", Attr::Ints(shape))],
        &b.span,
    )?))
}

fn expand(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
    let x = tensor_arg(em, &b, "input")?;
    let shape = size_arg(&b, "size")?;
    Ok(Val::Tensor(em.emit(
        Op::Expand,
        &[x],
        vec![("shape", Attr::Ints(shape))],
        &b.span,
    )?))
}

fn flip(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
    let x = tensor_arg(em, &b, "input")?;
    let dims = size_arg(&b, "dims")?;
    Ok(Val::Tensor(em.emit(
        Op::Flip,
        &[x],
        vec![("dims", Attr::Ints(dims))],
        &b.span,
    )?))
}

fn cat_stack(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let Call { key, .. } = *c;
    let b = c.bind(op)?;
    let list = b.required("tensors")?.clone();
    let items = list
        .items()
        .ok_or_else(|| {
            FrontendError::lowering(
                format!("`{key}` needs a sequence of tensors"),
                b.span_of("tensors"),
            )
        })?
        .to_vec();
    let mut ins = vec![];
    for it in &items {
        ins.push(em.tensor(it, &b.span_of("tensors"))?);
    }
    if ins.is_empty() {
        return Err(FrontendError::lowering(
            format!("`{key}` needs a non-empty list of tensors"),
            b.span.clone(),
        ));
    }
    Ok(Val::Tensor(em.emit(
        op,
        &ins,
        vec![("dim", attr_arg(&b, op, "dim")?)],
        &b.span,
    )?))
}
