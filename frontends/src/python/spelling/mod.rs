//! The spelling table: how PyTorch's functions, tensor methods and operators map onto IR
//! ops. `torch.relu(x)`, `F.relu(x)`, `x.relu()` and `nn.ReLU()(x)` all end here as
//! `relu`; arguments are bound by PyTorch's parameter names and defaults, Python numbers
//! become weakly-typed constants, and what the op set cannot express is an error that says so.
//!
//! One file per section of the op table (pointwise, reductions, losses, contractions,
//! windows, normalization, layout, tensor methods, creation); each lowers through the
//! [`Emitter`] only.

mod contraction;
mod creation;
mod helpers;
mod layout;
mod losses;
mod normalization;
mod pointwise;
mod reductions;
mod tensor;
mod windows;

use super::args::Args;
use super::emitter::Emitter;
use super::error::{FrontendError, Span};
use super::value::Val;
use drtc_ir::{Attr, Op, ValueId};
pub use helpers::torch_dtype;
use helpers::{bind, unary};

type R<T> = Result<T, FrontendError>;

/// `x.name(...)`.
pub fn call_method(em: &mut Emitter, t: ValueId, name: &str, args: Args, span: &Span) -> R<Val> {
    let recv_span = args.span.clone();
    call_function(
        em,
        &format!("Tensor.{name}"),
        args.with_receiver(Val::Tensor(t), recv_span),
        span,
    )
}

/// `x.name` for a tensor `x`.
pub fn tensor_attr(em: &mut Emitter, t: ValueId, name: &str, span: &Span) -> R<Val> {
    let ty = em.ty(t).clone();
    Ok(match name {
        "shape" => Val::tuple(ty.shape.iter().map(|&d| Val::Int(d)).collect()),
        "dtype" => Val::DType(ty.dtype),
        "device" => Val::Device,
        "ndim" => Val::Int(ty.rank() as i64),
        "data" => Val::Tensor(t),
        "is_cuda" | "requires_grad" => Val::Bool(false),
        "T" => {
            if ty.rank() < 2 {
                Val::Tensor(t)
            } else if ty.rank() == 2 {
                Val::Tensor(em.emit(
                    Op::Transpose,
                    &[t],
                    vec![("dim0", Attr::Int(0)), ("dim1", Attr::Int(1))],
                    span,
                )?)
            } else {
                let dims: Vec<i64> = (0..ty.rank() as i64).rev().collect();
                Val::Tensor(em.emit(Op::Permute, &[t], vec![("dims", Attr::Ints(dims))], span)?)
            }
        }
        "mT" => Val::Tensor(em.emit(
            Op::Transpose,
            &[t],
            vec![("dim0", Attr::Int(-2)), ("dim1", Attr::Int(-1))],
            span,
        )?),
        _ => Val::Method(Box::new(Val::Tensor(t)), name.into()),
    })
}

/// Lowers a call of `key` (`torch.X`, `F.X` or `Tensor.X` with the receiver first).
pub fn call_function(em: &mut Emitter, key: &str, args: Args, span: &Span) -> R<Val> {
    let (ns, name) = key.split_once('.').unwrap_or(("", key));
    let a = &args;
    // pointwise unary ops without attributes
    let simple_unary = match (ns, name) {
        (_, "relu" | "relu_") => Some(Op::Relu),
        (_, "sigmoid" | "sigmoid_") => Some(Op::Sigmoid),
        (_, "tanh" | "tanh_") => Some(Op::Tanh),
        ("F", "silu") => Some(Op::Silu),
        ("torch" | "F", "selu") => Some(Op::Selu),
        ("F", "hardsigmoid") => Some(Op::Hardsigmoid),
        ("F", "hardswish") => Some(Op::Hardswish),
        ("F", "softsign") => Some(Op::Softsign),
        ("F", "logsigmoid") => Some(Op::Logsigmoid),
        ("F", "mish") => Some(Op::Mish),
        ("torch" | "Tensor", "abs" | "absolute") => Some(Op::Abs),
        ("torch" | "Tensor", "neg" | "negative") => Some(Op::Neg),
        ("torch" | "Tensor", "sign") => Some(Op::Sign),
        ("torch" | "Tensor", "cos") => Some(Op::Cos),
        ("torch" | "Tensor", "sin") => Some(Op::Sin),
        ("torch" | "Tensor", "exp") => Some(Op::Exp),
        ("torch" | "Tensor", "exp2") => Some(Op::Exp2),
        ("torch" | "Tensor", "log") => Some(Op::Log),
        ("torch" | "Tensor", "sqrt") => Some(Op::Sqrt),
        ("torch" | "Tensor", "rsqrt") => Some(Op::Rsqrt),
        ("torch" | "Tensor", "erf") | ("torch.special", "erf") => Some(Op::Erf),
        ("torch" | "Tensor", "reciprocal") => Some(Op::Reciprocal),
        _ => None,
    };
    if let Some(op) = simple_unary {
        let b = bind(a, key, &["input", "inplace"])?;
        return unary(em, &b, op, vec![]);
    }
    type Section = fn(&mut Emitter, &str, &Args, &Span) -> R<Option<Val>>;
    const SECTIONS: &[Section] = &[
        pointwise::call,
        reductions::call,
        losses::call,
        contraction::call,
        windows::call,
        normalization::call,
        layout::call,
        tensor::call,
        creation::call,
    ];
    for section in SECTIONS {
        if let Some(v) = section(em, key, a, span)? {
            return Ok(v);
        }
    }
    Err(FrontendError::unsupported(
        format!(
            "`{}` is not in drtc's spelling table (no IR op for it)",
            display_key(key)
        ),
        span.clone(),
    ))
}

fn display_key(key: &str) -> String {
    match key.strip_prefix("Tensor.") {
        Some(m) => format!("Tensor.{m}()"),
        None => key.to_string(),
    }
}
