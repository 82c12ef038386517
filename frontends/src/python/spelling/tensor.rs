//! Methods about the tensor itself: copies that are identities here (`contiguous`,
//! `clone`), dtype casts (`.float()`, `.to(...)`), and shape queries (`size`, `dim`, `numel`).

use super::helpers::*;
use crate::python::args::Args;
use crate::python::emitter::Emitter;
use crate::python::error::{FrontendError, Span};
use crate::python::value::Val;
use drtc_ir::DType;

type R<T> = Result<T, FrontendError>;

/// Lowers `key` when it is spelled in this section; `Ok(None)` when it is not.
pub(super) fn call(em: &mut Emitter, key: &str, a: &Args, span: &Span) -> R<Option<Val>> {
    let (ns, name) = key.split_once('.').unwrap_or(("", key));
    let v = match (ns, name) {
        ("Tensor", "contiguous" | "clone" | "detach" | "cpu" | "cuda" | "requires_grad_")
        | ("torch", "clone" | "detach") => {
            let x = a.pos.first().map(|(v, _)| v.clone()).unwrap_or(Val::None);
            Ok(Val::Tensor(em.tensor(&x, span)?))
        }
        ("Tensor", "float" | "double" | "half" | "bfloat16" | "long" | "int" | "bool") => {
            let b = bind(a, key, &["input", "memory_format"])?;
            let x = tensor_arg(em, &b, "input")?;
            let d = torch_dtype(name).unwrap_or(DType::F32);
            Ok(Val::Tensor(cast(em, x, d, span)?))
        }
        ("Tensor", "to" | "type") => {
            let b = bind(
                a,
                key,
                &["input", "dtype", "non_blocking", "copy", "device"],
            )?;
            let x = tensor_arg(em, &b, "input")?;
            let target = match b.opt("dtype").cloned() {
                Some(Val::DType(d)) => Some(d),
                Some(Val::Tensor(o)) => Some(em.ty(o).dtype),
                Some(Val::Device | Val::Str(_)) | None => None,
                Some(v) => {
                    return Err(FrontendError::unsupported(
                        format!("`.to({})` is not supported", v.type_name()),
                        span.clone(),
                    ))
                }
            };
            Ok(Val::Tensor(match target {
                Some(d) => cast(em, x, d, span)?,
                None => x,
            }))
        }
        ("Tensor", "type_as") => {
            let b = bind(a, key, &["input", "other"])?;
            let x = tensor_arg(em, &b, "input")?;
            let o = tensor_arg(em, &b, "other")?;
            let d = em.ty(o).dtype;
            Ok(Val::Tensor(cast(em, x, d, span)?))
        }
        ("Tensor", "size") => {
            let b = bind(a, key, &["input", "dim"])?;
            let x = tensor_arg(em, &b, "input")?;
            let shape = em.ty(x).shape.clone();
            match b.opt_int("dim")? {
                None => Ok(Val::tuple(shape.into_iter().map(Val::Int).collect())),
                Some(d) => {
                    let k = drtc_ir::op::normalize_dim(d, shape.len())
                        .map_err(|m| FrontendError::lowering(m, b.span_of("dim")))?;
                    shape.get(k).map(|&s| Val::Int(s)).ok_or_else(|| {
                        FrontendError::lowering("size() of a 0-d tensor", b.span.clone())
                    })
                }
            }
        }
        ("Tensor", "dim" | "ndimension") => {
            let b = bind(a, key, &["input"])?;
            let x = tensor_arg(em, &b, "input")?;
            Ok(Val::Int(em.ty(x).rank() as i64))
        }
        ("Tensor", "numel" | "nelement") | ("torch", "numel") => {
            let b = bind(a, key, &["input"])?;
            let x = tensor_arg(em, &b, "input")?;
            Ok(Val::Int(em.ty(x).numel() as i64))
        }

        _ => return Ok(None),
    };
    v.map(Some)
}
