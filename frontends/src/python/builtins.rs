//! The Python builtins the subset knows: `len`, `float`, `int`, `bool`, `tuple`, `list`,
//! `super`, `abs`, `min`, `max`, `round`.

use super::args::Args;
use super::emitter::Emitter;
use super::error::{FrontendError, Span};
use super::value::Val;

const NAMES: &[&str] = &[
    "len", "float", "int", "bool", "tuple", "list", "super", "abs", "min", "max", "round",
];

/// The builtin called `name`, if the subset has it.
pub fn lookup(name: &str) -> Option<Val> {
    NAMES.iter().find(|n| **n == name).map(|n| Val::Builtin(n))
}

pub fn call(
    em: &mut Emitter,
    name: &'static str,
    args: Args,
    span: &Span,
) -> Result<Val, FrontendError> {
    if !args.kw.is_empty() {
        return Err(FrontendError::unsupported(
            format!("keyword arguments to `{name}` are not supported"),
            span.clone(),
        ));
    }
    let pos: Vec<Val> = args
        .pos
        .iter()
        .map(|(v, s)| em.read(v.clone(), s))
        .collect::<Result<_, _>>()?;
    let one = || -> Result<&Val, FrontendError> {
        if pos.len() == 1 {
            Ok(&pos[0])
        } else {
            Err(FrontendError::lowering(
                format!("`{name}` takes one argument"),
                span.clone(),
            ))
        }
    };
    let bad = |v: &Val| {
        FrontendError::unsupported(
            format!("`{name}` of {} is not supported", v.type_name()),
            span.clone(),
        )
    };
    match name {
        "super" => Ok(Val::Super),
        "len" => match one()? {
            Val::Tuple(v) | Val::List(v) => Ok(Val::Int(v.len() as i64)),
            Val::Str(s) => Ok(Val::Int(s.chars().count() as i64)),
            Val::Tensor(t) => match em.ty(*t).shape.first() {
                Some(&d) => Ok(Val::Int(d)),
                None => Err(FrontendError::lowering(
                    "len() of a 0-d tensor",
                    span.clone(),
                )),
            },
            v => Err(bad(v)),
        },
        "float" => match pos.first() {
            None => Ok(Val::Float(0.0)),
            Some(Val::Str(s)) => match s.trim().to_ascii_lowercase().as_str() {
                "inf" | "+inf" | "infinity" => Ok(Val::Float(f64::INFINITY)),
                "-inf" | "-infinity" => Ok(Val::Float(f64::NEG_INFINITY)),
                "nan" => Ok(Val::Float(f64::NAN)),
                t => t.parse::<f64>().map(Val::Float).map_err(|_| {
                    FrontendError::lowering(
                        format!("could not convert string to float: {s:?}"),
                        span.clone(),
                    )
                }),
            },
            Some(v) => v.as_number().map(Val::Float).ok_or_else(|| bad(v)),
        },
        "int" => match one()? {
            Val::Float(x) if x.is_finite() && x.abs() < 9.0e18 => Ok(Val::Int(x.trunc() as i64)),
            Val::Int(i) => Ok(Val::Int(*i)),
            Val::Bool(b) => Ok(Val::Int(*b as i64)),
            v => Err(bad(v)),
        },
        "bool" => {
            let v = one()?.clone();
            Ok(Val::Bool(super::operators::truthy(&v, span)?))
        }
        "tuple" | "list" => {
            let items = match pos.first() {
                None => vec![],
                Some(v) => em.iterate(v.clone(), span)?,
            };
            Ok(if name == "tuple" {
                Val::tuple(items)
            } else {
                Val::list(items)
            })
        }
        "abs" => match one()? {
            Val::Int(i) => i
                .checked_abs()
                .map(Val::Int)
                .ok_or_else(|| bad(&Val::Int(*i))),
            Val::Float(x) => Ok(Val::Float(x.abs())),
            Val::Bool(b) => Ok(Val::Int(*b as i64)),
            v => Err(bad(v)),
        },
        "round" => match one()? {
            Val::Float(x) if x.is_finite() && x.abs() < 9.0e18 => {
                // Python rounds halves to even
                let r = x.round();
                let r = if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
                    r - x.signum()
                } else {
                    r
                };
                Ok(Val::Int(r as i64))
            }
            Val::Int(i) => Ok(Val::Int(*i)),
            v => Err(bad(v)),
        },
        "min" | "max" => {
            let items: Vec<Val> = if pos.len() == 1 {
                em.iterate(pos[0].clone(), span)?
            } else {
                pos.clone()
            };
            let mut best: Option<Val> = None;
            for it in items {
                let x = it.as_number().ok_or_else(|| bad(&it))?;
                let better = match &best {
                    None => true,
                    Some(b) => {
                        let y = b.as_number().unwrap_or(f64::NAN);
                        if name == "min" {
                            x < y
                        } else {
                            x > y
                        }
                    }
                };
                if better {
                    best = Some(it);
                }
            }
            best.ok_or_else(|| {
                FrontendError::lowering(format!("`{name}` of an empty sequence"), span.clone())
            })
        }
        _ => Err(FrontendError::unsupported(
            format!("builtin `{name}`"),
            span.clone(),
        )),
    }
}
