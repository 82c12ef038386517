//! Contractions: matmul, bmm, linear, einsum, attention.

use super::*;

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

/// An einsum equation's subscripts: one list per operand and the output's (for an implicit
/// equation, the subscripts that appear once, in alphabetical order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EinsumSubscripts {
    pub operands: Vec<Vec<char>>,
    pub output: Vec<char>,
}

/// The subscripts of `equation` (explicit `->` or implicit, no ellipsis) for operands of
/// `ranks`.
pub fn einsum_subscripts(equation: &str, ranks: &[usize]) -> Result<EinsumSubscripts, String> {
    let eq: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    if eq.contains("...") {
        return Err("einsum with `...` is not supported".into());
    }
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (eq.as_str(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != ranks.len() {
        return Err(format!(
            "einsum equation has {} operands but {} inputs were given",
            terms.len(),
            ranks.len()
        ));
    }
    let mut counts = std::collections::BTreeMap::new();
    let mut operands = vec![];
    for (term, &rank) in terms.iter().zip(ranks) {
        if term.chars().count() != rank {
            return Err(format!("einsum term `{term}` does not match rank {rank}"));
        }
        for c in term.chars() {
            if !c.is_ascii_alphabetic() {
                return Err(format!("einsum: bad subscript `{c}`"));
            }
            *counts.entry(c).or_insert(0) += 1;
        }
        operands.push(term.chars().collect());
    }
    let output = match rhs {
        Some(r) => r.chars().collect(),
        None => counts
            .iter()
            .filter(|(_, &n)| n == 1)
            .map(|(c, _)| *c)
            .collect(),
    };
    Ok(EinsumSubscripts { operands, output })
}

/// `einsum {equation}` for explicit (`->`) and implicit equations without ellipsis.
pub fn einsum(inputs: &[&TensorType], a: AttrView) -> InferResult {
    let ranks: Vec<usize> = inputs.iter().map(|t| t.rank()).collect();
    let subs = einsum_subscripts(a.str("equation")?, &ranks)?;
    let mut sizes = std::collections::BTreeMap::new();
    for (term, t) in subs.operands.iter().zip(inputs) {
        for (&c, &d) in term.iter().zip(&t.shape) {
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
    let mut shape = vec![];
    for c in &subs.output {
        shape.push(
            *sizes
                .get(c)
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
