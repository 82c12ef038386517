//! The lowering every op gets from its table row alone: the call's arguments are bound to
//! the row's parameter names, the leading ones become the op's tensor inputs and the ones
//! named like its attributes set them, read by the attribute's kind with the table's
//! default; any other parameter given is refused unless it is value-neutral (`inplace`).
//! A new op that PyTorch spells as a plain function needs nothing more.

use super::helpers::{attr_arg, opt_tensor_arg, tensor_arg};
use super::Call;
use crate::python::emitter::Emitter;
use crate::python::error::FrontendError;
use crate::python::value::Val;
use drtc_ir::{Arity, Op};

type R<T> = Result<T, FrontendError>;

/// Parameters that never change a result here (tensors are values, so in-place is not).
const NEUTRAL: &[&str] = &["inplace"];

/// `op(inputs...) {attrs}` from the call's arguments.
pub(super) fn lower(em: &mut Emitter, op: Op, c: &Call) -> R<Val> {
    let def = op.def();
    let b = c.bind(op)?;
    let (required, most) = match def.arity {
        Arity::Exact(n) => (n, n),
        Arity::Range(lo, hi) => (lo, hi),
        Arity::AtLeast(_) => {
            return Err(FrontendError::unsupported(
                format!(
                    "`{}` takes a variable number of tensors and has no lowering for this spelling",
                    c.key
                ),
                c.span.clone(),
            ))
        }
    };
    let mut inputs = Vec::with_capacity(most);
    for (i, name) in def.torch.params.iter().take(most).enumerate() {
        if i < required {
            inputs.push(tensor_arg(em, &b, name)?);
        } else {
            match opt_tensor_arg(em, &b, name)? {
                Some(t) => inputs.push(t),
                None => break,
            }
        }
    }
    // a parameter that is neither an input nor an attribute must not change the value:
    // only the flags listed here are accepted, anything else given is refused
    for name in def.torch.params.iter().skip(most) {
        if def.attr(name).is_none() && !NEUTRAL.contains(name) && b.opt(name).is_some() {
            return Err(FrontendError::unsupported(
                format!("`{}`: the argument `{name}` is not supported", c.key),
                b.span_of(name),
            ));
        }
    }
    let mut attrs = vec![];
    for a in def.attrs {
        if def.torch.params.contains(&a.name) {
            attrs.push((a.name, attr_arg(&b, op, a.name)?));
        }
    }
    Ok(Val::Tensor(em.emit(op, &inputs, attrs, &b.span)?))
}
