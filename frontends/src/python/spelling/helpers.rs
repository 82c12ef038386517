//! Argument helpers shared by the spelling sections: tensors and scalars from bound
//! arguments, dtype and dim arguments, and the error for randomness inside forward.

use crate::python::args::{Args, Bound};
use crate::python::emitter::Emitter;
use crate::python::error::{FrontendError, Span};
use crate::python::value::Val;
use drtc_ir::{Attr, DType, Op, ValueId};

type R<T> = Result<T, FrontendError>;

pub(super) fn tensor_arg(em: &mut Emitter, b: &Bound, name: &str) -> R<ValueId> {
    let v = b.required(name)?.clone();
    em.tensor(&v, &b.span_of(name))
}

pub(super) fn opt_tensor_arg(em: &mut Emitter, b: &Bound, name: &str) -> R<Option<ValueId>> {
    match b.opt(name).cloned() {
        None => Ok(None),
        Some(v) => em.tensor(&v, &b.span_of(name)).map(Some),
    }
}

/// A tensor, or a Python number turned into a constant typed like `like`.
pub(super) fn tensor_or_scalar(
    em: &mut Emitter,
    b: &Bound,
    name: &str,
    like: ValueId,
) -> R<ValueId> {
    let v = b.required(name)?.clone();
    let v = em.read(v, &b.span_of(name))?;
    match v {
        Val::Tensor(t) => Ok(t),
        other => {
            let d = em.ty(like).dtype;
            em.scalar_const(&other, Some(d), &b.span_of(name))
        }
    }
}

pub(super) fn dtype_arg(b: &Bound, name: &str) -> R<Option<DType>> {
    match b.opt(name) {
        None => Ok(None),
        Some(Val::DType(d)) => Ok(Some(*d)),
        Some(v) => Err(FrontendError::lowering(
            format!(
                "`{}`: `{name}` must be a dtype, got {}",
                b.func,
                v.type_name()
            ),
            b.span_of(name),
        )),
    }
}

pub(super) fn cast(em: &mut Emitter, t: ValueId, dtype: DType, span: &Span) -> R<ValueId> {
    if em.ty(t).dtype == dtype {
        return Ok(t);
    }
    em.emit(Op::Cast, &[t], vec![("dtype", Attr::DType(dtype))], span)
}

/// The `dtype=` argument of reductions and softmax: the input is cast first.
pub(super) fn with_dtype(em: &mut Emitter, b: &Bound, t: ValueId) -> R<ValueId> {
    match dtype_arg(b, "dtype")? {
        Some(d) => cast(em, t, d, &b.span),
        None => Ok(t),
    }
}

/// `dim` of a reduction: none (all dims), an int or a tuple of ints.
pub(super) fn dims_attr(b: &Bound, name: &str) -> R<Attr> {
    match b.ints(name)? {
        None => Ok(Attr::None),
        Some(v) if v.is_empty() => Ok(Attr::None),
        Some(v) => Ok(Attr::Ints(v)),
    }
}

pub(super) fn unary(
    em: &mut Emitter,
    b: &Bound,
    op: Op,
    attrs: Vec<(&'static str, Attr)>,
) -> R<Val> {
    let x = tensor_arg(em, b, "input")?;
    Ok(Val::Tensor(em.emit(op, &[x], attrs, &b.span)?))
}

pub(super) fn random_error(name: &str, span: &Span) -> FrontendError {
    FrontendError::random(
        format!("`{name}` draws random numbers inside forward, so the output is not a function of the inputs; drtc cannot compile or verify it"),
        span.clone(),
    )
}

/// A shape given as `*size` or as one sequence (`torch.rand(2, 3)`, `torch.rand((2, 3))`).
pub(super) fn size_arg(b: &Bound, name: &str) -> R<Vec<i64>> {
    let v = b.required(name)?.clone();
    let items = v
        .items()
        .map(|i| i.to_vec())
        .unwrap_or_else(|| vec![v.clone()]);
    let items = if items.len() == 1 && items[0].items().is_some() {
        items[0].items().unwrap_or(&[]).to_vec()
    } else {
        items
    };
    items
        .iter()
        .map(|x| match x {
            Val::Int(i) => Ok(*i),
            other => Err(FrontendError::lowering(
                format!(
                    "`{}`: sizes must be ints, got {}",
                    b.func,
                    other.type_name()
                ),
                b.span_of(name),
            )),
        })
        .collect()
}

/// Binds the arguments of a call to a `Tensor.*` / `torch.*` / `F.*` function.
pub(super) fn bind(args: &Args, key: &str, params: &[&'static str]) -> R<Bound> {
    args.bind(key, params)
}

/// The dtype a `torch.<name>` attribute or a `Tensor.<name>()` cast names.
pub fn torch_dtype(name: &str) -> Option<DType> {
    Some(match name {
        "float32" | "float" => DType::F32,
        "float64" | "double" => DType::F64,
        "float16" | "half" => DType::F16,
        "bfloat16" => DType::BF16,
        "int32" | "int" => DType::I32,
        "int64" | "long" => DType::I64,
        "bool" => DType::Bool,
        _ => return None,
    })
}

/// Argument `name` of a call spelled as `op`, read by the kind of `op`'s attribute of that
/// name, with the table's default when it is not given (an explicit `None` counts as not
/// given, like PyTorch's optional arguments).
pub(super) fn attr_arg(b: &Bound, op: Op, name: &'static str) -> R<Attr> {
    use drtc_ir::AttrKind as K;
    let def = op
        .def()
        .attr(name)
        .unwrap_or_else(|| panic!("`{op}` declares no attribute `{name}`"));
    if b.opt(name).is_none() {
        return def.default.value().ok_or_else(|| match b.get(name) {
            Some(v) => FrontendError::lowering(
                format!(
                    "`{}`: argument `{name}` must be {}, got {}",
                    b.func,
                    def.kind.describe(),
                    v.type_name()
                ),
                b.span_of(name),
            ),
            None => FrontendError::lowering(
                format!("`{}` is missing its argument `{name}`", b.func),
                b.span.clone(),
            ),
        });
    }
    Ok(match def.kind {
        K::Bool => Attr::Bool(b.bool(name, false)?),
        K::Int => Attr::Int(b.int(name, 0)?),
        K::Float => Attr::Float(b.float(name, 0.0)?),
        K::Str => Attr::Str(b.str(name, "")?),
        K::Ints => Attr::Ints(b.ints(name)?.unwrap_or_default()),
        K::DType => dtype_arg(b, name)?.map_or(Attr::None, Attr::DType),
        K::OptInt => b.opt_int(name)?.map_or(Attr::None, Attr::Int),
        K::OptFloat => b.opt_float(name)?.map_or(Attr::None, Attr::Float),
        K::OptInts => dims_attr(b, name)?,
    })
}

/// A float argument of a call spelled as `op`, with the table's default.
pub(super) fn float_arg(b: &Bound, op: Op, name: &'static str) -> R<f64> {
    Ok(attr_arg(b, op, name)?.as_float().unwrap_or(f64::NAN))
}

/// A per-dim ints argument of a call spelled as `op` (one int is repeated `n` times), with
/// the table's default.
pub(super) fn ints_arg(b: &Bound, op: Op, name: &'static str, n: usize) -> R<Vec<i64>> {
    match b.opt(name) {
        Some(v) => b.as_ints_n(name, v, n),
        None => Ok(match op.default_of(name) {
            Attr::Ints(v) => v,
            other => panic!("`{op}`: the default of `{name}` is {other}, not ints"),
        }),
    }
}
