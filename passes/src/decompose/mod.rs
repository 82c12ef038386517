//! Decomposition: splits a program into subproblems of at most N ops along fusion-legal
//! boundaries, as training and evaluation units for kernel writers.
//!
//! Subproblems start as the regions of the fusion plan (`plan_fusion` with
//! `max-ops=N`: each is a legal kernel), then neighbouring groups merge by fusion's greedy
//! merge (`fuse::merge`: largest tensor passed first, never a cycle between groups) while
//! they stay within N ops, so the cuts that remain cross small tensors. The graph is not
//! changed; [`decompose`] / [`subproblem_graph`] give the subproblems to the CLI, and the
//! `decompose` analysis (`decompose_pass.rs`) reports them in a pipeline's log.

mod decompose_pass;

pub use decompose_pass::{DecomposeAnalysis, INFO};

use crate::fuse::merge::{greedy_merge, topological_order, Group, MergePolicy, Refusal};
use crate::fuse::{is_inlined_constant, plan_fusion, region_inputs, region_outputs, FuseOptions};
use drtc_ir::{Graph, InputKind, NodeId, ValueId};
use std::collections::HashMap;

/// One subproblem: nodes in program order (scalar constants it uses included), the values
/// it reads and the values it writes (used by later subproblems, or program outputs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subproblem {
    pub nodes: Vec<NodeId>,
    pub inputs: Vec<ValueId>,
    pub outputs: Vec<ValueId>,
}

impl Subproblem {
    /// Ops that count towards the limit (scalar constants do not).
    pub fn op_count(&self, g: &Graph) -> usize {
        op_count(g, &self.nodes)
    }
}

/// The subproblems of a program, in an order where each reads only what earlier ones
/// (or the program's inputs) provide.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decomposition {
    pub subproblems: Vec<Subproblem>,
    /// Merges made, in order.
    pub log: Vec<String>,
}

/// Ops that count towards the limit (scalar constants do not).
fn op_count(g: &Graph, nodes: &[NodeId]) -> usize {
    nodes
        .iter()
        .filter(|&&n| !is_inlined_constant(g, n))
        .count()
}

/// Decomposition's merge policy: any two groups, while they stay within `max_ops` ops;
/// only merges are logged.
struct Decomposing<'g> {
    g: &'g Graph,
    max_ops: usize,
}

impl MergePolicy for Decomposing<'_> {
    type Kind = ();

    fn admit(&self, producer: &Group<()>, consumer: &Group<()>) -> Result<(), Refusal> {
        let ops = op_count(self.g, &producer.nodes) + op_count(self.g, &consumer.nodes);
        if ops > self.max_ops {
            return Err(Refusal::Because(format!("more than {} ops", self.max_ops)));
        }
        Ok(())
    }

    fn check(&self, (): (), _: &[NodeId]) -> Result<(), String> {
        Ok(())
    }

    fn rejection(&self, _: (usize, usize), _: (&Group<()>, &Group<()>), _: &str) -> Option<String> {
        None
    }

    fn merge(
        &self,
        (p, c): (usize, usize),
        _: (&Group<()>, &Group<()>),
        merged: &Group<()>,
        bytes: u64,
    ) -> String {
        format!(
            "merge group {p} into group {c}: {} ops, {bytes} bytes no longer cross a cut",
            op_count(self.g, &merged.nodes)
        )
    }
}

/// Splits `g` into subproblems of at most `max_ops` ops (at least 1).
pub fn decompose(g: &Graph, max_ops: usize) -> Decomposition {
    let max_ops = max_ops.max(1);
    let plan = plan_fusion(g, &FuseOptions { max_ops });
    let groups = plan
        .regions
        .iter()
        .map(|r| Group {
            kind: (),
            nodes: r.nodes.clone(),
        })
        .collect();
    let mut log = vec![];
    let merged = greedy_merge(g, groups, &Decomposing { g, max_ops }, &mut log);
    let groups = topological_order(g, merged);
    let subproblems = groups
        .into_iter()
        .map(|group| Subproblem {
            inputs: region_inputs(g, &group.nodes),
            outputs: region_outputs(g, &group.nodes),
            nodes: group.nodes,
        })
        .collect();
    Decomposition { subproblems, log }
}

/// A name for a value of `g`: an input's own name, or `%k` for the result of the k-th node
/// in program order. Stable for a given program, so subproblems can say what they read and
/// write.
pub fn value_name(g: &Graph, v: ValueId) -> String {
    match g.producer(v) {
        None => g
            .value(v)
            .name
            .clone()
            .unwrap_or_else(|| format!("in{}", v.0)),
        Some(n) => {
            let pos = g.body().iter().position(|&b| b == n).unwrap_or(usize::MAX);
            format!("%{pos}")
        }
    }
}

/// A subproblem as a standalone graph: its inputs are the values it reads (program inputs
/// keep their names; intermediate values are named `t<k>` after the node computing them).
pub fn subproblem_graph(g: &Graph, sp: &Subproblem, name: &str) -> Graph {
    let mut out = Graph::new(name);
    let mut map: HashMap<ValueId, ValueId> = HashMap::new();
    for &v in &sp.inputs {
        let n = value_name(g, v).replace('%', "t");
        map.insert(v, out.add_input(n, InputKind::Activation, g.ty(v).clone()));
    }
    for &n in &sp.nodes {
        let node = g.node(n);
        let inputs = node.inputs.iter().map(|v| map[v]).collect();
        let types = node.outputs.iter().map(|&v| g.ty(v).clone()).collect();
        let new = out.add_node_unchecked(node.op, inputs, node.attrs.clone(), types);
        for (&old, &nv) in node.outputs.iter().zip(&out.node(new).outputs.clone()) {
            map.insert(old, nv);
        }
    }
    out.set_outputs(sp.outputs.iter().map(|v| map[v]).collect());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use drtc_ir::{verify, DType, GraphBuilder, Op, TensorType};

    /// conv -> relu -> add bias -> sigmoid -> sum -> mul
    fn chain() -> Graph {
        let mut b = GraphBuilder::new("g");
        let x = b.input("x", TensorType::new(DType::F32, vec![2, 3, 8, 8]));
        let w = b.param("w", TensorType::new(DType::F32, vec![4, 3, 3, 3]));
        let bias = b.param("bias", TensorType::new(DType::F32, vec![4, 1, 1]));
        let c = b.op1(Op::Conv2d, &[x, w], []).unwrap();
        let r = b.op1(Op::Relu, &[c], []).unwrap();
        let a = b.op1(Op::Add, &[r, bias], []).unwrap();
        let s = b.op1(Op::Sigmoid, &[a], []).unwrap();
        let two = b.constant(2.0, DType::F32);
        let m = b.op1(Op::Mul, &[s, two], []).unwrap();
        let sum = b
            .op1(Op::Sum, &[m], [("dim", drtc_ir::Attr::Ints(vec![1]))])
            .unwrap();
        b.finish(vec![sum, r])
    }

    fn check(g: &Graph, d: &Decomposition, max_ops: usize) {
        // every non-constant node in exactly one subproblem, none over the limit
        let mut seen = std::collections::HashSet::new();
        for sp in &d.subproblems {
            assert!(sp.op_count(g) <= max_ops);
            for &n in &sp.nodes {
                if !is_inlined_constant(g, n) {
                    assert!(seen.insert(n), "node in two subproblems");
                }
            }
            let sub = subproblem_graph(g, sp, "sub");
            let errors: Vec<_> = verify(&sub).into_iter().filter(|e| e.is_error()).collect();
            assert!(errors.is_empty(), "{errors:?}");
        }
        let live = g
            .body()
            .iter()
            .filter(|&&n| !is_inlined_constant(g, n))
            .count();
        assert_eq!(seen.len(), live);
        // each subproblem reads only program inputs and earlier subproblems' writes
        let mut available: std::collections::HashSet<ValueId> =
            g.inputs().iter().copied().collect();
        for sp in &d.subproblems {
            for v in &sp.inputs {
                assert!(available.contains(v), "reads a value not yet written");
            }
            available.extend(sp.outputs.iter().copied());
        }
        for v in g.outputs() {
            assert!(available.contains(v));
        }
    }

    #[test]
    fn respects_the_limit_at_every_size() {
        let g = chain();
        for n in 1..=8 {
            let d = decompose(&g, n);
            check(&g, &d, n);
        }
        assert_eq!(decompose(&g, 1).subproblems.len(), 6);
    }

    #[test]
    fn a_large_limit_keeps_legal_kernels_together() {
        let g = chain();
        let d = decompose(&g, 64);
        check(&g, &d, 64);
        // conv (library) never fuses; the rest may group
        assert!(d.subproblems.len() < 6);
    }
}
