//! `decompose{max-ops=N}`: splits a program into subproblems of at most N ops along
//! fusion-legal boundaries, as training and evaluation units for kernel writers.
//!
//! Subproblems start as the regions of the fusion plan (`fuse{max-ops=N}`: each is a legal
//! kernel), then neighbouring groups merge greedily while they stay within N ops and no
//! cycle appears between groups (`fuse::creates_cycle`), largest tensor passed first, so
//! the cuts that remain cross small tensors. The graph is not changed; the subproblems are
//! reported in the log, and [`decompose`] / [`subproblem_graph`] give them to the CLI.

use crate::fuse::{
    bytes_saved, creates_cycle, is_inlined_constant, plan_fusion, region_inputs, region_outputs,
    FuseOptions,
};
use crate::options::{OptionDef, OptionKind, OptionValue, PassOptions};
use crate::{Changed, Pass, PassContext, PassError, PassInfo};
use drtc_ir::{Graph, InputKind, NodeId, ValueId};
use petgraph::graphmap::DiGraphMap;
use std::collections::{BTreeSet, HashMap};

/// Registry entry.
pub const INFO: PassInfo = PassInfo {
    name: "decompose",
    summary: "split into subproblems of at most max-ops ops along fusion-legal cuts (reported)",
    options: &[OptionDef {
        name: "max-ops",
        kind: OptionKind::Count,
        default: OptionValue::Count(8),
        help: "most ops in one subproblem (scalar constants not counted)",
    }],
    build: DecomposePass::build,
};

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
        self.nodes
            .iter()
            .filter(|&&n| !is_inlined_constant(g, n))
            .count()
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

fn ordered(g: &Graph, nodes: impl IntoIterator<Item = NodeId>) -> Vec<NodeId> {
    let pos: HashMap<NodeId, usize> = g.body().iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let set: BTreeSet<(usize, NodeId)> = nodes.into_iter().map(|n| (pos[&n], n)).collect();
    set.into_iter().map(|(_, n)| n).collect()
}

/// Splits `g` into subproblems of at most `max_ops` ops (at least 1).
pub fn decompose(g: &Graph, max_ops: usize) -> Decomposition {
    let max_ops = max_ops.max(1);
    let plan = plan_fusion(g, &FuseOptions { max_ops });
    let mut groups: Vec<Option<Vec<NodeId>>> =
        plan.regions.iter().map(|r| Some(r.nodes.clone())).collect();
    let count = |nodes: &[NodeId]| {
        nodes
            .iter()
            .filter(|&&n| !is_inlined_constant(g, n))
            .count()
    };
    let mut log = vec![];
    loop {
        // the group graph: p -> c when c reads a value p computes
        let mut owner: HashMap<NodeId, usize> = HashMap::new();
        let mut gg: DiGraphMap<usize, ()> = DiGraphMap::new();
        for (i, nodes) in groups.iter().enumerate() {
            if let Some(nodes) = nodes {
                gg.add_node(i);
                for &n in nodes {
                    if !is_inlined_constant(g, n) {
                        owner.insert(n, i);
                    }
                }
            }
        }
        for (i, nodes) in groups.iter().enumerate() {
            for &n in nodes.iter().flatten() {
                for &v in &g.node(n).inputs {
                    if let Some(&p) = g.producer(v).and_then(|p| owner.get(&p)) {
                        if p != i {
                            gg.add_edge(p, i, ());
                        }
                    }
                }
            }
        }
        let mut candidates: Vec<(u64, usize, usize)> = gg
            .all_edges()
            .filter_map(|(p, c, _)| {
                let (pn, cn) = (groups[p].as_ref()?, groups[c].as_ref()?);
                (count(pn) + count(cn) <= max_ops).then(|| (bytes_saved(g, pn, cn), p, c))
            })
            .collect();
        candidates.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let Some(&(bytes, p, c)) = candidates
            .iter()
            .find(|(_, p, c)| !creates_cycle(&gg, *p, *c))
        else {
            break;
        };
        let merged = ordered(
            g,
            groups[p]
                .take()
                .into_iter()
                .flatten()
                .chain(groups[c].take().into_iter().flatten())
                .collect::<BTreeSet<_>>(),
        );
        log.push(format!(
            "merge group {p} into group {c}: {} ops, {bytes} bytes no longer cross a cut",
            count(&merged)
        ));
        groups[c] = Some(merged);
    }
    // topological order of what is left
    let alive: Vec<(usize, Vec<NodeId>)> = groups
        .into_iter()
        .enumerate()
        .filter_map(|(i, n)| Some((i, n?)))
        .collect();
    let mut gg: DiGraphMap<usize, ()> = DiGraphMap::new();
    let mut owner: HashMap<NodeId, usize> = HashMap::new();
    for (i, nodes) in &alive {
        gg.add_node(*i);
        for &n in nodes {
            if !is_inlined_constant(g, n) {
                owner.insert(n, *i);
            }
        }
    }
    for (i, nodes) in &alive {
        for &n in nodes {
            for &v in &g.node(n).inputs {
                if let Some(&p) = g.producer(v).and_then(|p| owner.get(&p)) {
                    if p != *i {
                        gg.add_edge(p, *i, ());
                    }
                }
            }
        }
    }
    let order = petgraph::algo::toposort(&gg, None).unwrap_or_else(|_| gg.nodes().collect());
    let by_index: HashMap<usize, Vec<NodeId>> = alive.into_iter().collect();
    let subproblems = order
        .into_iter()
        .filter_map(|i| by_index.get(&i))
        .map(|nodes| Subproblem {
            inputs: region_inputs(g, nodes),
            outputs: region_outputs(g, nodes),
            nodes: nodes.clone(),
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

/// The `decompose` pass: reports the subproblems; the graph is unchanged.
#[derive(Clone, Copy, Debug)]
pub struct DecomposePass {
    pub max_ops: usize,
}

impl DecomposePass {
    fn build(options: &PassOptions) -> Result<Box<dyn Pass>, String> {
        let n = options.count("max-ops")?;
        if n == 0 {
            return Err("max-ops must be at least 1".into());
        }
        Ok(Box::new(DecomposePass {
            max_ops: n as usize,
        }))
    }
}

impl Pass for DecomposePass {
    fn name(&self) -> &'static str {
        "decompose"
    }

    fn run(&self, graph: &mut Graph, cx: &mut PassContext) -> Result<Changed, PassError> {
        let d = decompose(graph, self.max_ops);
        for line in &d.log {
            cx.log(line.clone());
        }
        let pos: HashMap<NodeId, usize> = graph
            .body()
            .iter()
            .enumerate()
            .map(|(i, &n)| (n, i))
            .collect();
        for (i, sp) in d.subproblems.iter().enumerate() {
            let ops: Vec<String> = sp
                .nodes
                .iter()
                .map(|n| format!("#{} {}", pos[n], graph.node(*n).op))
                .collect();
            let names = |vs: &[ValueId]| {
                vs.iter()
                    .map(|&v| value_name(graph, v))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            cx.log(format!(
                "subproblem {i} ({} ops): [{}] reads ({}) writes ({})",
                sp.op_count(graph),
                ops.join(", "),
                names(&sp.inputs),
                names(&sp.outputs)
            ));
        }
        Ok(Changed::No)
    }
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
