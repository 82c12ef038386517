//! Python operators on values: exact arithmetic on numbers, tuple and string operators,
//! and tensor operators lowered to IR ops (a Python number next to a tensor becomes a weak
//! scalar constant).

use super::ast::{BinOp, CmpOp, UnOp};
use super::emitter::Emitter;
use super::error::{FrontendError, Span};
use super::value::Val;
use drtc_ir::{Op, ValueId};

type R<T> = Result<T, FrontendError>;

pub fn truthy(v: &Val, span: &Span) -> R<bool> {
    Ok(match v {
        Val::None => false,
        Val::Bool(b) => *b,
        Val::Int(i) => *i != 0,
        Val::Float(x) => *x != 0.0,
        Val::Str(s) => !s.is_empty(),
        Val::Tuple(v) | Val::List(v) => !v.is_empty(),
        Val::Tensor(_) | Val::Param(_) => {
            return Err(FrontendError::unsupported(
                "the truth value of a tensor depends on its data, which drtc does not know while lowering",
                span.clone(),
            ))
        }
        _ => true,
    })
}

pub fn unary(em: &mut Emitter, op: UnOp, v: Val, span: &Span) -> R<Val> {
    let v = em.read(v, span)?;
    match (op, v) {
        (UnOp::Not, v) => Ok(Val::Bool(!truthy(&v, span)?)),
        (UnOp::Pos, v) => Ok(v),
        (UnOp::Neg, Val::Int(i)) => i.checked_neg().map(Val::Int).ok_or_else(|| overflow(span)),
        (UnOp::Neg, Val::Bool(b)) => Ok(Val::Int(-(b as i64))),
        (UnOp::Neg, Val::Float(x)) => Ok(Val::Float(-x)),
        (UnOp::Neg, Val::Tensor(t)) => Ok(Val::Tensor(em.emit(Op::Neg, &[t], vec![], span)?)),
        (UnOp::Invert, Val::Int(i)) => Ok(Val::Int(!i)),
        (op, v) => Err(FrontendError::unsupported(
            format!("unary {op:?} on {} is not supported", v.type_name()),
            span.clone(),
        )),
    }
}

pub fn binary(em: &mut Emitter, op: BinOp, a: Val, b: Val, span: &Span) -> R<Val> {
    let a = em.read(a, span)?;
    let b = em.read(b, span)?;
    if matches!(a, Val::Tensor(_)) || matches!(b, Val::Tensor(_)) {
        return tensor_binary(em, op, &a, &b, span);
    }
    if a.is_number() && b.is_number() {
        return py_arith(op, &a, &b, span);
    }
    match (op, &a, &b) {
        (BinOp::Add, Val::Tuple(x), Val::Tuple(y)) => {
            Ok(Val::tuple(x.iter().chain(y.iter()).cloned().collect()))
        }
        (BinOp::Add, Val::List(x), Val::List(y)) => {
            Ok(Val::list(x.iter().chain(y.iter()).cloned().collect()))
        }
        (BinOp::Add, Val::Str(x), Val::Str(y)) => Ok(Val::Str(format!("{x}{y}").into())),
        (BinOp::Mul, Val::Tuple(_) | Val::List(_), Val::Int(n))
        | (BinOp::Mul, Val::Int(n), Val::Tuple(_) | Val::List(_)) => {
            let seq = if matches!(a, Val::Int(_)) { &b } else { &a };
            let items = seq.items().unwrap_or(&[]);
            let n = (*n).max(0) as usize;
            if n.saturating_mul(items.len()) > 4096 {
                return Err(FrontendError::unsupported(
                    "sequence repetition longer than 4096 items",
                    span.clone(),
                ));
            }
            let out: Vec<Val> = (0..n).flat_map(|_| items.iter().cloned()).collect();
            Ok(if matches!(seq, Val::List(_)) {
                Val::list(out)
            } else {
                Val::tuple(out)
            })
        }
        _ => Err(FrontendError::unsupported(
            format!(
                "operator {op:?} on {} and {} is not supported",
                a.type_name(),
                b.type_name()
            ),
            span.clone(),
        )),
    }
}

pub fn compare(em: &mut Emitter, op: CmpOp, a: Val, b: Val, span: &Span) -> R<Val> {
    match op {
        CmpOp::Is | CmpOp::IsNot => {
            let same = match (&a, &b) {
                (Val::None, Val::None) => true,
                (Val::None, _) | (_, Val::None) => false,
                (Val::Bool(x), Val::Bool(y)) => x == y,
                _ => {
                    return Err(FrontendError::unsupported(
                        "`is` is only supported against None, True or False",
                        span.clone(),
                    ))
                }
            };
            return Ok(Val::Bool(same == (op == CmpOp::Is)));
        }
        CmpOp::In | CmpOp::NotIn => {
            let items = b
                .items()
                .ok_or_else(|| {
                    FrontendError::unsupported("`in` needs a tuple or list", span.clone())
                })?
                .to_vec();
            let mut found = false;
            for it in items {
                if let Val::Bool(true) = compare(em, CmpOp::Eq, a.clone(), it, span)? {
                    found = true;
                }
            }
            return Ok(Val::Bool(found == (op == CmpOp::In)));
        }
        _ => {}
    }
    let a = em.read(a, span)?;
    let b = em.read(b, span)?;
    if matches!(a, Val::Tensor(_)) || matches!(b, Val::Tensor(_)) {
        return tensor_compare(em, op, &a, &b, span);
    }
    if let (Some(x), Some(y)) = (a.as_number(), b.as_number()) {
        return Ok(Val::Bool(match op {
            CmpOp::Eq => x == y,
            CmpOp::Ne => x != y,
            CmpOp::Lt => x < y,
            CmpOp::Le => x <= y,
            CmpOp::Gt => x > y,
            CmpOp::Ge => x >= y,
            _ => false,
        }));
    }
    match (op, &a, &b) {
        (CmpOp::Eq | CmpOp::Ne, Val::Str(x), Val::Str(y)) => {
            Ok(Val::Bool((x == y) == (op == CmpOp::Eq)))
        }
        (CmpOp::Eq | CmpOp::Ne, Val::None, _) | (CmpOp::Eq | CmpOp::Ne, _, Val::None) => {
            let same = matches!((&a, &b), (Val::None, Val::None));
            Ok(Val::Bool(same == (op == CmpOp::Eq)))
        }
        (CmpOp::Eq | CmpOp::Ne, Val::DType(x), Val::DType(y)) => {
            Ok(Val::Bool((x == y) == (op == CmpOp::Eq)))
        }
        _ => Err(FrontendError::unsupported(
            format!(
                "comparison {op:?} of {} and {} is not supported",
                a.type_name(),
                b.type_name()
            ),
            span.clone(),
        )),
    }
}

fn overflow(span: &Span) -> FrontendError {
    FrontendError::unsupported("integer arithmetic overflows 64 bits", span.clone())
}

/// Python arithmetic on numbers (ints stay exact; `/` gives a float).
pub fn py_arith(op: BinOp, a: &Val, b: &Val, span: &Span) -> R<Val> {
    let as_int = |v: &Val| match v {
        Val::Int(i) => Some(*i),
        Val::Bool(b) => Some(*b as i64),
        _ => None,
    };
    if let (Some(x), Some(y)) = (as_int(a), as_int(b)) {
        let r = match op {
            BinOp::Add => x.checked_add(y),
            BinOp::Sub => x.checked_sub(y),
            BinOp::Mul => x.checked_mul(y),
            BinOp::Div => {
                if y == 0 {
                    return Err(FrontendError::lowering("division by zero", span.clone()));
                }
                return Ok(Val::Float(x as f64 / y as f64));
            }
            BinOp::FloorDiv | BinOp::Mod => {
                if y == 0 {
                    return Err(FrontendError::lowering(
                        "integer division or modulo by zero",
                        span.clone(),
                    ));
                }
                let (q, r) = (x.checked_div(y).ok_or_else(|| overflow(span))?, x % y);
                // Python rounds the quotient toward negative infinity
                let (q, r) = if r != 0 && ((r < 0) != (y < 0)) {
                    (q - 1, r + y)
                } else {
                    (q, r)
                };
                Some(if op == BinOp::FloorDiv { q } else { r })
            }
            BinOp::Pow => {
                if y < 0 {
                    return Ok(Val::Float((x as f64).powf(y as f64)));
                }
                u32::try_from(y).ok().and_then(|e| x.checked_pow(e))
            }
            BinOp::MatMul => {
                return Err(FrontendError::lowering("`@` needs tensors", span.clone()));
            }
        };
        return r.map(Val::Int).ok_or_else(|| overflow(span));
    }
    let (x, y) = (
        a.as_number().unwrap_or(f64::NAN),
        b.as_number().unwrap_or(f64::NAN),
    );
    Ok(Val::Float(match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => {
            if y == 0.0 {
                return Err(FrontendError::lowering(
                    "float division by zero",
                    span.clone(),
                ));
            }
            x / y
        }
        BinOp::FloorDiv => {
            if y == 0.0 {
                return Err(FrontendError::lowering(
                    "float floor division by zero",
                    span.clone(),
                ));
            }
            (x / y).floor()
        }
        BinOp::Mod => {
            if y == 0.0 {
                return Err(FrontendError::lowering(
                    "float modulo by zero",
                    span.clone(),
                ));
            }
            x - (x / y).floor() * y
        }
        BinOp::Pow => x.powf(y),
        BinOp::MatMul => return Err(FrontendError::lowering("`@` needs tensors", span.clone())),
    }))
}

fn bin_op(op: BinOp) -> Option<Op> {
    Some(match op {
        BinOp::Add => Op::Add,
        BinOp::Sub => Op::Sub,
        BinOp::Mul => Op::Mul,
        BinOp::Div => Op::Div,
        BinOp::Pow => Op::Pow,
        BinOp::MatMul => Op::Matmul,
        BinOp::FloorDiv | BinOp::Mod => return None,
    })
}

/// Two operands as tensors; a Python number becomes a constant typed after its partner.
pub fn operands(em: &mut Emitter, a: &Val, b: &Val, span: &Span) -> R<(ValueId, ValueId)> {
    let ta = match a {
        Val::Tensor(t) => Some(*t),
        _ => None,
    };
    let tb = match b {
        Val::Tensor(t) => Some(*t),
        _ => None,
    };
    match (ta, tb) {
        (Some(x), Some(y)) => Ok((x, y)),
        (Some(x), None) => {
            let like = em.ty(x).dtype;
            Ok((x, em.scalar_const(b, Some(like), span)?))
        }
        (None, Some(y)) => {
            let like = em.ty(y).dtype;
            Ok((em.scalar_const(a, Some(like), span)?, y))
        }
        (None, None) => {
            let x = em.scalar_const(a, None, span)?;
            let like = em.ty(x).dtype;
            Ok((x, em.scalar_const(b, Some(like), span)?))
        }
    }
}

/// `a op b` where at least one side is a tensor.
pub fn tensor_binary(em: &mut Emitter, op: BinOp, a: &Val, b: &Val, span: &Span) -> R<Val> {
    let Some(ir) = bin_op(op) else {
        return Err(FrontendError::unsupported(
            format!("the operator {op:?} on tensors is not in drtc's op set"),
            span.clone(),
        ));
    };
    if ir == Op::Matmul && (!matches!(a, Val::Tensor(_)) || !matches!(b, Val::Tensor(_))) {
        return Err(FrontendError::lowering(
            "`@` needs two tensors",
            span.clone(),
        ));
    }
    let (x, y) = operands(em, a, b, span)?;
    Ok(Val::Tensor(em.emit(ir, &[x, y], vec![], span)?))
}

/// `a < b` and friends where at least one side is a tensor.
pub fn tensor_compare(em: &mut Emitter, op: CmpOp, a: &Val, b: &Val, span: &Span) -> R<Val> {
    let ir = match op {
        CmpOp::Eq => Op::Eq,
        CmpOp::Ne => Op::Ne,
        CmpOp::Lt => Op::Lt,
        CmpOp::Le => Op::Le,
        CmpOp::Gt => Op::Gt,
        CmpOp::Ge => Op::Ge,
        _ => {
            return Err(FrontendError::unsupported(
                format!("{op:?} on tensors is not supported"),
                span.clone(),
            ))
        }
    };
    let (x, y) = operands(em, a, b, span)?;
    Ok(Val::Tensor(em.emit(ir, &[x, y], vec![], span)?))
}
