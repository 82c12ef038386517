//! Creation: `torch.zeros/ones/full/rand*`, `*_like`, `torch.tensor`; random or
//! uninitialized data is only allowed outside forward.

use super::helpers::*;
use crate::python::args::Args;
use crate::python::emitter::{Emitter, Phase};
use crate::python::error::{FrontendError, Span};
use crate::python::value::Val;
use drtc_ir::{Attr, DType, Op, TensorType};

type R<T> = Result<T, FrontendError>;

/// Lowers `key` when it is spelled in this section; `Ok(None)` when it is not.
pub(super) fn call(em: &mut Emitter, key: &str, a: &Args, span: &Span) -> R<Option<Val>> {
    let (ns, name) = key.split_once('.').unwrap_or(("", key));
    let v = match (ns, name) {
        ("torch", "rand" | "randn" | "zeros" | "ones" | "empty") => {
            let b = bind(
                a,
                key,
                &[
                    "*size",
                    "dtype",
                    "device",
                    "requires_grad",
                    "layout",
                    "generator",
                    "pin_memory",
                ],
            )?;
            let shape = size_arg(&b, "size")?;
            let dtype = dtype_arg(&b, "dtype")?.unwrap_or(DType::F32);
            let fill = match name {
                "zeros" => Some(0.0),
                "ones" => Some(1.0),
                _ => None,
            };
            if matches!(name, "rand" | "randn") && !dtype.is_float() {
                return Err(FrontendError::lowering(
                    format!("`{key}` needs a floating-point dtype"),
                    b.span_of("dtype"),
                ));
            }
            create(em, key, TensorType::new(dtype, shape), fill, span)
        }
        ("torch", "full") => {
            let b = bind(
                a,
                key,
                &["size", "fill_value", "dtype", "device", "requires_grad"],
            )?;
            let shape = size_arg(&b, "size")?;
            let v = b.required("fill_value")?.clone();
            let value = v.as_number().ok_or_else(|| {
                FrontendError::lowering("fill_value must be a number", b.span_of("fill_value"))
            })?;
            let dtype = dtype_arg(&b, "dtype")?.unwrap_or(match v {
                Val::Float(_) => DType::F32,
                Val::Bool(_) => DType::Bool,
                _ => DType::I64,
            });
            create(em, key, TensorType::new(dtype, shape), Some(value), span)
        }
        ("torch", "randint") => {
            let b = bind(
                a,
                key,
                &[
                    "low",
                    "high",
                    "size",
                    "dtype",
                    "device",
                    "generator",
                    "requires_grad",
                ],
            )?;
            // randint(high, size) or randint(low, high, size)
            let size_name = if b.get("size").is_some() {
                "size"
            } else {
                "high"
            };
            let shape = size_arg(&b, size_name)?;
            let dtype = dtype_arg(&b, "dtype")?.unwrap_or(DType::I64);
            create(em, key, TensorType::new(dtype, shape), None, span)
        }
        (
            "torch",
            "zeros_like" | "ones_like" | "empty_like" | "full_like" | "rand_like" | "randn_like",
        ) => {
            let params: &[&'static str] = if name == "full_like" {
                &[
                    "input",
                    "fill_value",
                    "dtype",
                    "device",
                    "requires_grad",
                    "memory_format",
                    "layout",
                ]
            } else {
                &[
                    "input",
                    "dtype",
                    "device",
                    "requires_grad",
                    "memory_format",
                    "layout",
                ]
            };
            let b = bind(a, key, params)?;
            let x = tensor_arg(em, &b, "input")?;
            let mut ty = em.ty(x).clone();
            if let Some(d) = dtype_arg(&b, "dtype")? {
                ty.dtype = d;
            }
            let fill = match name {
                "zeros_like" => Some(0.0),
                "ones_like" => Some(1.0),
                "full_like" => Some(b.float("fill_value", 0.0)?),
                _ => None,
            };
            create(em, key, ty, fill, span)
        }
        ("torch", "tensor" | "as_tensor") => {
            let b = bind(a, key, &["data", "dtype", "device", "requires_grad"])?;
            let data = b.required("data")?.clone();
            if let Val::Tensor(t) = data {
                return Ok(Some(Val::Tensor(t)));
            }
            let (shape, d, fill) = literal_type(&data, &b.span_of("data"))?;
            let dtype = dtype_arg(&b, "dtype")?.unwrap_or(d);
            match (em.phase, fill) {
                (Phase::Forward, None) => Err(FrontendError::unsupported(
                    "a torch.tensor constant with differing values is not supported (only uniform constants become `full`)",
                    span.clone(),
                )),
                _ => create(em, key, TensorType::new(dtype, shape), fill.or(Some(0.0)), span),
            }
        }
        (
            "torch",
            "randperm" | "bernoulli" | "normal" | "multinomial" | "poisson" | "randint_like"
            | "manual_seed",
        ) => {
            if em.phase == Phase::Forward {
                return Err(random_error(key, span));
            }
            Err(FrontendError::unsupported(
                format!("`{key}` is not supported"),
                span.clone(),
            ))
        }
        _ => return Ok(None),
    };
    v.map(Some)
}

/// A new tensor from a creation function: random or uninitialized data is only allowed
/// while preparing inputs or parameters; in forward, constant fills become `full`.
fn create(em: &mut Emitter, name: &str, ty: TensorType, fill: Option<f64>, span: &Span) -> R<Val> {
    let ty = em.check_type(ty, span)?;
    match (em.phase, fill) {
        (Phase::Forward, Some(v)) => Ok(Val::Tensor(em.emit(
            Op::Full,
            &[],
            vec![
                ("shape", Attr::Ints(ty.shape.clone())),
                ("value", Attr::Float(v)),
                ("dtype", Attr::DType(ty.dtype)),
            ],
            span,
        )?)),
        (Phase::Forward, None) if name.contains("empty") => Err(FrontendError::unsupported(
            format!("`{name}` makes uninitialized memory; drtc needs defined values"),
            span.clone(),
        )),
        (Phase::Forward, None) => Err(random_error(name, span)),
        _ => Ok(Val::Tensor(em.scratch_tensor(ty, span)?)),
    }
}

/// The shape and dtype of `torch.tensor(data)`.
fn literal_type(v: &Val, span: &Span) -> R<(Vec<i64>, DType, Option<f64>)> {
    match v {
        Val::Bool(b) => Ok((vec![], DType::Bool, Some(*b as i64 as f64))),
        Val::Int(i) => Ok((vec![], DType::I64, Some(*i as f64))),
        Val::Float(x) => Ok((vec![], DType::F32, Some(*x))),
        Val::Tuple(items) | Val::List(items) => {
            let mut inner: Option<(Vec<i64>, DType, Option<f64>)> = None;
            for it in items.iter() {
                let (s, d, f) = literal_type(it, span)?;
                inner = Some(match inner {
                    None => (s, d, f),
                    Some((s0, d0, f0)) => {
                        if s0 != s {
                            return Err(FrontendError::lowering(
                                "ragged nested sequence in torch.tensor",
                                span.clone(),
                            ));
                        }
                        (
                            s0,
                            drtc_ir::dtype::promote_types(d0, d),
                            if f0 == f { f0 } else { None },
                        )
                    }
                });
            }
            let (mut s, d, f) = inner.unwrap_or((vec![], DType::F32, Some(0.0)));
            s.insert(0, items.len() as i64);
            Ok((s, d, f))
        }
        other => Err(FrontendError::unsupported(
            format!("torch.tensor of {}", other.type_name()),
            span.clone(),
        )),
    }
}
