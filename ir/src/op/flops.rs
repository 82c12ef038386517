//! FLOP counts, with the DRTriton generator's conventions (ops.md): pointwise = output size
//! x a multiplier per function, reduction = input size, matmul = 2 x output size x K,
//! conv = 2 x output size x kernel volume x Cin/groups, normalization = 7 x size.
//!
//! Rules saturate instead of overflowing and tolerate malformed nodes (wrong ranks), since
//! `Graph::flops` may run on graphs that have not been verified.

use super::AttrView;
use crate::TensorType;

/// A FLOP rule: input types, output types, attributes.
pub type FlopFn = fn(&[&TensorType], &[TensorType], AttrView<'_>) -> u64;

fn out_numel(outputs: &[TensorType]) -> u64 {
    outputs
        .iter()
        .fold(0u64, |n, t| n.saturating_add(t.numel()))
}

/// The product of `dims` (negative sizes count as 0), saturating.
fn product<'a>(dims: impl IntoIterator<Item = &'a i64>) -> u64 {
    dims.into_iter()
        .fold(1u64, |n, &d| n.saturating_mul(d.max(0) as u64))
}

fn numel_of(i: &[&TensorType], k: usize) -> u64 {
    i.get(k).map_or(0, |t| t.numel())
}

/// Dims 1.. of input `k` (a convolution weight: Cin/groups or Cout/groups, then the kernel).
fn weight_volume(i: &[&TensorType], k: usize) -> u64 {
    i.get(k).map_or(0, |t| product(t.shape.iter().skip(1)))
}

/// Data movement only.
pub fn zero(_: &[&TensorType], _: &[TensorType], _: AttrView) -> u64 {
    0
}

/// `K` FLOPs per output element.
pub fn pointwise<const K: u64>(_: &[&TensorType], o: &[TensorType], _: AttrView) -> u64 {
    K.saturating_mul(out_numel(o))
}

/// One FLOP per input element (sum over all inputs).
pub fn reduction(i: &[&TensorType], _: &[TensorType], _: AttrView) -> u64 {
    i.iter().fold(0u64, |n, t| n.saturating_add(t.numel()))
}

/// `K` FLOPs per input element (softmax-like ops that read the input several times).
pub fn per_input<const K: u64>(i: &[&TensorType], _: &[TensorType], _: AttrView) -> u64 {
    K.saturating_mul(numel_of(i, 0))
}

/// 7 x size.
pub fn normalization(i: &[&TensorType], _: &[TensorType], _: AttrView) -> u64 {
    7u64.saturating_mul(numel_of(i, 0))
}

/// 2 x output size x K, with K the inner dim of the first operand.
pub fn matmul(i: &[&TensorType], o: &[TensorType], _: AttrView) -> u64 {
    let k = i
        .first()
        .and_then(|t| t.shape.last())
        .copied()
        .unwrap_or(1)
        .max(0) as u64;
    2u64.saturating_mul(out_numel(o)).saturating_mul(k)
}

/// einsum: 2 x the product of every distinct subscript's size.
pub fn einsum(i: &[&TensorType], _: &[TensorType], a: AttrView) -> u64 {
    let Ok(eq) = a.str("equation") else { return 0 };
    let lhs = eq.split("->").next().unwrap_or("");
    let mut sizes = std::collections::BTreeMap::new();
    for (term, t) in lhs.split(',').zip(i) {
        for (c, &d) in term.trim().chars().zip(&t.shape) {
            let e = sizes.entry(c).or_insert(d);
            *e = (*e).max(d);
        }
    }
    2u64.saturating_mul(product(sizes.values()))
}

/// attention: QK^T and PV products, plus the softmax.
pub fn attention(i: &[&TensorType], o: &[TensorType], _: AttrView) -> u64 {
    let (Some(q), Some(k)) = (i.first(), i.get(1)) else {
        return 0;
    };
    let e = q.shape.last().copied().unwrap_or(1).max(1) as u64;
    let s = k
        .shape
        .get(k.rank().saturating_sub(2))
        .copied()
        .unwrap_or(1)
        .max(0) as u64;
    let scores = (q.numel() / e).saturating_mul(s);
    let qk = 2u64.saturating_mul(scores).saturating_mul(e);
    let pv = 2u64.saturating_mul(out_numel(o)).saturating_mul(s);
    qk.saturating_add(5u64.saturating_mul(scores))
        .saturating_add(pv)
}

/// conv: 2 x output size x kernel volume x Cin / groups. The weight's dims 1.. already hold
/// Cin/groups and the kernel volume.
pub fn conv(i: &[&TensorType], o: &[TensorType], _: AttrView) -> u64 {
    2u64.saturating_mul(out_numel(o))
        .saturating_mul(weight_volume(i, 1))
}

/// transposed conv: 2 x input size x Cout/groups x kernel volume (each input element scatters).
pub fn conv_transpose(i: &[&TensorType], _: &[TensorType], _: AttrView) -> u64 {
    2u64.saturating_mul(numel_of(i, 0))
        .saturating_mul(weight_volume(i, 1))
}

/// pooling over `N` spatial dims: output size x window volume (a one-element
/// `kernel_size` is the same size along every spatial dim).
pub fn window<const N: u32>(i: &[&TensorType], o: &[TensorType], a: AttrView) -> u64 {
    let n = out_numel(o);
    match a.ints("kernel_size") {
        Ok(&[k]) => n.saturating_mul((k.max(0) as u64).saturating_pow(N)),
        Ok(k) => n.saturating_mul(product(k)),
        // adaptive pooling reads every input element once
        Err(_) => numel_of(i, 0),
    }
}
