//! Shape and dtype inference rules, shared by the entries of the op table.
//!
//! Each rule gets the input types and the normalized attributes and returns the result
//! types, or a message saying what is wrong. Formulas follow PyTorch's documentation.

use super::AttrView;
use crate::dtype::{promote_types, result_type};
use crate::{DType, Shape, TensorType};

mod contraction;
mod layout;
mod norm;
mod pointwise;
mod reduce;
mod window;

pub use contraction::*;
pub use layout::*;
pub use norm::*;
pub use pointwise::*;
pub use reduce::*;
pub use window::*;

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

/// A size computed in `i128`, as an `i64` no larger than [`crate::op::MAX_DIM`].
fn to_dim(v: i128, what: &str) -> Result<i64, String> {
    if v > crate::op::MAX_DIM as i128 {
        Err(format!("{what} is too large ({v})"))
    } else {
        Ok(v.max(i64::MIN as i128) as i64)
    }
}
