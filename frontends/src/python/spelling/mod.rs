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
mod generic;
mod helpers;
mod layout;
pub(super) mod losses;
mod normalization;
mod pointwise;
mod reductions;
mod tensor;
mod windows;

use super::args::{Args, Bound};
use super::emitter::Emitter;
use super::error::{FrontendError, Span};
use super::value::Val;
use drtc_ir::{Attr, Op, ValueId};
pub use helpers::torch_dtype;

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

/// One call being lowered: its canonical key (`F.relu`, `Tensor.sum`) and arguments.
#[derive(Clone, Copy)]
pub(in crate::python) struct Call<'a> {
    pub key: &'a str,
    /// The key's namespace (`torch`, `F`, `Tensor`, `torch.linalg`) and last name.
    pub ns: &'a str,
    pub name: &'a str,
    pub args: &'a Args,
    pub span: &'a Span,
}

impl<'a> Call<'a> {
    /// A call of `op` by its table spelling `key`.
    pub fn new(key: &'a str, args: &'a Args, span: &'a Span) -> Call<'a> {
        let (ns, name) = key.rsplit_once('.').unwrap_or(("", key));
        Call {
            key,
            ns,
            name,
            args,
            span,
        }
    }

    /// The arguments bound to the parameter names the op table gives `op`'s spellings.
    pub fn bind(&self, op: Op) -> R<Bound> {
        self.args.bind(self.key, op.def().torch.params)
    }
}

/// The spelling modules and layers call `op` by: its `F.` function where it has one.
pub(in crate::python) fn functional_key(op: Op) -> &'static str {
    let calls = op.def().torch.calls;
    calls
        .iter()
        .find(|c| c.starts_with("F."))
        .or(calls.first())
        .copied()
        .unwrap_or(op.name())
}

/// The lowering of an op's table spellings where binding by the table is not enough.
pub(super) type Lowering = fn(&mut Emitter, Op, &Call) -> R<Val>;
/// The spellings of a section that are not one op's own (`F.relu6`, `torch.zeros`).
type Sugar = fn(&mut Emitter, &str, &Args, &Span) -> R<Option<Val>>;

/// The sections' custom lowerings, by op.
const CUSTOM: &[&[(&[Op], Lowering)]] = &[
    pointwise::CUSTOM,
    reductions::CUSTOM,
    losses::CUSTOM,
    contraction::CUSTOM,
    windows::CUSTOM,
    normalization::CUSTOM,
    layout::CUSTOM,
];

/// The sections' spellings that are not in the op table, tried in this order.
const SUGAR: &[Sugar] = &[
    pointwise::call,
    reductions::call,
    losses::call,
    layout::call,
    tensor::call,
    creation::call,
];

/// The custom lowering of `op`, if a section has one.
fn custom(op: Op) -> Option<Lowering> {
    CUSTOM
        .iter()
        .flat_map(|section| section.iter())
        .find(|(ops, _)| ops.contains(&op))
        .map(|&(_, f)| f)
}

/// Lowers a call of `key` (`torch.X`, `F.X` or `Tensor.X` with the receiver first): a
/// spelling of the op table lowers to its op, other spellings are the sections' sugar.
pub fn call_function(em: &mut Emitter, key: &str, args: Args, span: &Span) -> R<Val> {
    let call = Call::new(key, &args, span);
    if let Some(op) = Op::from_torch(key) {
        return lower_op(em, op, &call);
    }
    for sugar in SUGAR {
        if let Some(v) = sugar(em, key, &args, span)? {
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

/// Lowers a call spelled as `op` in the table.
pub(in crate::python) fn lower_op(em: &mut Emitter, op: Op, call: &Call) -> R<Val> {
    match custom(op) {
        Some(f) => f(em, op, call),
        None => generic::lower(em, op, call),
    }
}

fn display_key(key: &str) -> String {
    match key.strip_prefix("Tensor.") {
        Some(m) => format!("Tensor.{m}()"),
        None => key.to_string(),
    }
}
