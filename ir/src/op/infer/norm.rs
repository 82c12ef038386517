//! Normalizations.

use super::*;

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
