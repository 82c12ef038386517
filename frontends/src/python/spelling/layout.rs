//! Views and shape: transpose, permute, reshape/view, expand, flatten, squeeze, narrow,
//! select, flip, diag/triu/tril, cat/stack, and chunk/split as tuples of slices.

use super::helpers::*;
use super::{Call, Lowering};
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
        ("torch" | "Tensor", "chunk") => {
            let b = bind(a, key, &["input", "chunks", "dim"])?;
            let x = tensor_arg(em, &b, "input")?;
            let (dim, n) = split_dim(em, &b, x)?;
            let chunks = b.req_int("chunks")?;
            if chunks <= 0 {
                return Err(FrontendError::lowering(
                    format!("`{key}` expects `chunks` to be greater than 0, got {chunks}"),
                    b.span_of("chunks"),
                ));
            }
            let sizes = if n == 0 {
                // PyTorch keeps the number of chunks for an empty dim: all empty
                vec![0; chunks as usize]
            } else {
                split_sizes(n, (n + chunks - 1) / chunks)
            };
            slices(em, x, dim, &sizes, &b.span)
        }
        ("torch" | "Tensor", "split") => {
            let size = if ns == "torch" {
                "split_size_or_sections"
            } else {
                "split_size"
            };
            let b = bind(a, key, &["input", size, "dim"])?;
            let x = tensor_arg(em, &b, "input")?;
            let (dim, n) = split_dim(em, &b, x)?;
            let sizes = match b.required(size)? {
                Val::Int(s) if *s < 0 || (*s == 0 && n > 0) => {
                    return Err(FrontendError::lowering(
                        format!(
                            "`{key}`: the split size must be positive (0 only for an empty \
                             dimension), got {s}"
                        ),
                        b.span_of(size),
                    ))
                }
                // one empty piece of an empty dimension, as in PyTorch
                Val::Int(_) if n == 0 => vec![0],
                Val::Int(s) => split_sizes(n, *s),
                v @ (Val::List(_) | Val::Tuple(_)) => {
                    let sizes = section_sizes(&b, size, v)?;
                    if sizes.iter().sum::<i64>() != n || sizes.is_empty() {
                        return Err(FrontendError::lowering(
                            format!(
                                "`{key}` expects the sizes {sizes:?} to sum exactly to {n} \
                                 (the size of dimension {dim})"
                            ),
                            b.span_of(size),
                        ));
                    }
                    sizes
                }
                v => {
                    return Err(FrontendError::lowering(
                        format!(
                            "`{key}`: the split size must be an int or a list of ints, got {}",
                            v.type_name()
                        ),
                        b.span_of(size),
                    ))
                }
            };
            slices(em, x, dim, &sizes, &b.span)
        }
        _ => return Ok(None),
    };
    v.map(Some)
}

/// The dimension `chunk`/`split` cut (normalized) and its size.
fn split_dim(em: &Emitter, b: &Bound, x: ValueId) -> R<(i64, i64)> {
    let ty = em.ty(x);
    let rank = ty.rank() as i64;
    let dim = b.int("dim", 0)?;
    let d = if dim < 0 { dim + rank } else { dim };
    if !(0..rank).contains(&d) {
        return Err(FrontendError::lowering(
            format!(
                "`{}`: dim {dim} is out of range for a tensor of {rank} dimension(s)",
                b.func
            ),
            b.span_of("dim"),
        ));
    }
    Ok((d, ty.shape[d as usize]))
}

/// PyTorch's pieces of a dimension of size `n > 0` cut every `size`: all `size` long but
/// the last, which holds what is left.
fn split_sizes(n: i64, size: i64) -> Vec<i64> {
    (0..n)
        .step_by(size as usize)
        .map(|start| size.min(n - start))
        .collect()
}

/// The sizes of `split(x, [a, b, ...])`: non-negative ints.
fn section_sizes(b: &Bound, name: &str, v: &Val) -> R<Vec<i64>> {
    let items = v.items().unwrap_or(&[]);
    items
        .iter()
        .map(|i| match i {
            Val::Int(s) if *s >= 0 => Ok(*s),
            other => Err(FrontendError::lowering(
                format!(
                    "`{}`: split sizes must be non-negative ints, got {}",
                    b.func,
                    match other {
                        Val::Int(s) => s.to_string(),
                        o => o.type_name().to_string(),
                    }
                ),
                b.span_of(name),
            )),
        })
        .collect()
}

/// The tuple of consecutive slices of `x` along `dim` with these sizes.
fn slices(em: &mut Emitter, x: ValueId, dim: i64, sizes: &[i64], span: &Span) -> R<Val> {
    let mut out = vec![];
    let mut start = 0;
    for &s in sizes {
        let v = em.emit(
            Op::Slice,
            &[x],
            vec![
                ("dim", Attr::Int(dim)),
                ("start", Attr::Int(start)),
                ("end", Attr::Int(start + s)),
                ("step", Attr::Int(1)),
            ],
            span,
        )?;
        out.push(Val::Tensor(v));
        start += s;
    }
    Ok(Val::tuple(out))
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
