//! FLOP counts, with the DRTriton generator's conventions (ops.md): pointwise = output size
//! x a multiplier per function, reduction = input size, matmul = 2 x output size x K,
//! conv = 2 x output size x kernel volume x Cin/groups, normalization = 7 x size.

use super::AttrView;
use crate::TensorType;

/// A FLOP rule: input types, output types, attributes.
pub type FlopFn = fn(&[&TensorType], &[TensorType], AttrView<'_>) -> u64;

fn out_numel(outputs: &[TensorType]) -> u64 {
    outputs.iter().map(TensorType::numel).sum()
}

/// Data movement only.
pub fn zero(_: &[&TensorType], _: &[TensorType], _: AttrView) -> u64 {
    0
}

/// `K` FLOPs per output element.
pub fn pointwise<const K: u64>(_: &[&TensorType], o: &[TensorType], _: AttrView) -> u64 {
    K * out_numel(o)
}

/// One FLOP per input element (sum over all inputs).
pub fn reduction(i: &[&TensorType], _: &[TensorType], _: AttrView) -> u64 {
    i.iter().map(|t| t.numel()).sum()
}

/// `K` FLOPs per input element (softmax-like ops that read the input several times).
pub fn per_input<const K: u64>(i: &[&TensorType], _: &[TensorType], _: AttrView) -> u64 {
    K * i[0].numel()
}

/// 7 x size.
pub fn normalization(i: &[&TensorType], _: &[TensorType], _: AttrView) -> u64 {
    7 * i[0].numel()
}

/// 2 x output size x K, with K the inner dim of the first operand.
pub fn matmul(i: &[&TensorType], o: &[TensorType], _: AttrView) -> u64 {
    let k = i[0].shape.last().copied().unwrap_or(1).max(0) as u64;
    2 * out_numel(o) * k
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
    2 * sizes.values().map(|&d| d.max(0) as u64).product::<u64>()
}

/// attention: QK^T and PV products, plus the softmax.
pub fn attention(i: &[&TensorType], o: &[TensorType], _: AttrView) -> u64 {
    let (q, k) = (i[0], i[1]);
    let e = *q.shape.last().unwrap_or(&1) as u64;
    let s = k.shape[k.rank().saturating_sub(2)] as u64;
    let scores = q.numel() / e.max(1) * s;
    2 * scores * e + 5 * scores + 2 * out_numel(o) * s
}

/// conv: 2 x output size x kernel volume x Cin / groups. The weight's dims 1.. already hold
/// Cin/groups and the kernel volume.
pub fn conv(i: &[&TensorType], o: &[TensorType], _: AttrView) -> u64 {
    let per_out: u64 = i[1].shape[1..].iter().map(|&d| d as u64).product();
    2 * out_numel(o) * per_out
}

/// transposed conv: 2 x input size x Cout/groups x kernel volume (each input element scatters).
pub fn conv_transpose(i: &[&TensorType], _: &[TensorType], _: AttrView) -> u64 {
    let per_in: u64 = i[1].shape[1..].iter().map(|&d| d as u64).product();
    2 * i[0].numel() * per_in
}

/// pooling: output size x window volume.
pub fn window(i: &[&TensorType], o: &[TensorType], a: AttrView) -> u64 {
    let n = out_numel(o);
    match a.ints("kernel_size") {
        Ok(k) => {
            let spatial = i[0].rank().saturating_sub(2).max(1);
            let vol: u64 = if k.len() == 1 {
                (k[0] as u64).pow(spatial as u32)
            } else {
                k.iter().map(|&d| d as u64).product()
            };
            n * vol
        }
        // adaptive pooling reads every input element once
        Err(_) => i[0].numel(),
    }
}
