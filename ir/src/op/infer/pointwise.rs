//! Pointwise rules: unary, broadcasting binary and n-ary ops, creation.

use super::*;

/// Same type as the input (relu, abs, neg, clamp...).
pub fn same(inputs: &[&TensorType], _: AttrView) -> InferResult {
    one(inputs[0].clone())
}

/// Same type, numbers only: bools are rejected, like PyTorch (relu, abs, neg).
pub fn numeric(inputs: &[&TensorType], _: AttrView) -> InferResult {
    if inputs[0].dtype == DType::Bool {
        return Err("this op does not accept bool tensors".into());
    }
    one(inputs[0].clone())
}

/// Floating result: floats keep their dtype, integers become f32 (sigmoid, exp...).
pub fn unary_float(inputs: &[&TensorType], _: AttrView) -> InferResult {
    one(inputs[0].with_dtype(inputs[0].dtype.to_float()))
}

/// Same type, floating inputs only: PyTorch's activation kernels (silu, gelu, elu,
/// leaky_relu...) are not implemented for integers, unlike `torch.sigmoid`.
pub fn float_only(inputs: &[&TensorType], _: AttrView) -> InferResult {
    require_float(inputs[0], "this activation")?;
    one(inputs[0].clone())
}

/// `cast {dtype}`.
pub fn cast(inputs: &[&TensorType], a: AttrView) -> InferResult {
    one(inputs[0].with_dtype(a.dtype("dtype")?))
}

/// `dropout {p, training}`: shape-preserving; a probability must lie in [0, 1].
pub fn dropout(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let p = a.float("p")?;
    if !(0.0..=1.0).contains(&p) {
        return Err(format!("dropout probability must be in [0, 1], got {p}"));
    }
    require_float(inputs[0], "dropout")?;
    one(inputs[0].clone())
}

/// Broadcasting binary (and n-ary) op with PyTorch's type promotion (add, mul, maximum...).
pub fn broadcast(inputs: &[&TensorType], _: AttrView) -> InferResult {
    let (shape, dtype) = broadcast_all(inputs)?;
    one(TensorType::new(dtype, shape))
}

/// `lerp(start, end, weight)`: start, end and a dimensioned weight must share a dtype; a
/// 0-dim weight may have another.
pub fn lerp(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let weight = inputs[2];
    let same = if weight.rank() == 0 {
        &inputs[..2]
    } else {
        inputs
    };
    require_same_dtype(same, "lerp")?;
    broadcast(inputs, a)
}

/// `pow`: broadcasting; a bool result (both operands bool) has no kernel in PyTorch.
pub fn power(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let out = broadcast(inputs, a)?;
    if out[0].dtype == DType::Bool {
        return Err("pow is not implemented for two bool tensors".into());
    }
    Ok(out)
}

/// softsign `x / (1 + |x|)`: like [`unary_float`], but bools have no `abs`.
pub fn softsign(inputs: &[&TensorType], a: AttrView) -> InferResult {
    if inputs[0].dtype == DType::Bool {
        return Err("softsign does not accept bool tensors".into());
    }
    unary_float(inputs, a)
}

/// `sub`: broadcasting, and PyTorch refuses bool operands (use `~` or `logical_xor`).
pub fn subtract(inputs: &[&TensorType], a: AttrView) -> InferResult {
    if inputs.iter().any(|t| t.dtype == DType::Bool) {
        return Err("sub does not accept bool tensors".into());
    }
    broadcast(inputs, a)
}

/// `clamp {min, max}`: at least one bound; the bounds are numbers (floats once
/// normalized), so integer and bool inputs give the default float dtype, like
/// `torch.clamp(x, min=0.0)`.
pub fn clamp(inputs: &[&TensorType], a: AttrView) -> InferResult {
    if a.opt_float("min")?.is_none() && a.opt_float("max")?.is_none() {
        return Err("clamp needs at least one of `min` and `max`".into());
    }
    unary_float(inputs, a)
}

/// True division: broadcasting, integer results become f32.
pub fn broadcast_float(inputs: &[&TensorType], _: AttrView) -> InferResult {
    let (shape, dtype) = broadcast_all(inputs)?;
    one(TensorType::new(dtype.to_float(), shape))
}

/// Comparisons: broadcasting, bool result.
pub fn compare(inputs: &[&TensorType], _: AttrView) -> InferResult {
    let (shape, _) = broadcast_all(inputs)?;
    one(TensorType::new(DType::Bool, shape))
}

/// `where(cond, a, b)`: cond must be bool; all three broadcast; dtype from a and b.
pub fn select_where(inputs: &[&TensorType], _: AttrView) -> InferResult {
    if inputs[0].dtype != DType::Bool {
        return Err(format!(
            "where's condition must be bool, got {}",
            inputs[0].dtype
        ));
    }
    let shape = broadcast_shapes(&inputs[0].shape, &broadcast_all(&inputs[1..])?.0)?;
    let (_, dtype) = broadcast_all(&inputs[1..])?;
    one(TensorType::new(dtype, shape))
}

/// `full {shape, value, dtype}`: a constant tensor.
pub fn arange(_: &[&TensorType], a: AttrView) -> InferResult {
    let end = a.int("end")?;
    if end < 0 {
        return Err(format!("arange's end {end} is negative"));
    }
    one(TensorType::new(a.dtype("dtype")?, vec![end]))
}

pub fn full(_: &[&TensorType], a: AttrView) -> InferResult {
    let shape = a.ints("shape")?;
    if let Some(d) = shape.iter().find(|&&d| d < 0) {
        return Err(format!("full's shape has a negative dimension {d}"));
    }
    one(TensorType::new(a.dtype("dtype")?, shape.to_vec()))
}
