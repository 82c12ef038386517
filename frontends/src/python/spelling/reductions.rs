//! Reductions and computations along a dim: softmax, scans, sum/mean/max/var/norm, logsumexp.

use super::helpers::*;
use super::{Call, Lowering};
use crate::python::args::Args;
use crate::python::emitter::Emitter;
use crate::python::error::{FrontendError, Span};
use crate::python::value::{PairVal, Val};
use drtc_ir::{Attr, Op};
use std::rc::Rc;

type R<T> = Result<T, FrontendError>;

/// Lowers `key` when it is spelled in this section; `Ok(None)` when it is not.
pub(super) fn call(em: &mut Emitter, key: &str, a: &Args, span: &Span) -> R<Option<Val>> {
    let (ns, name) = key.split_once('.').unwrap_or(("", key));
    let v = match (ns, name) {
        ("torch" | "Tensor", "nansum") => Err(FrontendError::unsupported(
            "nansum is not in drtc's op set",
            span.clone(),
        )),
        ("torch" | "Tensor", "max" | "min") => {
            let b = bind(a, key, &["input", "dim", "keepdim", "other"])?;
            let x = tensor_arg(em, &b, "input")?;
            let (vop, iop, ewise) = if name == "max" {
                (Op::Max, Op::Argmax, Op::Maximum)
            } else {
                (Op::Min, Op::Argmin, Op::Minimum)
            };
            let second = match b.get("dim").cloned() {
                Some(v) => Some(em.read(v, span)?),
                None => None,
            };
            match (second, b.opt("other").cloned()) {
                (Some(Val::Tensor(y)), None) | (None, Some(Val::Tensor(y))) => {
                    Ok(Val::Tensor(em.emit(ewise, &[x, y], vec![], &b.span)?))
                }
                (Some(Val::Int(d)), None) => {
                    let keep = b.bool("keepdim", false)?;
                    Ok(Val::Pair(Rc::new(PairVal {
                        input: x,
                        what: format!("{key}(dim={d})"),
                        values: Some((
                            vop,
                            vec![("dim", Attr::Ints(vec![d])), ("keepdim", Attr::Bool(keep))],
                        )),
                        indices: Some((
                            iop,
                            vec![("dim", Attr::Int(d)), ("keepdim", Attr::Bool(keep))],
                        )),
                    })))
                }
                (None, None) => Ok(Val::Tensor(em.emit(vop, &[x], vec![], &b.span)?)),
                (Some(v), _) | (None, Some(v)) => Err(FrontendError::lowering(
                    format!(
                        "`{key}`: second argument must be a dim (int) or a tensor, got {}",
                        v.type_name()
                    ),
                    b.span.clone(),
                )),
            }
        }
        ("F", "normalize") => {
            let b = bind(a, key, &["input", "p", "dim", "eps"])?;
            let x = tensor_arg(em, &b, "input")?;
            let p = b.float("p", 2.0)?;
            let dim = b.int("dim", 1)?;
            let eps = b.float("eps", 1e-12)?;
            let n = em.emit(
                Op::Norm,
                &[x],
                vec![
                    ("p", Attr::Float(p)),
                    ("dim", Attr::Ints(vec![dim])),
                    ("keepdim", Attr::Bool(true)),
                ],
                &b.span,
            )?;
            let n = em.emit(Op::Clamp, &[n], vec![("min", Attr::Float(eps))], &b.span)?;
            Ok(Val::Tensor(em.emit(Op::Div, &[x, n], vec![], &b.span)?))
        }
        _ => return Ok(None),
    };
    v.map(Some)
}

/// The ops of this section whose spellings need more than binding by the table.
pub(super) const CUSTOM: &[(&[Op], Lowering)] = &[
    (&[Op::Softmax, Op::LogSoftmax], softmax),
    (&[Op::Cumsum, Op::Cumprod], scan),
    (&[Op::Cummax, Op::Cummin], cumulative_extreme),
    (&[Op::Sum, Op::Mean], sum_mean),
    (&[Op::Prod], prod),
    (&[Op::Var, Op::Std], var_std),
    (&[Op::Norm], norm),
    (&[Op::Logsumexp], logsumexp),
];

fn softmax(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let Call { key, .. } = *c;
    let b = c.bind(op)?;
    let Some(dim) = b.opt_int("dim")? else {
        return Err(FrontendError::unsupported(
            format!("`{key}` without `dim` (implicit dim choice) is not supported; pass dim="),
            b.span.clone(),
        ));
    };
    let x = tensor_arg(em, &b, "input")?;
    let x = with_dtype(em, &b, x)?;
    Ok(Val::Tensor(em.emit(
        op,
        &[x],
        vec![("dim", Attr::Int(dim))],
        &b.span,
    )?))
}

fn scan(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
    let x = tensor_arg(em, &b, "input")?;
    let x = with_dtype(em, &b, x)?;
    let dim = b.req_int("dim")?;
    Ok(Val::Tensor(em.emit(
        op,
        &[x],
        vec![("dim", Attr::Int(dim))],
        &b.span,
    )?))
}

fn cumulative_extreme(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let Call { key, .. } = *c;
    let b = c.bind(op)?;
    let x = tensor_arg(em, &b, "input")?;
    let dim = b.req_int("dim")?;
    Ok(Val::Pair(Rc::new(PairVal {
        input: x,
        what: key.to_string(),
        values: Some((op, vec![("dim", Attr::Int(dim))])),
        indices: None,
    })))
}

fn sum_mean(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
    let x = tensor_arg(em, &b, "input")?;
    let x = with_dtype(em, &b, x)?;
    let attrs = vec![
        ("dim", dims_attr(&b, "dim")?),
        ("keepdim", attr_arg(&b, op, "keepdim")?),
    ];
    Ok(Val::Tensor(em.emit(op, &[x], attrs, &b.span)?))
}

fn prod(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
    let x = tensor_arg(em, &b, "input")?;
    let x = with_dtype(em, &b, x)?;
    let dim = match b.opt_int("dim")? {
        Some(d) => Attr::Ints(vec![d]),
        None => Attr::None,
    };
    let attrs = vec![("dim", dim), ("keepdim", attr_arg(&b, op, "keepdim")?)];
    Ok(Val::Tensor(em.emit(Op::Prod, &[x], attrs, &b.span)?))
}

fn var_std(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
    let x = tensor_arg(em, &b, "input")?;
    let correction = match (b.opt("unbiased"), b.opt_float("correction")?) {
        (Some(_), Some(_)) => {
            return Err(FrontendError::lowering(
                "give `unbiased` or `correction`, not both",
                b.span.clone(),
            ))
        }
        (Some(_), None) => {
            if b.bool("unbiased", true)? {
                1.0
            } else {
                0.0
            }
        }
        (None, Some(c)) => c,
        (None, None) => 1.0,
    };
    let attrs = vec![
        ("dim", dims_attr(&b, "dim")?),
        ("correction", Attr::Float(correction)),
        ("keepdim", attr_arg(&b, op, "keepdim")?),
    ];
    Ok(Val::Tensor(em.emit(op, &[x], attrs, &b.span)?))
}

fn norm(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let Call {
        ns,
        name,
        key,
        span,
        args: a,
    } = *c;
    let pname = if ns == "torch.linalg" { "ord" } else { "p" };
    let b = bind(a, key, &["input", pname, "dim", "keepdim", "dtype"])?;
    let x = tensor_arg(em, &b, "input")?;
    let x = with_dtype(em, &b, x)?;
    let p = match b.opt(pname) {
        None => 2.0,
        Some(Val::Str(s)) if &**s == "fro" => 2.0,
        Some(Val::Str(s)) => {
            return Err(FrontendError::unsupported(
                format!("the {s:?} norm is not in drtc's op set"),
                b.span_of(pname),
            ))
        }
        Some(v) => v.as_number().ok_or_else(|| {
            FrontendError::lowering("norm order must be a number", b.span_of(pname))
        })?,
    };
    // torch.linalg.norm with an order computes a matrix norm over two dims (dim=None on a
    // matrix, or a pair of dims); only the Frobenius norm equals the vector 2-norm there
    let ord = b
        .opt(pname)
        .filter(|v| !matches!(v, Val::Str(s) if &**s == "fro"));
    let dims = b.ints("dim")?;
    if ns == "torch.linalg"
        && name == "norm"
        && ord.is_some()
        && dims.as_ref().map_or(em.ty(x).rank() != 1, |d| d.len() == 2)
    {
        return Err(FrontendError::unsupported(
            "matrix norms of torch.linalg.norm are not supported",
            span.clone(),
        ));
    }
    let attrs = vec![
        ("p", Attr::Float(p)),
        ("dim", dims_attr(&b, "dim")?),
        ("keepdim", attr_arg(&b, op, "keepdim")?),
    ];
    Ok(Val::Tensor(em.emit(op, &[x], attrs, &b.span)?))
}

fn logsumexp(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let b = c.bind(op)?;
    let x = tensor_arg(em, &b, "input")?;
    let dims = b
        .ints("dim")?
        .ok_or_else(|| FrontendError::lowering("logsumexp needs `dim`", b.span.clone()))?;
    Ok(Val::Tensor(em.emit(
        Op::Logsumexp,
        &[x],
        vec![
            ("dim", Attr::Ints(dims)),
            ("keepdim", attr_arg(&b, op, "keepdim")?),
        ],
        &b.span,
    )?))
}
