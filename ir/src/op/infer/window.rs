//! Convolutions and pooling windows.

use super::*;

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
