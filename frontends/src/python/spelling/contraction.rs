//! Contractions: matmul, bmm, linear, einsum, scaled dot-product attention.

use super::helpers::*;
use crate::python::args::Args;
use crate::python::emitter::{Emitter, Phase};
use crate::python::error::{FrontendError, Span};
use crate::python::value::Val;
use drtc_ir::{Attr, Op};

type R<T> = Result<T, FrontendError>;

/// Lowers `key` when it is spelled in this section; `Ok(None)` when it is not.
pub(super) fn call(em: &mut Emitter, key: &str, a: &Args, span: &Span) -> R<Option<Val>> {
    let (ns, name) = key.split_once('.').unwrap_or(("", key));
    let v = match (ns, name) {
        ("torch" | "Tensor", "matmul" | "mm") => {
            let b = bind(a, key, &["input", "other"])?;
            let x = tensor_arg(em, &b, "input")?;
            let y = tensor_arg(em, &b, "other")?;
            if name == "mm" && (em.ty(x).rank() != 2 || em.ty(y).rank() != 2) {
                return Err(FrontendError::lowering(
                    "mm needs two matrices",
                    b.span.clone(),
                ));
            }
            Ok(Val::Tensor(em.emit(
                Op::Matmul,
                &[x, y],
                vec![],
                &b.span,
            )?))
        }
        ("torch" | "Tensor", "bmm") => {
            let b = bind(a, key, &["input", "mat2"])?;
            let x = tensor_arg(em, &b, "input")?;
            let y = tensor_arg(em, &b, "mat2")?;
            Ok(Val::Tensor(em.emit(Op::Bmm, &[x, y], vec![], &b.span)?))
        }
        ("F", "linear") => {
            let b = bind(a, key, &["input", "weight", "bias"])?;
            let mut ins = vec![tensor_arg(em, &b, "input")?, tensor_arg(em, &b, "weight")?];
            if let Some(bias) = opt_tensor_arg(em, &b, "bias")? {
                ins.push(bias);
            }
            Ok(Val::Tensor(em.emit(Op::Linear, &ins, vec![], &b.span)?))
        }
        ("torch", "einsum") => {
            let b = bind(a, key, &["equation", "*operands"])?;
            let eq = match b.required("equation")? {
                Val::Str(s) => s.to_string(),
                v => {
                    return Err(FrontendError::lowering(
                        format!("einsum's equation must be a string, got {}", v.type_name()),
                        b.span_of("equation"),
                    ))
                }
            };
            let mut ops = b.required("operands")?.items().unwrap_or(&[]).to_vec();
            if ops.len() == 1 && ops[0].items().is_some() {
                ops = ops[0].items().unwrap_or(&[]).to_vec();
            }
            let mut ins = vec![];
            for o in &ops {
                ins.push(em.tensor(o, &b.span_of("operands"))?);
            }
            if ins.is_empty() {
                return Err(FrontendError::lowering(
                    "einsum needs operands",
                    b.span.clone(),
                ));
            }
            Ok(Val::Tensor(em.emit(
                Op::Einsum,
                &ins,
                vec![("equation", Attr::Str(eq))],
                &b.span,
            )?))
        }
        ("F", "scaled_dot_product_attention") => {
            let b = bind(
                a,
                key,
                &[
                    "query",
                    "key",
                    "value",
                    "attn_mask",
                    "dropout_p",
                    "is_causal",
                    "scale",
                    "enable_gqa",
                ],
            )?;
            let mut ins = vec![
                tensor_arg(em, &b, "query")?,
                tensor_arg(em, &b, "key")?,
                tensor_arg(em, &b, "value")?,
            ];
            if let Some(m) = opt_tensor_arg(em, &b, "attn_mask")? {
                ins.push(m);
            }
            let p = b.float("dropout_p", 0.0)?;
            if p > 0.0 && em.phase == Phase::Forward {
                return Err(random_error(&format!("{key}(dropout_p={p})"), span));
            }
            if b.bool("enable_gqa", false)? {
                return Err(FrontendError::unsupported(
                    "grouped-query attention (enable_gqa) is not supported",
                    b.span_of("enable_gqa"),
                ));
            }
            let scale = b.opt_float("scale")?.map_or(Attr::None, Attr::Float);
            let attrs = vec![
                ("dropout_p", Attr::Float(p)),
                ("is_causal", Attr::Bool(b.bool("is_causal", false)?)),
                ("scale", scale),
            ];
            Ok(Val::Tensor(em.emit(Op::Attention, &ins, attrs, &b.span)?))
        }

        _ => return Ok(None),
    };
    v.map(Some)
}
