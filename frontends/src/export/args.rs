//! The arguments of one FX call, with node references resolved to IR values, and the small
//! builders the ATen mappings share (scalar operands, unary and binary ops, slices).

use drtc_ir::{Attr, DType, GraphBuilder, Op, ValueId};
use std::collections::BTreeMap;

/// An argument of an FX node, with node references resolved to IR values.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Tensor(ValueId),
    Tensors(Vec<ValueId>),
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Ints(Vec<i64>),
    Str(String),
    DType(DType),
    /// Anything else (devices, layouts, memory formats, nested lists): only the opaque
    /// call can pass it on.
    Other,
}

impl Arg {
    pub(super) fn tensor(&self) -> Option<ValueId> {
        match self {
            Arg::Tensor(v) => Some(*v),
            _ => None,
        }
    }
    pub(super) fn opt_tensor(&self) -> Option<Option<ValueId>> {
        match self {
            Arg::Tensor(v) => Some(Some(*v)),
            Arg::None => Some(None),
            _ => None,
        }
    }
    pub(super) fn int(&self) -> Option<i64> {
        match self {
            Arg::Int(i) => Some(*i),
            _ => None,
        }
    }
    pub(super) fn float(&self) -> Option<f64> {
        match self {
            Arg::Float(x) => Some(*x),
            Arg::Int(i) => Some(*i as f64),
            _ => None,
        }
    }
    pub(super) fn bool(&self) -> Option<bool> {
        match self {
            Arg::Bool(b) => Some(*b),
            _ => None,
        }
    }
    pub(super) fn ints(&self) -> Option<Vec<i64>> {
        match self {
            Arg::Ints(v) => Some(v.clone()),
            Arg::Int(i) => Some(vec![*i]),
            _ => None,
        }
    }
}

/// One call's arguments: positional, then by keyword, with schema defaults.
pub struct Call<'a> {
    pub args: &'a [Arg],
    pub kwargs: &'a BTreeMap<String, Arg>,
}

impl Call<'_> {
    /// Argument `i` (or keyword `name`), `None` when absent.
    pub(super) fn get(&self, i: usize, name: &str) -> Option<&Arg> {
        self.args.get(i).or_else(|| self.kwargs.get(name))
    }
    pub(super) fn tensor(&self, i: usize, name: &str) -> Option<ValueId> {
        self.get(i, name)?.tensor()
    }
    pub(super) fn opt_tensor(&self, i: usize, name: &str) -> Option<Option<ValueId>> {
        match self.get(i, name) {
            None => Some(None),
            Some(a) => a.opt_tensor(),
        }
    }
    pub(super) fn int_or(&self, i: usize, name: &str, default: i64) -> Option<i64> {
        match self.get(i, name) {
            None | Some(Arg::None) => Some(default),
            Some(a) => a.int(),
        }
    }
    pub(super) fn float_or(&self, i: usize, name: &str, default: f64) -> Option<f64> {
        match self.get(i, name) {
            None | Some(Arg::None) => Some(default),
            Some(a) => a.float(),
        }
    }
    pub(super) fn bool_or(&self, i: usize, name: &str, default: bool) -> Option<bool> {
        match self.get(i, name) {
            None | Some(Arg::None) => Some(default),
            Some(a) => a.bool(),
        }
    }
    pub(super) fn ints(&self, i: usize, name: &str) -> Option<Vec<i64>> {
        self.get(i, name)?.ints()
    }
    /// A float or int scalar argument.
    pub(super) fn scalar(&self, i: usize, name: &str) -> Option<Scalar> {
        match self.get(i, name)? {
            Arg::Int(v) => Some(Scalar::Int(*v)),
            Arg::Float(v) => Some(Scalar::Float(*v)),
            Arg::Bool(v) => Some(Scalar::Bool(*v)),
            _ => None,
        }
    }
}

/// A Python number argument.
#[derive(Debug, Clone, Copy)]
pub(super) enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
}

/// The mapped results (`None`: not computed), or `None` for "no IR form".
pub type Mapped = Option<Vec<Option<ValueId>>>;

pub(super) fn one(v: Option<ValueId>) -> Mapped {
    v.map(|v| vec![Some(v)])
}

/// A tensor, or a scalar as a 0-dim constant whose dtype follows PyTorch's promotion
/// against `like` (a Python float with an integer tensor gives float32).
pub(super) fn operand(
    b: &mut GraphBuilder,
    c: &Call,
    i: usize,
    name: &str,
    like: Option<ValueId>,
) -> Option<ValueId> {
    if let Some(t) = c.tensor(i, name) {
        return Some(t);
    }
    let like = like.map(|v| b.ty(v).dtype);
    let (value, dtype) = match c.scalar(i, name)? {
        Scalar::Int(v) => (
            v as f64,
            like.filter(|d| !d.is_float() && *d != DType::Bool)
                .unwrap_or(DType::I64),
        ),
        Scalar::Float(v) => (v, like.filter(|d| d.is_float()).unwrap_or(DType::F32)),
        Scalar::Bool(v) => (if v { 1.0 } else { 0.0 }, DType::Bool),
    };
    let dtype = match (like, dtype) {
        (Some(l), d) if l.is_float() && !d.is_float() => l,
        (_, d) => d,
    };
    Some(b.constant(value, dtype))
}

pub(super) fn op1(
    b: &mut GraphBuilder,
    op: Op,
    ins: &[ValueId],
    attrs: Vec<(&'static str, Attr)>,
) -> Option<ValueId> {
    b.op1(op, ins, attrs).ok()
}

pub(super) fn unary(b: &mut GraphBuilder, c: &Call, op: Op) -> Mapped {
    let x = c.tensor(0, "self")?;
    one(op1(b, op, &[x], vec![]))
}

/// `a op (alpha * b)` for `add`/`sub` with `alpha`.
pub(super) fn binary(b: &mut GraphBuilder, c: &Call, op: Op, alpha: bool) -> Mapped {
    let x = operand(b, c, 0, "self", c.tensor(1, "other"))?;
    let mut y = operand(b, c, 1, "other", Some(x))?;
    if alpha {
        let a = c.float_or(2, "alpha", 1.0)?;
        if a != 1.0 {
            let k = operand_scalar(b, a, y);
            y = op1(b, Op::Mul, &[y, k], vec![])?;
        }
    }
    one(op1(b, op, &[x, y], vec![]))
}

pub(super) fn operand_scalar(b: &mut GraphBuilder, v: f64, like: ValueId) -> ValueId {
    let d = b.ty(like).dtype;
    b.constant(v, if d.is_float() { d } else { DType::F32 })
}

pub(super) fn dims_attr(v: Option<Vec<i64>>) -> Attr {
    match v {
        Some(d) if !d.is_empty() => Attr::Ints(d),
        _ => Attr::None,
    }
}

/// `shape` of a `full`-like call: a Full node of `dtype`.
pub(super) fn full(
    b: &mut GraphBuilder,
    shape: Vec<i64>,
    value: f64,
    dtype: DType,
) -> Option<ValueId> {
    op1(
        b,
        Op::Full,
        &[],
        vec![
            ("shape", Attr::Ints(shape)),
            ("value", Attr::Float(value)),
            ("dtype", Attr::DType(dtype)),
        ],
    )
}

pub(super) fn dtype_arg(c: &Call, i: usize, name: &str) -> Option<Option<DType>> {
    match c.get(i, name) {
        None | Some(Arg::None) => Some(None),
        Some(Arg::DType(d)) => Some(Some(*d)),
        Some(_) => None,
    }
}

/// Consecutive slices of `x` along `dim` with these sizes (`split`, `chunk`).
pub(super) fn slices(b: &mut GraphBuilder, x: ValueId, dim: i64, sizes: &[i64]) -> Mapped {
    let mut out = vec![];
    let mut start = 0;
    for &s in sizes {
        let v = op1(
            b,
            Op::Slice,
            &[x],
            vec![
                ("dim", Attr::Int(dim)),
                ("start", Attr::Int(start)),
                ("end", Attr::Int(start + s)),
                ("step", Attr::Int(1)),
            ],
        )?;
        out.push(Some(v));
        start += s;
    }
    Some(out)
}

pub(super) fn dim_size(b: &GraphBuilder, x: ValueId, dim: i64) -> Option<i64> {
    let t = b.ty(x);
    let r = t.rank() as i64;
    let d = if dim < 0 { dim + r } else { dim };
    (0..r).contains(&d).then(|| t.shape[d as usize])
}
