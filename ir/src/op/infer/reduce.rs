//! Reductions, scans and losses.

use super::*;

fn reduce_dims(t: &TensorType, dims: Option<&[i64]>) -> Result<Vec<bool>, String> {
    let mut mask = vec![dims.is_none(); t.rank()];
    if let Some(dims) = dims {
        for &d in dims {
            let d = normalize_dim(d, t.rank())?;
            if t.rank() > 0 {
                if mask[d] {
                    return Err(format!("dimension {d} appears twice in the reduction"));
                }
                mask[d] = true;
            }
        }
    }
    Ok(mask)
}

fn reduced_shape(t: &TensorType, dims: Option<&[i64]>, keepdim: bool) -> Result<Shape, String> {
    let mask = reduce_dims(t, dims)?;
    Ok(t.shape
        .iter()
        .zip(&mask)
        .filter_map(|(&d, &m)| match (m, keepdim) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect())
}

/// `dim: ints | none` + `keepdim`; the dtype rule is passed in.
fn reduce_with(inputs: &[&TensorType], a: AttrView, dtype: DType) -> InferResult {
    let shape = reduced_shape(inputs[0], a.opt_ints("dim")?, a.bool("keepdim")?)?;
    one(TensorType::new(dtype, shape))
}

/// sum and prod: integers accumulate in i64.
pub fn reduce_accumulate(inputs: &[&TensorType], a: AttrView) -> InferResult {
    reduce_with(inputs, a, inputs[0].dtype.accumulate())
}

/// max and min (values): same dtype.
pub fn reduce_same(inputs: &[&TensorType], a: AttrView) -> InferResult {
    reduce_with(inputs, a, inputs[0].dtype)
}

/// mean, var, std, norm, logsumexp: floating inputs only, like PyTorch.
pub fn reduce_float(inputs: &[&TensorType], a: AttrView) -> InferResult {
    require_float(inputs[0], "this reduction")?;
    reduce_with(inputs, a, inputs[0].dtype)
}

/// logsumexp: integers give f32 (`torch.logsumexp` casts them), floats keep their dtype.
pub fn reduce_to_float(inputs: &[&TensorType], a: AttrView) -> InferResult {
    reduce_with(inputs, a, inputs[0].dtype.to_float())
}

/// argmax/argmin `{dim: int | none, keepdim}`: i64 indices; no dim flattens.
pub fn reduce_arg(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let t = inputs[0];
    if t.dtype == DType::Bool {
        return Err("argmax/argmin do not accept bool tensors".into());
    }
    let keepdim = a.bool("keepdim")?;
    let shape = match a.opt_int("dim")? {
        Some(d) => reduced_shape(t, Some(&[d]), keepdim)?,
        None if keepdim => vec![1; t.rank()],
        None => vec![],
    };
    one(TensorType::new(DType::I64, shape))
}

/// Along one dim, same shape (softmax, cummax...): checks the dim.
pub fn along_dim(inputs: &[&TensorType], a: AttrView) -> InferResult {
    normalize_dim(a.int("dim")?, inputs[0].rank())?;
    one(inputs[0].clone())
}

/// Along one dim, floating inputs only (softmax, log_softmax: no integer kernels).
pub fn along_dim_float(inputs: &[&TensorType], a: AttrView) -> InferResult {
    require_float(inputs[0], "softmax")?;
    normalize_dim(a.int("dim")?, inputs[0].rank())?;
    one(inputs[0].clone())
}

/// cumsum/cumprod: along a dim, integers accumulate in i64.
pub fn scan_accumulate(inputs: &[&TensorType], a: AttrView) -> InferResult {
    normalize_dim(a.int("dim")?, inputs[0].rank())?;
    one(inputs[0].with_dtype(inputs[0].dtype.accumulate()))
}

// ---------------------------------------------------------------- losses

/// The result of a loss: the unreduced shape for "none", a scalar otherwise.
/// "batchmean" is only valid for kl_div.
fn loss_result(dtype: DType, a: AttrView, unreduced: Shape, batchmean: bool) -> InferResult {
    match a.str("reduction")? {
        "none" => one(TensorType::new(dtype, unreduced)),
        "mean" | "sum" => one(TensorType::scalar(dtype)),
        "batchmean" if batchmean => one(TensorType::scalar(dtype)),
        r if batchmean => Err(format!(
            "reduction must be \"none\", \"mean\", \"sum\" or \"batchmean\", got {r:?}"
        )),
        r => Err(format!(
            "reduction must be \"none\", \"mean\" or \"sum\", got {r:?}"
        )),
    }
}

/// Elementwise losses of two broadcastable operands (mse, smooth_l1); the dtype is the
/// promotion of both (`mse_loss(f16, f32)` is f32).
pub fn pointwise_loss(inputs: &[&TensorType], a: AttrView) -> InferResult {
    require_float(inputs[0], "a loss")?;
    let shape = broadcast_shapes(&inputs[0].shape, &inputs[1].shape)?;
    let dtype = promote_types(inputs[0].dtype, inputs[1].dtype);
    loss_result(dtype, a, shape, false)
}

/// kl_div: like [`pointwise_loss`], and also accepts the "batchmean" reduction.
pub fn kl_div_loss(inputs: &[&TensorType], a: AttrView) -> InferResult {
    require_float(inputs[0], "kl_div")?;
    let shape = broadcast_shapes(&inputs[0].shape, &inputs[1].shape)?;
    let dtype = promote_types(inputs[0].dtype, inputs[1].dtype);
    loss_result(dtype, a, shape, true)
}

/// cross_entropy(input [N, C, ...], target [N, ...] int class indices).
pub fn cross_entropy(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let (x, t) = (inputs[0], inputs[1]);
    require_float(x, "cross_entropy")?;
    if x.rank() < 1 {
        return Err("cross_entropy needs an input of rank >= 1".into());
    }
    if !t.dtype.is_float() && t.dtype != DType::I64 {
        return Err(format!(
            "cross_entropy's class-index target must be i64, got {}",
            t.dtype
        ));
    }
    if t.dtype.is_float() {
        // class probabilities: same shape as the input
        if t.shape != x.shape {
            return Err(format!(
                "cross_entropy with probability targets needs equal shapes, got {:?} and {:?}",
                x.shape, t.shape
            ));
        }
    } else {
        let mut expect = x.shape.clone();
        if x.rank() >= 2 {
            expect.remove(1);
        } else {
            expect.clear();
        }
        if t.shape != expect {
            return Err(format!(
                "cross_entropy's target must have shape {expect:?} for input {:?}, got {:?}",
                x.shape, t.shape
            ));
        }
    }
    let mut unreduced = x.shape.clone();
    if x.rank() >= 2 {
        unreduced.remove(1);
    } else {
        unreduced.clear();
    }
    // probability targets take part in the promotion; class indices do not
    let dtype = if t.dtype.is_float() {
        promote_types(x.dtype, t.dtype)
    } else {
        x.dtype
    };
    loss_result(dtype, a, unreduced, false)
}

/// triplet_margin_loss(anchor, positive, negative): distances along the last dim.
pub fn triplet_loss(inputs: &[&TensorType], a: AttrView) -> InferResult {
    require_float(inputs[0], "triplet_margin_loss")?;
    if inputs.iter().any(|t| t.rank() != inputs[0].rank()) {
        return Err("triplet_margin_loss needs anchor, positive and negative of equal rank".into());
    }
    let (shape, _) = broadcast_all(inputs)?;
    if shape.is_empty() {
        return Err("triplet_margin_loss needs inputs of rank >= 1".into());
    }
    let unreduced = shape[..shape.len() - 1].to_vec();
    let dtype = inputs
        .iter()
        .fold(inputs[0].dtype, |d, t| promote_types(d, t.dtype));
    loss_result(dtype, a, unreduced, false)
}
