//! Contractions: matmul, bmm, linear, einsum, scaled dot-product attention.

use super::helpers::*;
use super::{Call, Lowering};

use crate::python::emitter::{Emitter, Phase};
use crate::python::error::FrontendError;
use crate::python::value::Val;
use drtc_ir::{Attr, Op};

type R<T> = Result<T, FrontendError>;

/// The ops of this section whose spellings need more than binding by the table.
pub(super) const CUSTOM: &[(&[Op], Lowering)] = &[
    (&[Op::Matmul], matmul),
    (&[Op::Einsum], einsum),
    (&[Op::Attention], attention),
];

fn matmul(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let Call { name, .. } = *c;
    let b = c.bind(op)?;
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

fn einsum(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
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

fn attention(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let Call { key, span, .. } = *c;
    let b = c.bind(op)?;
    let mut ins = vec![
        tensor_arg(em, &b, "query")?,
        tensor_arg(em, &b, "key")?,
        tensor_arg(em, &b, "value")?,
    ];
    if let Some(m) = opt_tensor_arg(em, &b, "attn_mask")? {
        ins.push(m);
    }
    let p = float_arg(&b, op, "dropout_p")?;
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
        ("is_causal", attr_arg(&b, op, "is_causal")?),
        ("scale", scale),
    ];
    Ok(Val::Tensor(em.emit(Op::Attention, &ins, attrs, &b.span)?))
}
