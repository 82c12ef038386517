//! The fusion decision: greedy merging of producer/consumer regions by bytes saved.

use super::classify::{classify, is_inlined_constant};
use super::legality::{check_region, combine, creates_cycle, region_inputs, region_outputs};
use super::score::bytes_saved;
use super::{FusionPlan, Region, RegionKind};
use drtc_ir::{Graph, NodeId};
use petgraph::graphmap::DiGraphMap;
use std::collections::{BTreeSet, HashMap};

/// Options of the `fuse` pass.
#[derive(Clone, Debug)]
pub struct FuseOptions {
    /// Most ops in one region (constants not counted).
    pub max_ops: usize,
}

impl Default for FuseOptions {
    fn default() -> Self {
        FuseOptions { max_ops: 64 }
    }
}

struct Group {
    kind: RegionKind,
    nodes: Vec<NodeId>,
    alive: bool,
}

/// The region graph: an edge p -> c when a node of c reads a value of p.
fn region_graph(
    g: &Graph,
    group_of: &HashMap<NodeId, usize>,
    groups: &[Group],
) -> DiGraphMap<usize, ()> {
    let mut rg = DiGraphMap::new();
    for (i, gr) in groups.iter().enumerate() {
        if gr.alive {
            rg.add_node(i);
        }
    }
    for (&n, &c) in group_of {
        for &v in &g.node(n).inputs {
            if let Some(p) = g.producer(v).and_then(|p| group_of.get(&p)) {
                if *p != c {
                    rg.add_edge(*p, c, ());
                }
            }
        }
    }
    rg
}

/// The regions in a topological order that follows program order where it can (Kahn's
/// algorithm, earliest first node first) and always keeps random ops and opaque ATen calls
/// (`Op::is_random`) in program order, so generated code draws random numbers in the
/// reference's order.
fn region_order(g: &Graph, group_of: &HashMap<NodeId, usize>, groups: &[Group]) -> Vec<usize> {
    let pos: HashMap<NodeId, usize> = g.body().iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let first = |i: usize| {
        groups[i]
            .nodes
            .iter()
            .map(|n| pos[n])
            .min()
            .unwrap_or(usize::MAX)
    };
    let plain = region_graph(g, group_of, groups);
    let mut rg = plain.clone();
    let effects: Vec<usize> = g
        .body()
        .iter()
        .filter(|&&n| g.node(n).op.is_random(&g.node(n).attrs))
        .filter_map(|n| group_of.get(n).copied())
        .collect();
    for w in effects.windows(2) {
        if w[0] != w[1] {
            rg.add_edge(w[0], w[1], ());
        }
    }
    let kahn = |rg: &DiGraphMap<usize, ()>| -> Option<Vec<usize>> {
        use std::cmp::Reverse;
        let mut indegree: HashMap<usize, usize> = rg.nodes().map(|n| (n, 0)).collect();
        for (_, c, _) in rg.all_edges() {
            *indegree.get_mut(&c)? += 1;
        }
        let mut ready: std::collections::BinaryHeap<Reverse<(usize, usize)>> = indegree
            .iter()
            .filter(|(_, &d)| d == 0)
            .map(|(&n, _)| Reverse((first(n), n)))
            .collect();
        let mut out = vec![];
        while let Some(Reverse((_, n))) = ready.pop() {
            out.push(n);
            for c in rg.neighbors_directed(n, petgraph::Direction::Outgoing) {
                let d = indegree.get_mut(&c)?;
                *d -= 1;
                if *d == 0 {
                    ready.push(Reverse((first(c), c)));
                }
            }
        }
        (out.len() == rg.node_count()).then_some(out)
    };
    kahn(&rg)
        .or_else(|| kahn(&plain))
        .unwrap_or_else(|| plain.nodes().collect())
}

fn ordered(g: &Graph, nodes: impl IntoIterator<Item = NodeId>) -> Vec<NodeId> {
    let pos: HashMap<NodeId, usize> = g.body().iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let set: BTreeSet<(usize, NodeId)> = nodes.into_iter().map(|n| (pos[&n], n)).collect();
    set.into_iter().map(|(_, n)| n).collect()
}

/// Partitions `g` into regions.
pub fn plan_fusion(g: &Graph, opts: &FuseOptions) -> FusionPlan {
    let mut log = vec![];
    let mut groups: Vec<Group> = vec![];
    let mut group_of: HashMap<NodeId, usize> = HashMap::new();
    let constants: Vec<NodeId> = g
        .body()
        .iter()
        .copied()
        .filter(|&n| is_inlined_constant(g, n))
        .collect();
    for &n in g.body() {
        if constants.contains(&n) {
            continue;
        }
        group_of.insert(n, groups.len());
        groups.push(Group {
            kind: classify(g, n),
            nodes: vec![n],
            alive: true,
        });
    }
    let with_constants = |nodes: &[NodeId]| -> Vec<NodeId> {
        let mut all: Vec<NodeId> = nodes.to_vec();
        for &c in &constants {
            let out = g.node(c).outputs[0];
            if nodes.iter().any(|&n| g.node(n).inputs.contains(&out)) {
                all.push(c);
            }
        }
        ordered(g, all)
    };
    let mut rejected: BTreeSet<(usize, usize)> = BTreeSet::new();
    loop {
        let rg = region_graph(g, &group_of, &groups);
        let mut candidates: Vec<(u64, usize, usize)> = rg
            .all_edges()
            .filter(|(p, c, _)| !rejected.contains(&(*p, *c)))
            .map(|(p, c, _)| (bytes_saved(g, &groups[p].nodes, &groups[c].nodes), p, c))
            .collect();
        candidates.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut merged = false;
        for (saved, p, c) in candidates {
            let (pk, ck) = (groups[p].kind, groups[c].kind);
            let describe =
                |why: &str| format!("reject region {p} ({pk}) into region {c} ({ck}): {why}");
            let Some(kind) = combine(pk, ck) else {
                rejected.insert((p, c));
                continue; // kinds that never fuse are not worth a log line
            };
            if groups[p].nodes.len() + groups[c].nodes.len() > opts.max_ops {
                log.push(describe(&format!("more than max-ops={} ops", opts.max_ops)));
                rejected.insert((p, c));
                continue;
            }
            if creates_cycle(&rg, p, c) {
                log.push(describe(
                    "a path through another region would become a cycle",
                ));
                rejected.insert((p, c));
                continue;
            }
            let nodes = ordered(g, groups[p].nodes.iter().chain(&groups[c].nodes).copied());
            if let Err(why) = check_region(g, kind, &with_constants(&nodes)) {
                log.push(describe(&why));
                rejected.insert((p, c));
                continue;
            }
            log.push(format!(
                "merge region {p} ({pk}) into region {c} ({ck}) as {kind}: saves {saved} bytes"
            ));
            for &n in &groups[p].nodes {
                group_of.insert(n, c);
            }
            groups[c].nodes = nodes;
            groups[c].kind = kind;
            groups[p].alive = false;
            groups[p].nodes.clear();
            // merging changes what other pairs would see
            rejected.clear();
            merged = true;
            break;
        }
        if !merged {
            break;
        }
    }
    let order = region_order(g, &group_of, &groups);
    let mut regions = vec![];
    for i in order {
        let nodes = with_constants(&groups[i].nodes);
        regions.push(Region {
            kind: groups[i].kind,
            inputs: region_inputs(g, &nodes),
            outputs: region_outputs(g, &groups[i].nodes),
            nodes,
        });
    }
    // a constant that is itself a graph output gets a region of its own
    for &c in &constants {
        let out = g.node(c).outputs[0];
        if g.outputs().contains(&out) {
            regions.push(Region {
                kind: RegionKind::Pointwise,
                nodes: vec![c],
                inputs: vec![],
                outputs: vec![out],
            });
        }
    }
    FusionPlan { regions, log }
}
