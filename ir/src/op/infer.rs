//! Shape and dtype inference rules, shared by the entries of the op table.
//!
//! Each rule gets the input types and the normalized attributes and returns the result
//! types, or a message saying what is wrong. Formulas follow PyTorch's documentation.

use super::AttrView;
use crate::dtype::{promote_types, result_type};
use crate::{DType, Shape, TensorType};

pub type InferResult = Result<Vec<TensorType>, String>;
/// An inference rule.
pub type InferFn = fn(&[&TensorType], AttrView<'_>) -> InferResult;

fn one(t: TensorType) -> InferResult {
    Ok(vec![t])
}

/// Resolves a possibly negative `dim` against `rank` (rank 0 accepts -1 and 0, like PyTorch).
pub fn normalize_dim(dim: i64, rank: usize) -> Result<usize, String> {
    let r = rank.max(1) as i64;
    if dim < -r || dim >= r {
        return Err(format!(
            "dimension {dim} out of range for a tensor of rank {rank} (expected {} to {})",
            -r,
            r - 1
        ));
    }
    Ok(if dim < 0 {
        (dim + r) as usize
    } else {
        dim as usize
    })
}

/// NumPy-style broadcasting of two shapes.
pub fn broadcast_shapes(a: &[i64], b: &[i64]) -> Result<Shape, String> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let da = if i < n - a.len() {
            1
        } else {
            a[i - (n - a.len())]
        };
        let db = if i < n - b.len() {
            1
        } else {
            b[i - (n - b.len())]
        };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(format!(
                "shapes {a:?} and {b:?} do not broadcast (dimension {i} of the result: {da} vs {db})"
            ));
        };
    }
    Ok(out)
}

/// Contractions and convolutions do not promote: PyTorch requires equal dtypes
/// (`matmul(f16, f32)` is an error).
fn require_same_dtype(inputs: &[&TensorType], what: &str) -> Result<DType, String> {
    let d = inputs[0].dtype;
    match inputs.iter().find(|t| t.dtype != d) {
        Some(t) => Err(format!(
            "{what} needs operands of one dtype, got {d} and {}",
            t.dtype
        )),
        None => Ok(d),
    }
}

fn require_float(t: &TensorType, what: &str) -> Result<(), String> {
    if t.dtype.is_float() {
        Ok(())
    } else {
        Err(format!(
            "{what} needs a floating-point input, got {}",
            t.dtype
        ))
    }
}

// ---------------------------------------------------------------- pointwise

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

fn broadcast_all(inputs: &[&TensorType]) -> Result<(Shape, DType), String> {
    let mut shape: Shape = vec![];
    let mut dtype = inputs[0].dtype;
    let mut rank0 = inputs[0].rank() == 0;
    for (i, t) in inputs.iter().enumerate() {
        shape = broadcast_shapes(&shape, &t.shape)?;
        if i > 0 {
            dtype = result_type(dtype, rank0, t.dtype, t.rank() == 0);
            rank0 = rank0 && t.rank() == 0;
        }
    }
    Ok((shape, dtype))
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
pub fn full(_: &[&TensorType], a: AttrView) -> InferResult {
    let shape = a.ints("shape")?;
    if let Some(d) = shape.iter().find(|&&d| d < 0) {
        return Err(format!("full's shape has a negative dimension {d}"));
    }
    one(TensorType::new(a.dtype("dtype")?, shape.to_vec()))
}

// ---------------------------------------------------------------- reductions

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

// ---------------------------------------------------------------- contractions

/// `torch.matmul`: 1-D operands are promoted and the added dims removed; batch dims broadcast.
pub fn matmul(inputs: &[&TensorType], _: AttrView) -> InferResult {
    let (a, b) = (inputs[0], inputs[1]);
    if a.rank() == 0 || b.rank() == 0 {
        return Err("matmul needs operands of rank >= 1".into());
    }
    let dtype = require_same_dtype(inputs, "matmul")?;
    let a_shape: Shape = if a.rank() == 1 {
        vec![1, a.shape[0]]
    } else {
        a.shape.clone()
    };
    let b_shape: Shape = if b.rank() == 1 {
        vec![b.shape[0], 1]
    } else {
        b.shape.clone()
    };
    let (m, k1) = (a_shape[a_shape.len() - 2], a_shape[a_shape.len() - 1]);
    let (k2, n) = (b_shape[b_shape.len() - 2], b_shape[b_shape.len() - 1]);
    if k1 != k2 {
        return Err(format!(
            "matmul: inner dimensions differ ({:?} @ {:?}: {k1} vs {k2})",
            a.shape, b.shape
        ));
    }
    let batch = broadcast_shapes(&a_shape[..a_shape.len() - 2], &b_shape[..b_shape.len() - 2])?;
    let mut out = batch;
    if a.rank() > 1 {
        out.push(m);
    }
    if b.rank() > 1 {
        out.push(n);
    }
    one(TensorType::new(dtype, out))
}

/// `bmm`: [B, M, K] x [B, K, N] -> [B, M, N], no broadcasting.
pub fn bmm(inputs: &[&TensorType], _: AttrView) -> InferResult {
    let (a, b) = (inputs[0], inputs[1]);
    if a.rank() != 3 || b.rank() != 3 {
        return Err(format!(
            "bmm needs two rank-3 tensors, got ranks {} and {}",
            a.rank(),
            b.rank()
        ));
    }
    if a.shape[0] != b.shape[0] || a.shape[2] != b.shape[1] {
        return Err(format!(
            "bmm: shapes {:?} and {:?} do not match",
            a.shape, b.shape
        ));
    }
    let dtype = require_same_dtype(inputs, "bmm")?;
    one(TensorType::new(
        dtype,
        vec![a.shape[0], a.shape[1], b.shape[2]],
    ))
}

/// `linear(x [..., in], weight [out, in], bias? [out])` -> [..., out].
pub fn linear(inputs: &[&TensorType], _: AttrView) -> InferResult {
    let (x, w) = (inputs[0], inputs[1]);
    if w.rank() != 2 || x.rank() < 1 {
        return Err(format!("linear needs a rank-2 weight, got {:?}", w.shape));
    }
    let k = x.shape.last().copied().unwrap_or(0);
    if k != w.shape[1] {
        return Err(format!(
            "linear: input features {k} do not match the weight {:?}",
            w.shape
        ));
    }
    if let Some(b) = inputs.get(2) {
        if b.shape != vec![w.shape[0]] {
            return Err(format!(
                "linear: bias must have shape [{}], got {:?}",
                w.shape[0], b.shape
            ));
        }
    }
    let dtype = require_same_dtype(inputs, "linear")?;
    let mut out = x.shape.clone();
    if let Some(last) = out.last_mut() {
        *last = w.shape[0];
    }
    one(TensorType::new(dtype, out))
}

/// `einsum {equation}` for explicit (`->`) and implicit equations without ellipsis.
pub fn einsum(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let eq: String = a
        .str("equation")?
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l.to_string(), Some(r.to_string())),
        None => (eq.clone(), None),
    };
    if eq.contains("...") {
        return Err("einsum with `...` is not supported".into());
    }
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != inputs.len() {
        return Err(format!(
            "einsum equation has {} operands but {} inputs were given",
            terms.len(),
            inputs.len()
        ));
    }
    let mut sizes = std::collections::BTreeMap::new();
    let mut counts = std::collections::BTreeMap::new();
    for (term, t) in terms.iter().zip(inputs) {
        if term.chars().count() != t.rank() {
            return Err(format!(
                "einsum term `{term}` does not match rank {}",
                t.rank()
            ));
        }
        for (c, &d) in term.chars().zip(&t.shape) {
            if !c.is_ascii_alphabetic() {
                return Err(format!("einsum: bad subscript `{c}`"));
            }
            *counts.entry(c).or_insert(0) += 1;
            match sizes.insert(c, d) {
                Some(prev) if prev != d && prev != 1 && d != 1 => {
                    return Err(format!("einsum: `{c}` has sizes {prev} and {d}"))
                }
                Some(prev) if prev != 1 => {
                    sizes.insert(c, prev);
                }
                _ => {}
            }
        }
    }
    let out: String = match rhs {
        Some(r) => r,
        None => counts
            .iter()
            .filter(|(_, &n)| n == 1)
            .map(|(c, _)| *c)
            .collect(),
    };
    let mut shape = vec![];
    for c in out.chars() {
        shape.push(
            *sizes
                .get(&c)
                .ok_or_else(|| format!("einsum: output subscript `{c}` is not in any input"))?,
        );
    }
    let dtype = require_same_dtype(inputs, "einsum")?;
    one(TensorType::new(dtype, shape))
}

/// `scaled_dot_product_attention(q [..., L, E], k [..., S, E], v [..., S, Ev], mask?)`.
pub fn attention(inputs: &[&TensorType], _: AttrView) -> InferResult {
    let (q, k, v) = (inputs[0], inputs[1], inputs[2]);
    if q.rank() < 2 || k.rank() < 2 || v.rank() < 2 {
        return Err("attention needs q, k, v of rank >= 2".into());
    }
    let (l, e) = (q.shape[q.rank() - 2], q.shape[q.rank() - 1]);
    let (s, ek) = (k.shape[k.rank() - 2], k.shape[k.rank() - 1]);
    let (sv, ev) = (v.shape[v.rank() - 2], v.shape[v.rank() - 1]);
    if e != ek || s != sv {
        return Err(format!(
            "attention: q {:?}, k {:?}, v {:?} do not match",
            q.shape, k.shape, v.shape
        ));
    }
    let batch = broadcast_shapes(&q.shape[..q.rank() - 2], &k.shape[..k.rank() - 2])?;
    let mut out = broadcast_shapes(&batch, &v.shape[..v.rank() - 2])?;
    out.push(l);
    out.push(ev);
    let dtype = require_same_dtype(&inputs[..3], "scaled_dot_product_attention")?;
    one(TensorType::new(dtype, out))
}

// ---------------------------------------------------------------- convolution, pooling

/// PyTorch's output size of a convolution or pooling window along one dim:
/// `floor((input + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1`, rounding up
/// instead in `ceil_mode`, where the last window must still start inside the input or the
/// left padding. Computed without overflow; a `stride` below 1 gives 0 (callers reject it).
pub fn conv_out_size(
    input: i64,
    kernel: i64,
    stride: i64,
    padding: i64,
    dilation: i64,
    ceil_mode: bool,
) -> i64 {
    if stride < 1 {
        return 0;
    }
    let (input, kernel, stride, padding, dilation) = (
        input as i128,
        kernel as i128,
        stride as i128,
        padding as i128,
        dilation as i128,
    );
    let span = input + 2 * padding - dilation * (kernel - 1) - 1;
    let out = if ceil_mode {
        let mut out = (span + stride - 1).div_euclid(stride) + 1;
        if (out - 1) * stride >= input + padding {
            out -= 1;
        }
        out
    } else {
        span.div_euclid(stride) + 1
    };
    out.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// Checks that every value of the list attribute `name` is at least `min`.
fn at_least(name: &str, values: &[i64], min: i64) -> Result<(), String> {
    match values.iter().find(|&&v| v < min) {
        Some(v) => Err(format!("`{name}` must be >= {min}, got {v}")),
        None => Ok(()),
    }
}

/// A size computed in `i128`, as an `i64` no larger than [`super::MAX_DIM`].
fn to_dim(v: i128, what: &str) -> Result<i64, String> {
    if v > super::MAX_DIM as i128 {
        Err(format!("{what} is too large ({v})"))
    } else {
        Ok(v.max(i64::MIN as i128) as i64)
    }
}

/// Pooling output size (same formula as convolution).
pub fn pool_out_size(
    input: i64,
    kernel: i64,
    stride: i64,
    padding: i64,
    dilation: i64,
    ceil: bool,
) -> i64 {
    conv_out_size(input, kernel, stride, padding, dilation, ceil)
}

fn spatial_list(a: AttrView, name: &str, n: usize) -> Result<Vec<i64>, String> {
    let v = a.ints(name)?;
    match v.len() {
        1 => Ok(vec![v[0]; n]),
        k if k == n => Ok(v.to_vec()),
        k => Err(format!("attribute `{name}` needs 1 or {n} values, got {k}")),
    }
}

fn batched_spatial(x: &TensorType, n: usize, what: &str) -> Result<(Shape, usize), String> {
    // accepts [N, C, *spatial] or unbatched [C, *spatial]
    if x.rank() == n + 2 {
        Ok((x.shape[..2].to_vec(), 2))
    } else if x.rank() == n + 1 {
        Ok((x.shape[..1].to_vec(), 1))
    } else {
        Err(format!(
            "{what} needs an input of rank {} or {}, got {:?}",
            n + 1,
            n + 2,
            x.shape
        ))
    }
}

fn conv_nd(inputs: &[&TensorType], a: AttrView, n: usize) -> InferResult {
    let (x, w) = (inputs[0], inputs[1]);
    let (mut lead, sp) = batched_spatial(x, n, "convolution")?;
    if w.rank() != n + 2 {
        return Err(format!(
            "convolution weight must have rank {}, got {:?}",
            n + 2,
            w.shape
        ));
    }
    let groups = a.int("groups")?;
    let cin = x.shape[sp - 1];
    if groups < 1 || cin % groups != 0 || w.shape[0] % groups != 0 {
        return Err(format!(
            "groups={groups} must divide the input channels {cin} and output channels {}",
            w.shape[0]
        ));
    }
    let expected_cin = w.shape[1] as i128 * groups as i128;
    if expected_cin != cin as i128 {
        return Err(format!(
            "convolution: weight {:?} expects {expected_cin} input channels (groups={groups}), input has {cin}",
            w.shape,
        ));
    }
    if let Some(b) = inputs.get(2) {
        if b.shape != vec![w.shape[0]] {
            return Err(format!(
                "convolution bias must have shape [{}], got {:?}",
                w.shape[0], b.shape
            ));
        }
    }
    let (stride, padding, dilation) = (
        spatial_list(a, "stride", n)?,
        spatial_list(a, "padding", n)?,
        spatial_list(a, "dilation", n)?,
    );
    at_least("stride", &stride, 1)?;
    at_least("padding", &padding, 0)?;
    at_least("dilation", &dilation, 1)?;
    if let Some(last) = lead.last_mut() {
        *last = w.shape[0];
    }
    for i in 0..n {
        let o = conv_out_size(
            x.shape[sp + i],
            w.shape[2 + i],
            stride[i],
            padding[i],
            dilation[i],
            false,
        );
        if o < 1 {
            return Err(format!(
                "convolution output size along spatial dim {i} is {o} (< 1)"
            ));
        }
        lead.push(o);
    }
    let dtype = require_same_dtype(inputs, "convolution")?;
    one(TensorType::new(dtype, lead))
}

pub fn conv1d(i: &[&TensorType], a: AttrView) -> InferResult {
    conv_nd(i, a, 1)
}
pub fn conv2d(i: &[&TensorType], a: AttrView) -> InferResult {
    conv_nd(i, a, 2)
}
pub fn conv3d(i: &[&TensorType], a: AttrView) -> InferResult {
    conv_nd(i, a, 3)
}

fn conv_transpose_nd(inputs: &[&TensorType], a: AttrView, n: usize) -> InferResult {
    let (x, w) = (inputs[0], inputs[1]);
    let (mut lead, sp) = batched_spatial(x, n, "transposed convolution")?;
    if w.rank() != n + 2 {
        return Err(format!(
            "transposed convolution weight must have rank {}, got {:?}",
            n + 2,
            w.shape
        ));
    }
    let groups = a.int("groups")?;
    let cin = x.shape[sp - 1];
    if groups < 1 || cin != w.shape[0] || cin % groups != 0 {
        return Err(format!(
            "transposed convolution: weight {:?} expects {} input channels, input has {cin} (groups={groups})",
            w.shape, w.shape[0]
        ));
    }
    let cout = to_dim(w.shape[1] as i128 * groups as i128, "output channels")?;
    if let Some(b) = inputs.get(2) {
        if b.shape != vec![cout] {
            return Err(format!(
                "transposed convolution bias must have shape [{cout}], got {:?}",
                b.shape
            ));
        }
    }
    let (stride, padding, out_pad, dilation) = (
        spatial_list(a, "stride", n)?,
        spatial_list(a, "padding", n)?,
        spatial_list(a, "output_padding", n)?,
        spatial_list(a, "dilation", n)?,
    );
    at_least("stride", &stride, 1)?;
    at_least("padding", &padding, 0)?;
    at_least("output_padding", &out_pad, 0)?;
    at_least("dilation", &dilation, 1)?;
    if let Some(last) = lead.last_mut() {
        *last = cout;
    }
    for i in 0..n {
        if out_pad[i] >= stride[i] && out_pad[i] >= dilation[i] {
            return Err(format!(
                "output_padding {} must be smaller than stride {} or dilation {}",
                out_pad[i], stride[i], dilation[i]
            ));
        }
        // (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1
        let o = (x.shape[sp + i] as i128 - 1) * stride[i] as i128 - 2 * padding[i] as i128
            + dilation[i] as i128 * (w.shape[2 + i] as i128 - 1)
            + out_pad[i] as i128
            + 1;
        let o = to_dim(o, "transposed convolution output size")?;
        // (PyTorch's CPU kernels disagree on whether an empty result is an error; it is one here)
        if o < 1 {
            return Err(format!(
                "transposed convolution output size along spatial dim {i} is {o} (< 1)"
            ));
        }
        lead.push(o);
    }
    let dtype = require_same_dtype(inputs, "convolution")?;
    one(TensorType::new(dtype, lead))
}

pub fn conv_transpose1d(i: &[&TensorType], a: AttrView) -> InferResult {
    conv_transpose_nd(i, a, 1)
}
pub fn conv_transpose2d(i: &[&TensorType], a: AttrView) -> InferResult {
    conv_transpose_nd(i, a, 2)
}
pub fn conv_transpose3d(i: &[&TensorType], a: AttrView) -> InferResult {
    conv_transpose_nd(i, a, 3)
}

fn pool_nd(inputs: &[&TensorType], a: AttrView, n: usize, has_dilation: bool) -> InferResult {
    let x = inputs[0];
    let (mut lead, sp) = batched_spatial(x, n, "pooling")?;
    let kernel = spatial_list(a, "kernel_size", n)?;
    let stride = match a.opt_ints("stride")? {
        None => kernel.clone(),
        Some([]) => kernel.clone(),
        Some(_) => spatial_list(a, "stride", n)?,
    };
    let padding = spatial_list(a, "padding", n)?;
    let dilation = if has_dilation {
        spatial_list(a, "dilation", n)?
    } else {
        vec![1; n]
    };
    let ceil = a.bool("ceil_mode")?;
    at_least("kernel_size", &kernel, 1)?;
    at_least("stride", &stride, 1)?;
    at_least("padding", &padding, 0)?;
    at_least("dilation", &dilation, 1)?;
    for i in 0..n {
        // PyTorch: pad <= kernel / 2, whatever the dilation
        if padding[i] > kernel[i] / 2 {
            return Err(format!(
                "pad should be at most half of the kernel size (padding {}, kernel {})",
                padding[i], kernel[i]
            ));
        }
        let o = pool_out_size(
            x.shape[sp + i],
            kernel[i],
            stride[i],
            padding[i],
            dilation[i],
            ceil,
        );
        if o < 1 {
            return Err(format!(
                "pooling output size along spatial dim {i} is {o} (< 1)"
            ));
        }
        lead.push(o);
    }
    one(TensorType::new(x.dtype, lead))
}

pub fn max_pool1d(i: &[&TensorType], a: AttrView) -> InferResult {
    pool_nd(i, a, 1, true)
}
pub fn max_pool2d(i: &[&TensorType], a: AttrView) -> InferResult {
    pool_nd(i, a, 2, true)
}
pub fn max_pool3d(i: &[&TensorType], a: AttrView) -> InferResult {
    pool_nd(i, a, 3, true)
}
pub fn avg_pool1d(i: &[&TensorType], a: AttrView) -> InferResult {
    require_float(i[0], "avg_pool")?;
    pool_nd(i, a, 1, false)
}
pub fn avg_pool2d(i: &[&TensorType], a: AttrView) -> InferResult {
    require_float(i[0], "avg_pool")?;
    pool_nd(i, a, 2, false)
}
/// avg_pool3d also needs every (unpadded) spatial size to hold the kernel, as PyTorch
/// checks.
pub fn avg_pool3d(i: &[&TensorType], a: AttrView) -> InferResult {
    require_float(i[0], "avg_pool")?;
    let out = pool_nd(i, a, 3, false)?;
    let kernel = spatial_list(a, "kernel_size", 3)?;
    let spatial = &i[0].shape[i[0].rank() - 3..];
    if spatial.iter().zip(&kernel).any(|(s, k)| s < k) {
        return Err(format!(
            "avg_pool3d: input {spatial:?} is smaller than the kernel {kernel:?}"
        ));
    }
    Ok(out)
}

fn adaptive_nd(inputs: &[&TensorType], a: AttrView, n: usize) -> InferResult {
    let x = inputs[0];
    require_float(x, "adaptive_avg_pool")?;
    let (mut lead, _) = batched_spatial(x, n, "adaptive pooling")?;
    let out = spatial_list(a, "output_size", n)?;
    if out.iter().any(|&o| o < 0) {
        return Err(format!(
            "adaptive pooling output size must be >= 0, got {out:?}"
        ));
    }
    lead.extend(out);
    one(TensorType::new(x.dtype, lead))
}

pub fn adaptive_avg_pool1d(i: &[&TensorType], a: AttrView) -> InferResult {
    adaptive_nd(i, a, 1)
}
pub fn adaptive_avg_pool2d(i: &[&TensorType], a: AttrView) -> InferResult {
    adaptive_nd(i, a, 2)
}
pub fn adaptive_avg_pool3d(i: &[&TensorType], a: AttrView) -> InferResult {
    adaptive_nd(i, a, 3)
}

// ---------------------------------------------------------------- normalization

fn check_affine(inputs: &[&TensorType], expect: &[i64], what: &str) -> Result<(), String> {
    for (i, t) in inputs.iter().enumerate().skip(1) {
        if t.shape != expect {
            return Err(format!(
                "{what}: parameter input {i} must have shape {expect:?}, got {:?}",
                t.shape
            ));
        }
    }
    Ok(())
}

/// batch_norm(x [N, C, ...], weight? [C], bias? [C]).
pub fn batch_norm(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let x = inputs[0];
    require_float(x, "batch_norm")?;
    if x.rank() < 2 {
        return Err(format!(
            "batch_norm needs an input of rank >= 2, got {:?}",
            x.shape
        ));
    }
    a.float("eps")?;
    check_affine(inputs, &[x.shape[1]], "batch_norm")?;
    one(x.clone())
}

/// instance_norm(x [N, C, ...], weight? [C], bias? [C]).
pub fn instance_norm(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let x = inputs[0];
    require_float(x, "instance_norm")?;
    if x.rank() < 3 {
        return Err(format!(
            "instance_norm needs an input of rank >= 3, got {:?}",
            x.shape
        ));
    }
    a.float("eps")?;
    check_affine(inputs, &[x.shape[1]], "instance_norm")?;
    one(x.clone())
}

/// group_norm(x [N, C, ...], weight? [C], bias? [C]) {num_groups}.
pub fn group_norm(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let x = inputs[0];
    require_float(x, "group_norm")?;
    if x.rank() < 2 {
        return Err(format!(
            "group_norm needs an input of rank >= 2, got {:?}",
            x.shape
        ));
    }
    let g = a.int("num_groups")?;
    if g < 1 || x.shape[1] % g != 0 {
        return Err(format!(
            "num_groups {g} must divide the channels {}",
            x.shape[1]
        ));
    }
    check_affine(inputs, &[x.shape[1]], "group_norm")?;
    one(x.clone())
}

/// layer_norm and rms_norm: `normalized_shape` must be the trailing dims of the input.
pub fn last_dims_norm(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let x = inputs[0];
    require_float(x, "this normalization")?;
    let ns = a.ints("normalized_shape")?;
    if ns.len() > x.rank() || x.shape[x.rank() - ns.len()..] != *ns {
        return Err(format!(
            "normalized_shape {ns:?} is not a suffix of the input shape {:?}",
            x.shape
        ));
    }
    check_affine(inputs, ns, "normalization")?;
    one(x.clone())
}

// ---------------------------------------------------------------- layout

/// transpose {dim0, dim1}.
pub fn transpose(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let t = inputs[0];
    let mut shape = t.shape.clone();
    if t.rank() == 0 {
        normalize_dim(a.int("dim0")?, 0)?;
        normalize_dim(a.int("dim1")?, 0)?;
        return one(t.clone());
    }
    let d0 = normalize_dim(a.int("dim0")?, t.rank())?;
    let d1 = normalize_dim(a.int("dim1")?, t.rank())?;
    shape.swap(d0, d1);
    one(t.with_shape(shape))
}

/// permute {dims}: a permutation of 0..rank.
pub fn permute(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let t = inputs[0];
    let dims = a.ints("dims")?;
    if dims.len() != t.rank() {
        return Err(format!("permute needs {} dims, got {dims:?}", t.rank()));
    }
    let mut seen = vec![false; t.rank()];
    let mut shape = vec![];
    for &d in dims {
        let d = normalize_dim(d, t.rank())?;
        if std::mem::replace(&mut seen[d], true) {
            return Err(format!("permute: {dims:?} repeats dimension {d}"));
        }
        shape.push(t.shape[d]);
    }
    one(t.with_shape(shape))
}

/// The element count of `t`, or an error when it does not fit in a `u64`.
fn exact_numel(t: &TensorType) -> Result<u64, String> {
    t.shape
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d.max(0) as u64))
        .ok_or_else(|| format!("shape {:?} has too many elements", t.shape))
}

/// Resolves one `-1` in a target shape against `numel` (view/reshape semantics).
pub fn resolve_shape(target: &[i64], numel: u64) -> Result<Shape, String> {
    let infer: Vec<usize> = (0..target.len()).filter(|&i| target[i] == -1).collect();
    if infer.len() > 1 {
        return Err(format!("only one dimension can be -1 in {target:?}"));
    }
    if let Some(d) = target
        .iter()
        .find(|&&d| !(-1..=super::MAX_DIM).contains(&d))
    {
        return Err(format!("invalid dimension {d} in {target:?}"));
    }
    let known = target
        .iter()
        .filter(|&&d| d != -1)
        .try_fold(1u64, |n, &d| n.checked_mul(d as u64))
        .ok_or_else(|| format!("shape {target:?} has too many elements"))?;
    let mut out = target.to_vec();
    if let Some(&i) = infer.first() {
        if known == 0 || !numel.is_multiple_of(known) {
            return Err(format!("shape {target:?} is invalid for {numel} elements"));
        }
        out[i] = (numel / known) as i64;
    } else if known != numel {
        return Err(format!("shape {target:?} is invalid for {numel} elements"));
    }
    Ok(out)
}

/// reshape {shape}: same element count; one dim may be -1.
pub fn reshape(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let t = inputs[0];
    let numel = exact_numel(t)?;
    one(t.with_shape(resolve_shape(a.ints("shape")?, numel)?))
}

/// flatten {start_dim, end_dim}.
pub fn flatten(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let t = inputs[0];
    if t.rank() == 0 {
        normalize_dim(a.int("start_dim")?, 0)?;
        normalize_dim(a.int("end_dim")?, 0)?;
        return one(t.with_shape(vec![1]));
    }
    let s = normalize_dim(a.int("start_dim")?, t.rank())?;
    let e = normalize_dim(a.int("end_dim")?, t.rank())?;
    if s > e {
        return Err(format!("flatten: start_dim {s} comes after end_dim {e}"));
    }
    let mut shape = t.shape[..s].to_vec();
    let merged = t.shape[s..=e]
        .iter()
        .try_fold(1i64, |n, &d| n.checked_mul(d))
        .filter(|&n| n <= super::MAX_DIM)
        .ok_or_else(|| format!("flatten: merged size of {:?} is too large", &t.shape[s..=e]))?;
    shape.push(merged);
    shape.extend_from_slice(&t.shape[e + 1..]);
    one(t.with_shape(shape))
}

/// squeeze {dim: ints | none}: removes the listed size-1 dims (all of them with none).
pub fn squeeze(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let t = inputs[0];
    let mask = match a.opt_ints("dim")? {
        None => t.shape.iter().map(|&d| d == 1).collect::<Vec<_>>(),
        Some(dims) => {
            let mut m = vec![false; t.rank()];
            for &d in dims {
                let d = normalize_dim(d, t.rank())?;
                if t.rank() > 0 && t.shape[d] == 1 {
                    m[d] = true;
                }
            }
            m
        }
    };
    let shape = t
        .shape
        .iter()
        .zip(&mask)
        .filter(|(_, &m)| !m)
        .map(|(&d, _)| d)
        .collect::<Vec<_>>();
    one(t.with_shape(shape))
}

/// unsqueeze {dim}: dim ranges over rank + 1 positions.
pub fn unsqueeze(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let t = inputs[0];
    let d = normalize_dim(a.int("dim")?, t.rank() + 1)?;
    let mut shape = t.shape.clone();
    shape.insert(d, 1);
    one(t.with_shape(shape))
}

/// expand {shape}: size-1 dims grow, -1 keeps, new leading dims may be added.
pub fn expand(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let t = inputs[0];
    let target = a.ints("shape")?;
    if target.len() < t.rank() {
        return Err(format!(
            "expand: target {target:?} has fewer dims than {:?}",
            t.shape
        ));
    }
    let off = target.len() - t.rank();
    let mut shape = vec![];
    for (i, &d) in target.iter().enumerate() {
        let src = if i >= off {
            Some(t.shape[i - off])
        } else {
            None
        };
        shape.push(match (src, d) {
            (None, -1) => return Err("expand: -1 is not allowed for a new leading dim".into()),
            (None, d) if d >= 0 => d,
            (Some(s), -1) => s,
            (Some(s), d) if d == s || s == 1 => d,
            (s, d) => {
                return Err(format!(
                    "expand: dim {i} of size {s:?} cannot expand to {d}"
                ))
            }
        });
    }
    one(t.with_shape(shape))
}

/// narrow {dim, start, length}.
pub fn narrow(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let t = inputs[0];
    if t.rank() == 0 {
        return Err("narrow cannot be applied to a 0-dim tensor".into());
    }
    let d = normalize_dim(a.int("dim")?, t.rank())?;
    let (size, start, len) = (t.shape[d], a.int("start")?, a.int("length")?);
    let start = if start < 0 {
        start.saturating_add(size)
    } else {
        start
    };
    if start < 0 || len < 0 || start as i128 + len as i128 > size as i128 {
        return Err(format!(
            "narrow: start {start} + length {len} exceeds dim {d} of size {size}"
        ));
    }
    let mut shape = t.shape.clone();
    shape[d] = len;
    one(t.with_shape(shape))
}

/// slice {dim, start, end, step}: Python slicing, clamped like PyTorch.
pub fn slice(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let t = inputs[0];
    if t.rank() == 0 {
        return Err("slice cannot be applied to a 0-dim tensor".into());
    }
    let d = normalize_dim(a.int("dim")?, t.rank())?;
    let size = t.shape[d];
    let step = a.int("step")?;
    if step < 1 {
        return Err(format!("slice step must be positive, got {step}"));
    }
    let clamp = |v: i64| {
        if v < 0 {
            v.saturating_add(size).max(0)
        } else {
            v.min(size)
        }
    };
    let start = clamp(a.int("start")?);
    let end = clamp(a.int("end")?);
    // ceil((end - start) / step)
    let len = if end > start {
        ((end - start) as i128 + step as i128 - 1) / step as i128
    } else {
        0
    } as i64;
    let mut shape = t.shape.clone();
    shape[d] = len;
    one(t.with_shape(shape))
}

/// select {dim, index}: removes the dim.
pub fn select(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let t = inputs[0];
    if t.rank() == 0 {
        return Err("select needs a tensor of rank >= 1".into());
    }
    let d = normalize_dim(a.int("dim")?, t.rank())?;
    let i = a.int("index")?;
    if i < -t.shape[d] || i >= t.shape[d] {
        return Err(format!(
            "select: index {i} out of range for dim {d} of size {}",
            t.shape[d]
        ));
    }
    let mut shape = t.shape.clone();
    shape.remove(d);
    one(t.with_shape(shape))
}

/// flip {dims}.
pub fn flip(inputs: &[&TensorType], a: AttrView) -> InferResult {
    for &d in a.ints("dims")? {
        normalize_dim(d, inputs[0].rank())?;
    }
    one(inputs[0].clone())
}

/// diag {diagonal}: 1-D -> square matrix, 2-D -> its diagonal.
pub fn diag(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let t = inputs[0];
    let k = a.int("diagonal")?;
    match t.rank() {
        1 => {
            // a square matrix with the vector on the k-th diagonal: n + |k| per side
            let n = to_dim(t.shape[0] as i128 + (k as i128).abs(), "diag size")?;
            one(t.with_shape(vec![n, n]))
        }
        2 => {
            // the k-th diagonal of an r x c matrix: min(r, c - k) for k >= 0, min(r + k, c) below
            let (r, c, k) = (t.shape[0] as i128, t.shape[1] as i128, k as i128);
            let len = if k >= 0 { r.min(c - k) } else { (r + k).min(c) };
            one(t.with_shape(vec![len.max(0) as i64]))
        }
        r => Err(format!("diag needs a tensor of rank 1 or 2, got rank {r}")),
    }
}

/// triu/tril {diagonal}: rank >= 2, same shape.
pub fn triangle(inputs: &[&TensorType], a: AttrView) -> InferResult {
    a.int("diagonal")?;
    if inputs[0].rank() < 2 {
        return Err(format!(
            "triu/tril need a tensor of rank >= 2, got {:?}",
            inputs[0].shape
        ));
    }
    one(inputs[0].clone())
}

/// cat {dim}: equal shapes except along dim.
pub fn cat(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let first = inputs[0];
    let d = normalize_dim(a.int("dim")?, first.rank())?;
    if first.rank() == 0 {
        return Err("cat needs tensors of rank >= 1".into());
    }
    let mut shape = first.shape.clone();
    let mut dtype = first.dtype;
    for t in &inputs[1..] {
        if t.rank() != first.rank()
            || t.shape
                .iter()
                .zip(&first.shape)
                .enumerate()
                .any(|(i, (x, y))| i != d && x != y)
        {
            return Err(format!(
                "cat: shapes {:?} and {:?} differ outside dim {d}",
                first.shape, t.shape
            ));
        }
        shape[d] += t.shape[d];
        dtype = promote_types(dtype, t.dtype);
    }
    one(TensorType::new(dtype, shape))
}

/// stack {dim}: equal shapes, new dim inserted.
pub fn stack(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let first = inputs[0];
    let d = normalize_dim(a.int("dim")?, first.rank() + 1)?;
    let mut dtype = first.dtype;
    for t in &inputs[1..] {
        if t.shape != first.shape {
            return Err(format!(
                "stack: shapes {:?} and {:?} differ",
                first.shape, t.shape
            ));
        }
        dtype = promote_types(dtype, t.dtype);
    }
    let mut shape = first.shape.clone();
    shape.insert(d, inputs.len() as i64);
    one(TensorType::new(dtype, shape))
}
