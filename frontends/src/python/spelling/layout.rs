//! Views and shape: transpose, permute, reshape/view, expand, flatten, squeeze, narrow,
//! select, flip, diag/triu/tril, cat/stack.

use super::helpers::*;
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
        ("torch" | "Tensor", "transpose" | "swapaxes" | "swapdims") => {
            let b = bind(a, key, &["input", "dim0", "dim1"])?;
            let x = tensor_arg(em, &b, "input")?;
            let (d0, d1) = (b.req_int("dim0")?, b.req_int("dim1")?);
            Ok(Val::Tensor(em.emit(
                Op::Transpose,
                &[x],
                vec![("dim0", Attr::Int(d0)), ("dim1", Attr::Int(d1))],
                &b.span,
            )?))
        }
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
        ("torch", "permute") | ("Tensor", "permute") => {
            let b = bind(a, key, &["input", "*dims"])?;
            let x = tensor_arg(em, &b, "input")?;
            let dims = size_arg(&b, "dims")?;
            Ok(Val::Tensor(em.emit(
                Op::Permute,
                &[x],
                vec![("dims", Attr::Ints(dims))],
                &b.span,
            )?))
        }
        ("Tensor", "view" | "reshape") | ("torch", "reshape") => {
            let b = bind(a, key, &["input", "*shape"])?;
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
        ("Tensor", "expand") | ("torch", "broadcast_to") => {
            let b = bind(a, key, &["input", "*size"])?;
            let x = tensor_arg(em, &b, "input")?;
            let shape = size_arg(&b, "size")?;
            Ok(Val::Tensor(em.emit(
                Op::Expand,
                &[x],
                vec![("shape", Attr::Ints(shape))],
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "flatten") => {
            let b = bind(a, key, &["input", "start_dim", "end_dim"])?;
            let x = tensor_arg(em, &b, "input")?;
            let attrs = vec![
                ("start_dim", Attr::Int(b.int("start_dim", 0)?)),
                ("end_dim", Attr::Int(b.int("end_dim", -1)?)),
            ];
            Ok(Val::Tensor(em.emit(Op::Flatten, &[x], attrs, &b.span)?))
        }
        ("torch" | "Tensor", "squeeze") => {
            let b = bind(a, key, &["input", "dim"])?;
            let x = tensor_arg(em, &b, "input")?;
            Ok(Val::Tensor(em.emit(
                Op::Squeeze,
                &[x],
                vec![("dim", dims_attr(&b, "dim")?)],
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "unsqueeze") => {
            let b = bind(a, key, &["input", "dim"])?;
            let x = tensor_arg(em, &b, "input")?;
            Ok(Val::Tensor(em.emit(
                Op::Unsqueeze,
                &[x],
                vec![("dim", Attr::Int(b.req_int("dim")?))],
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "narrow") => {
            let b = bind(a, key, &["input", "dim", "start", "length"])?;
            let x = tensor_arg(em, &b, "input")?;
            let attrs = vec![
                ("dim", Attr::Int(b.req_int("dim")?)),
                ("start", Attr::Int(b.req_int("start")?)),
                ("length", Attr::Int(b.req_int("length")?)),
            ];
            Ok(Val::Tensor(em.emit(Op::Narrow, &[x], attrs, &b.span)?))
        }
        ("torch" | "Tensor", "select") => {
            let b = bind(a, key, &["input", "dim", "index"])?;
            let x = tensor_arg(em, &b, "input")?;
            let attrs = vec![
                ("dim", Attr::Int(b.req_int("dim")?)),
                ("index", Attr::Int(b.req_int("index")?)),
            ];
            Ok(Val::Tensor(em.emit(Op::Select, &[x], attrs, &b.span)?))
        }
        ("torch", "flip") | ("Tensor", "flip") => {
            let b = bind(a, key, &["input", "*dims"])?;
            let x = tensor_arg(em, &b, "input")?;
            let dims = size_arg(&b, "dims")?;
            Ok(Val::Tensor(em.emit(
                Op::Flip,
                &[x],
                vec![("dims", Attr::Ints(dims))],
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "diag" | "triu" | "tril") => {
            let b = bind(a, key, &["input", "diagonal"])?;
            let x = tensor_arg(em, &b, "input")?;
            let op = match name {
                "diag" => Op::Diag,
                "triu" => Op::Triu,
                _ => Op::Tril,
            };
            Ok(Val::Tensor(em.emit(
                op,
                &[x],
                vec![("diagonal", Attr::Int(b.int("diagonal", 0)?))],
                &b.span,
            )?))
        }
        ("torch", "cat" | "concat" | "concatenate" | "stack") => {
            let b = bind(a, key, &["tensors", "dim"])?;
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
            let op = if name == "stack" { Op::Stack } else { Op::Cat };
            Ok(Val::Tensor(em.emit(
                op,
                &ins,
                vec![("dim", Attr::Int(b.int("dim", 0)?))],
                &b.span,
            )?))
        }
        _ => return Ok(None),
    };
    v.map(Some)
}
