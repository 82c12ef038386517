//! Layout ops: views, permutations, concatenation, triangles.

use super::*;

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
        .find(|&&d| !(-1..=crate::op::MAX_DIM).contains(&d))
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
        .filter(|&n| n <= crate::op::MAX_DIM)
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

/// The `(before, after)` padding of each dim from `F.pad`'s list, which pairs the last dim
/// first (`[last_before, last_after, second_last_before, ...]`); negative amounts crop.
pub fn pad_amounts(pad: &[i64], rank: usize) -> Result<Vec<(i64, i64)>, String> {
    if !pad.len().is_multiple_of(2) {
        return Err(format!(
            "pad: the padding list has odd length {}",
            pad.len()
        ));
    }
    if pad.len() / 2 > rank {
        return Err(format!(
            "pad: {} padded dims for a tensor of rank {rank}",
            pad.len() / 2
        ));
    }
    let mut out = vec![(0, 0); rank];
    for (k, pair) in pad.chunks(2).enumerate() {
        out[rank - 1 - k] = (pair[0], pair[1]);
    }
    Ok(out)
}

/// pad {pad, mode, value}: `F.pad` in constant mode (`aten.constant_pad_nd`).
pub fn pad(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let t = inputs[0];
    let mode = a.str("mode")?;
    if mode != "constant" {
        return Err(format!(
            "pad: mode `{mode}` is not supported (only `constant`)"
        ));
    }
    let value = a.float("value")?;
    if !t.dtype.is_float() && value.fract() != 0.0 {
        return Err(format!("pad: value {value} for a tensor of {}", t.dtype));
    }
    let amounts = pad_amounts(a.ints("pad")?, t.rank())?;
    let mut shape = t.shape.clone();
    for (d, &(lo, hi)) in amounts.iter().enumerate() {
        let n = to_dim(t.shape[d] as i128 + lo as i128 + hi as i128, "padded size")?;
        if n < 0 {
            return Err(format!(
                "pad: dim {d} of size {} padded by ({lo}, {hi}) has negative size {n}",
                t.shape[d]
            ));
        }
        shape[d] = n;
    }
    one(t.with_shape(shape))
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
