//! Subscripts: `x[0]`, `x[:, 1:3]`, `x[..., None]` on tensors (select / slice / unsqueeze),
//! and indexing of tuples, lists and (values, indices) pairs.

use super::emitter::Emitter;
use super::error::{FrontendError, Span};
use super::value::Val;
use drtc_ir::{Attr, Op};

type R<T> = Result<T, FrontendError>;

/// `base[index]`.
pub fn subscript(em: &mut Emitter, base: Val, index: Val, span: &Span) -> R<Val> {
    match base {
        Val::Tuple(items) | Val::List(items) => match index {
            Val::Int(i) => {
                let n = items.len() as i64;
                let k = if i < 0 { i + n } else { i };
                if k < 0 || k >= n {
                    return Err(FrontendError::lowering(
                        format!("index {i} out of range for a sequence of length {n}"),
                        span.clone(),
                    ));
                }
                Ok(items[k as usize].clone())
            }
            Val::Slice(lo, hi, step) => {
                let n = items.len() as i64;
                let step = step.unwrap_or(1);
                if step <= 0 {
                    return Err(FrontendError::unsupported(
                        "non-positive slice steps on sequences are not supported",
                        span.clone(),
                    ));
                }
                let clamp = |v: i64| if v < 0 { (v + n).max(0) } else { v.min(n) };
                let (a, b) = (clamp(lo.unwrap_or(0)), clamp(hi.unwrap_or(n)));
                let out: Vec<Val> = (a..b.max(a))
                    .step_by(step as usize)
                    .map(|k| items[k as usize].clone())
                    .collect();
                Ok(Val::tuple(out))
            }
            other => Err(FrontendError::unsupported(
                format!("indexing a sequence with {}", other.type_name()),
                span.clone(),
            )),
        },
        Val::Pair(p) => match index {
            Val::Int(i @ -2..=1) => em.pair_part(&p, if i == 0 || i == -2 { 0 } else { 1 }, span),
            other => Err(FrontendError::lowering(
                format!(
                    "the result of `{}` is a (values, indices) pair; index {} is not 0 or 1",
                    p.what,
                    describe(&other)
                ),
                span.clone(),
            )),
        },
        Val::Tensor(_) | Val::Param(_) | Val::InitTensor(_) => {
            let t = em.tensor(&base, span)?;
            tensor_index(em, t, index, span)
        }
        other => Err(FrontendError::unsupported(
            format!("{} is not subscriptable", other.type_name()),
            span.clone(),
        )),
    }
}

fn describe(v: &Val) -> String {
    match v {
        Val::Int(i) => i.to_string(),
        other => other.type_name(),
    }
}

fn tensor_index(em: &mut Emitter, t: drtc_ir::ValueId, index: Val, span: &Span) -> R<Val> {
    let items: Vec<Val> = match index {
        Val::Tuple(items) => items.to_vec(),
        other => vec![other],
    };
    let rank = em.ty(t).rank();
    let consumed = items
        .iter()
        .filter(|v| matches!(v, Val::Int(_) | Val::Slice(..)))
        .count();
    if items.iter().filter(|v| matches!(v, Val::Ellipsis)).count() > 1 {
        return Err(FrontendError::lowering(
            "an index can only have a single ellipsis",
            span.clone(),
        ));
    }
    if consumed > rank {
        return Err(FrontendError::lowering(
            format!("too many indices for a tensor of rank {rank}: {consumed} were given"),
            span.clone(),
        ));
    }
    let mut cur = t;
    let mut d: i64 = 0;
    for item in items {
        match item {
            Val::Ellipsis => d += (rank - consumed) as i64,
            Val::None => {
                cur = em.emit(Op::Unsqueeze, &[cur], vec![("dim", Attr::Int(d))], span)?;
                d += 1;
            }
            Val::Int(i) => {
                cur = em.emit(
                    Op::Select,
                    &[cur],
                    vec![("dim", Attr::Int(d)), ("index", Attr::Int(i))],
                    span,
                )?;
            }
            Val::Slice(lo, hi, step) => {
                let size = em.ty(cur).shape[d as usize];
                let step = step.unwrap_or(1);
                if step <= 0 {
                    return Err(FrontendError::unsupported(
                        "tensor slices need a positive step",
                        span.clone(),
                    ));
                }
                let start = lo.unwrap_or(0).clamp(-size.max(1) * 2, size);
                let end = hi.unwrap_or(size).clamp(-size.max(1) * 2, size);
                let full = lo.is_none() && hi.is_none() && step == 1;
                if !full {
                    cur = em.emit(
                        Op::Slice,
                        &[cur],
                        vec![
                            ("dim", Attr::Int(d)),
                            ("start", Attr::Int(start)),
                            ("end", Attr::Int(end)),
                            ("step", Attr::Int(step)),
                        ],
                        span,
                    )?;
                }
                d += 1;
            }
            other => {
                return Err(FrontendError::unsupported(
                    format!(
                        "indexing a tensor with {} (advanced indexing) is not supported",
                        other.type_name()
                    ),
                    span.clone(),
                ))
            }
        }
    }
    Ok(Val::Tensor(cur))
}
