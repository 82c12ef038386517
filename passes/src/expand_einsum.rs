//! `expand-einsum`: an `einsum` is written as the contractions PyTorch itself computes it
//! with (ATen's `Linear.cpp`: sum out what only one operand has, then one batched matrix
//! product per pair of operands, left to right), but as IR ops the fusion planner and the
//! templates see: `sum` over the subscripts nothing else reads, `permute` and `reshape` views
//! into `[batch..., M, K]` and `[batch..., K, N]`, `matmul` (the contraction template), a
//! broadcast `mul` where a pair shares no subscript to contract (a pointwise kernel that
//! fuses with its neighbours), a broadcast `mul` and a `sum` where it contracts at most
//! [`SMALL_K`] elements, and a last `permute` into the output's order. The einsum
//! alone is a library call no kernel can fuse with.
//!
//! For each pair `A, B` (the first two operands left), a subscript is
//! - a batch subscript when both have it and the output or a later operand reads it,
//! - contracted when both have it and nothing later does,
//! - free in `A` (or `B`) when only `A` (or `B`) has it; free subscripts nothing later reads
//!   are summed out of their operand first.
//!
//! The pair's result holds the batch, then `A`'s free, then `B`'s free subscripts; the two
//! operands swap when the output lists `B`'s free subscripts first, so that the last
//! product is already in the output's order where it can be.
//!
//! Left whole (a library call, as before): an equation with `...`, a subscript repeated in
//! one operand (a diagonal), a subscript whose sizes differ between operands (size-1
//! broadcasting), non-float operands.

use crate::insert::Builder;
use crate::PassInfo;
use crate::{Changed, Pass, PassContext, PassError};
use drtc_ir::op::{einsum_subscripts, EinsumSubscripts};
use drtc_ir::{Attr, Graph, Op, ValueId};
use std::collections::BTreeMap;

const NAME: &str = "expand-einsum";

/// Contractions over at most this many elements are a broadcast product and a sum, not a
/// matmul: with K this small a product reuses no operand tile, and the matmul's operands
/// become copies in `[batch, M, K]`/`[batch, K, N]` order (Mamba2's inter-chunk einsum,
/// K = 3: a 100 MB copy and a 0.22 ms cuBLAS GEMV on an H100,
/// `bench/results/level3_mamba2_probe_h100_a6d0f02.txt`).
const SMALL_K: i64 = 4;

/// Registry entry.
pub const INFO: PassInfo = PassInfo {
    name: NAME,
    summary: "write einsum as sums, permutes, reshapes, matmuls and broadcast products, for \
              the contraction and pointwise templates",
    options: &[],
    build: |_| Ok(Box::new(ExpandEinsum)),
};

/// The einsum expansion.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExpandEinsum;

/// The subscripts of `equation` for operands of `ranks` (`einsum_subscripts`, the op's own
/// parse), when this pass can expand it: no subscript repeated within an operand (a
/// diagonal) or in the output.
pub fn parse_equation(equation: &str, ranks: &[usize]) -> Option<EinsumSubscripts> {
    let eq = einsum_subscripts(equation, ranks).ok()?;
    let repeats = |subs: &[char]| subs.iter().enumerate().any(|(i, c)| subs[..i].contains(c));
    let known = |c: &char| eq.operands.iter().any(|t| t.contains(c));
    if eq.operands.iter().any(|t| repeats(t)) || repeats(&eq.output) || !eq.output.iter().all(known)
    {
        return None;
    }
    Some(eq)
}

/// An operand in flight: its value and the subscript of each of its dims.
#[derive(Clone, Debug)]
struct Term {
    value: ValueId,
    subs: Vec<char>,
}

/// The expansion of one einsum.
struct Expansion<'b, 'g> {
    b: &'b mut Builder<'g>,
    sizes: BTreeMap<char, i64>,
}

impl Expansion<'_, '_> {
    fn size(&self, c: char) -> i64 {
        self.sizes[&c]
    }

    /// `t` summed over the subscripts `keep` rejects.
    fn sum_out(&mut self, t: Term, keep: impl Fn(char) -> bool) -> Result<Term, PassError> {
        let dims: Vec<i64> = (0..t.subs.len())
            .filter(|&i| !keep(t.subs[i]))
            .map(|i| i as i64)
            .collect();
        if dims.is_empty() {
            return Ok(t);
        }
        let value = self.b.op(
            Op::Sum,
            vec![t.value],
            &[("dim", Attr::Ints(dims)), ("keepdim", Attr::Bool(false))],
        )?;
        let subs = t.subs.into_iter().filter(|&c| keep(c)).collect();
        Ok(Term { value, subs })
    }

    /// `t` with its dims in the order `subs` (a subset of them, the rest summed out before).
    fn permute(&mut self, t: &Term, subs: &[char]) -> Result<ValueId, PassError> {
        let dims: Vec<i64> = subs
            .iter()
            .map(|c| {
                t.subs
                    .iter()
                    .position(|x| x == c)
                    .expect("a subscript of t") as i64
            })
            .collect();
        if dims.iter().enumerate().all(|(i, &d)| i as i64 == d) {
            return Ok(t.value);
        }
        self.b
            .op(Op::Permute, vec![t.value], &[("dims", Attr::Ints(dims))])
    }

    /// `v` reshaped to `shape` (nothing added when it has that shape already).
    fn reshape(&mut self, v: ValueId, shape: Vec<i64>) -> Result<ValueId, PassError> {
        if self.b.g.ty(v).shape == shape {
            return Ok(v);
        }
        self.b
            .op(Op::Reshape, vec![v], &[("shape", Attr::Ints(shape))])
    }

    fn product(&self, subs: &[char]) -> i64 {
        subs.iter().map(|&c| self.size(c)).product()
    }

    /// The sizes of `subs`, with size 1 for each of `ones` after them.
    fn shape(&self, subs: &[char], ones: usize) -> Vec<i64> {
        let mut shape: Vec<i64> = subs.iter().map(|&c| self.size(c)).collect();
        shape.extend(std::iter::repeat_n(1, ones));
        shape
    }

    /// The contraction of `a` and `b`, keeping the subscripts `later` reads.
    fn pair(
        &mut self,
        a: Term,
        b: Term,
        later: &dyn Fn(char) -> bool,
        output: &[char],
    ) -> Result<Term, PassError> {
        // free subscripts nothing later reads: summed out of their own operand first
        let (a_subs, b_subs) = (a.subs.clone(), b.subs.clone());
        let a = self.sum_out(a, |c| b_subs.contains(&c) || later(c))?;
        let b = self.sum_out(b, |c| a_subs.contains(&c) || later(c))?;
        let batch: Vec<char> = a
            .subs
            .iter()
            .copied()
            .filter(|c| b.subs.contains(c) && later(*c))
            .collect();
        let contracted: Vec<char> = a
            .subs
            .iter()
            .copied()
            .filter(|c| b.subs.contains(c) && !later(*c))
            .collect();
        let free = |t: &Term, other: &Term| -> Vec<char> {
            t.subs
                .iter()
                .copied()
                .filter(|c| !other.subs.contains(c))
                .collect()
        };
        let (mut a, mut b) = (a, b);
        let first = |subs: &[char]| {
            subs.iter()
                .filter_map(|c| output.iter().position(|o| o == c))
                .min()
        };
        if let (Some(fa), Some(fb)) = (first(&free(&a, &b)), first(&free(&b, &a))) {
            if fb < fa {
                std::mem::swap(&mut a, &mut b);
            }
        }
        let (a_free, b_free) = (free(&a, &b), free(&b, &a));
        let batch_shape = self.shape(&batch, 0);
        let result_subs: Vec<char> = [batch.as_slice(), &a_free, &b_free].concat();
        let result_shape = self.shape(&result_subs, 0);
        let (m, n, k) = (
            self.product(&a_free),
            self.product(&b_free),
            self.product(&contracted),
        );
        if k <= SMALL_K {
            // a broadcast product over [batch, contracted, a_free, b_free] (nothing to
            // contract: a pointwise kernel), summed over the contracted dims: one reduction
            // reading each operand through its strides
            let a_subs = [batch.as_slice(), &contracted, &a_free].concat();
            let pa = self.permute(&a, &a_subs)?;
            let pa = self.reshape(pa, self.shape(&a_subs, b_free.len()))?;
            let b_subs = [batch.as_slice(), &contracted, &b_free].concat();
            let pb = self.permute(&b, &b_subs)?;
            let mut sb = self.shape(&[batch.as_slice(), &contracted].concat(), a_free.len());
            sb.extend(self.shape(&b_free, 0));
            let pb = self.reshape(pb, sb)?;
            let value = self.b.binary(Op::Mul, pa, pb)?;
            let subs = [batch.as_slice(), &contracted, &a_free, &b_free].concat();
            return self.sum_out(Term { value, subs }, |c| !contracted.contains(&c));
        }
        let pa = self.permute(&a, &[batch.as_slice(), &a_free, &contracted].concat())?;
        let pa = self.reshape(pa, [batch_shape.as_slice(), &[m, k]].concat())?;
        let pb = self.permute(&b, &[batch.as_slice(), &contracted, &b_free].concat())?;
        let pb = self.reshape(pb, [batch_shape.as_slice(), &[k, n]].concat())?;
        let product = self.b.binary(Op::Matmul, pa, pb)?;
        let value = self.reshape(product, result_shape)?;
        Ok(Term {
            value,
            subs: result_subs,
        })
    }

    /// The whole einsum of `terms` into `output`.
    fn run(&mut self, mut terms: Vec<Term>, output: &[char]) -> Result<ValueId, PassError> {
        let mut left = terms.remove(0);
        while !terms.is_empty() {
            let right = terms.remove(0);
            let rest: Vec<char> = terms.iter().flat_map(|t| t.subs.clone()).collect();
            let later = |c: char| output.contains(&c) || rest.contains(&c);
            left = self.pair(left, right, &later, output)?;
        }
        let left = self.sum_out(left, |c| output.contains(&c))?;
        self.permute(&left, output)
    }
}

/// The expansion of einsum node inputs `inputs` with `equation`, when this pass takes it.
fn expandable(
    g: &Graph,
    equation: &str,
    inputs: &[ValueId],
) -> Option<(EinsumSubscripts, BTreeMap<char, i64>)> {
    let ranks: Vec<usize> = inputs.iter().map(|&v| g.ty(v).rank()).collect();
    let eq = parse_equation(equation, &ranks)?;
    let dtype = g.ty(inputs[0]).dtype;
    if !dtype.is_float() || inputs.iter().any(|&v| g.ty(v).dtype != dtype) {
        return None;
    }
    let mut sizes = BTreeMap::new();
    for (term, &v) in eq.operands.iter().zip(inputs) {
        for (&c, &d) in term.iter().zip(&g.ty(v).shape) {
            if *sizes.entry(c).or_insert(d) != d {
                return None;
            }
        }
    }
    Some((eq, sizes))
}

impl Pass for ExpandEinsum {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(&self, graph: &mut Graph, cx: &mut PassContext) -> Result<Changed, PassError> {
        let body = graph.body().to_vec();
        let mut order = vec![];
        let mut changed = Changed::No;
        for (pos, &n) in body.iter().enumerate() {
            let node = graph.node(n);
            let equation = node.attrs.get("equation").and_then(Attr::as_str);
            let found = match (node.op, equation) {
                (Op::Einsum, Some(e)) => expandable(graph, e, &node.inputs).map(|(eq, sizes)| {
                    (
                        e.to_string(),
                        eq,
                        sizes,
                        node.inputs.clone(),
                        node.outputs[0],
                    )
                }),
                _ => None,
            };
            let Some((equation, eq, sizes, inputs, out)) = found else {
                order.push(n);
                continue;
            };
            let terms: Vec<Term> = inputs
                .iter()
                .zip(&eq.operands)
                .map(|(&value, subs)| Term {
                    value,
                    subs: subs.clone(),
                })
                .collect();
            let mut b = Builder::new(graph, NAME);
            let result = Expansion { b: &mut b, sizes }.run(terms, &eq.output)?;
            if b.nodes.is_empty() {
                // an identity einsum ("ij->ij"): kept, its input is its value
                order.push(n);
                continue;
            }
            order.extend(b.replace(out, result, &format!("#{pos} `einsum` \"{equation}\""))?);
            cx.log(format!(
                "#{pos} `einsum` \"{equation}\": sums, views, matmuls and broadcast products"
            ));
            changed = Changed::Yes;
        }
        graph.set_body(order);
        Ok(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equations_parse_with_their_implicit_output() {
        let eq = parse_equation("ij,jk", &[2, 2]).unwrap();
        assert_eq!(eq.output, vec!['i', 'k']);
        let eq = parse_equation("bhzc, bchpn -> bzhpn", &[4, 5]).unwrap();
        assert_eq!(eq.operands[1], vec!['b', 'c', 'h', 'p', 'n']);
        assert_eq!(eq.output, vec!['b', 'z', 'h', 'p', 'n']);
    }

    #[test]
    fn equations_this_pass_leaves_whole() {
        // an ellipsis, a diagonal, a rank mismatch, an output subscript no operand has
        assert!(parse_equation("...ij,jk->...ik", &[3, 2]).is_none());
        assert!(parse_equation("ii->i", &[2]).is_none());
        assert!(parse_equation("ij,jk->ik", &[2, 3]).is_none());
        assert!(parse_equation("ij,jk->iz", &[2, 2]).is_none());
        assert!(parse_equation("ij,jk->ii", &[2, 2]).is_none());
    }
}
