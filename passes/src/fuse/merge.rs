//! The greedy merge shared by fusion planning (`decide.rs`) and decomposition
//! (`decompose`): groups of nodes start apart; repeatedly, among the producer -> consumer
//! pairs of groups, the pair whose merge saves the most bytes (`score`; ties: lowest
//! producer index, then lowest consumer index) merges into the consumer, provided the
//! policy admits it and no path through a third group would become a cycle
//! (`creates_cycle`); until no pair is left. The policy says which groups may merge into
//! what, and which decisions are logged; [`topological_order`] then orders what is left.

use super::classify::is_inlined_constant;
use super::legality::creates_cycle;
use super::score::bytes_saved;
use drtc_ir::{Graph, NodeId};
use petgraph::graphmap::DiGraphMap;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Nodes being merged, with the kind of what they make.
#[derive(Clone, Debug)]
pub(crate) struct Group<K> {
    pub kind: K,
    /// Nodes in program order.
    pub nodes: Vec<NodeId>,
}

/// Why a policy does not merge a pair.
pub(crate) enum Refusal {
    /// Not worth a log line (kinds that never merge).
    Silent,
    /// The reason, for the log.
    Because(String),
}

/// What differs between the users of [`greedy_merge`].
pub(crate) trait MergePolicy {
    type Kind: Copy;

    /// Before the cycle test: the kind of `producer` merged into `consumer`, or why not.
    fn admit(
        &self,
        producer: &Group<Self::Kind>,
        consumer: &Group<Self::Kind>,
    ) -> Result<Self::Kind, Refusal>;

    /// After the cycle test: whether the merged nodes (program order) are valid as `kind`.
    fn check(&self, kind: Self::Kind, nodes: &[NodeId]) -> Result<(), String>;

    /// The log line for a pair refused because of `why`, if such refusals are logged.
    fn rejection(
        &self,
        pair: (usize, usize),
        groups: (&Group<Self::Kind>, &Group<Self::Kind>),
        why: &str,
    ) -> Option<String>;

    /// The kind of `a` and `b` merged as siblings (no value passes between them, they read
    /// a common value, which the merged region then reads once), or `None` (the default:
    /// only producer -> consumer pairs merge).
    fn siblings(&self, _a: &Group<Self::Kind>, _b: &Group<Self::Kind>) -> Option<Self::Kind> {
        None
    }

    /// The log line for a merge of `pair` saving `saved` bytes into `merged`.
    fn merge(
        &self,
        pair: (usize, usize),
        groups: (&Group<Self::Kind>, &Group<Self::Kind>),
        merged: &Group<Self::Kind>,
        saved: u64,
    ) -> String;
}

/// The reason logged for a merge that would create a cycle between groups.
pub(crate) const CYCLE: &str = "a path through another region would become a cycle";

/// `nodes` in program order, each once.
pub(crate) fn ordered(g: &Graph, nodes: impl IntoIterator<Item = NodeId>) -> Vec<NodeId> {
    let pos: HashMap<NodeId, usize> = g.body().iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let set: BTreeSet<(usize, NodeId)> = nodes.into_iter().map(|n| (pos[&n], n)).collect();
    set.into_iter().map(|(_, n)| n).collect()
}

/// The group graph: an edge p -> c when a node of c reads a value a node of p computes
/// (scalar constants, copied into every group that reads them, make no edges). Built in
/// group order and program order, so its traversals are deterministic.
fn group_graph<K>(g: &Graph, groups: &[Option<Group<K>>]) -> DiGraphMap<usize, ()> {
    let mut owner: HashMap<NodeId, usize> = HashMap::new();
    let mut gg: DiGraphMap<usize, ()> = DiGraphMap::new();
    for (i, group) in groups.iter().enumerate() {
        if let Some(group) = group {
            gg.add_node(i);
            for &n in &group.nodes {
                if !is_inlined_constant(g, n) {
                    owner.insert(n, i);
                }
            }
        }
    }
    // edges in program order of the reading node: the edge order decides the toposort
    // among independent groups, and generated code must not change from run to run
    for &n in g.body() {
        let Some(&i) = owner.get(&n) else {
            continue;
        };
        for &v in &g.node(n).inputs {
            if let Some(&p) = g.producer(v).and_then(|p| owner.get(&p)) {
                if p != i {
                    gg.add_edge(p, i, ());
                }
            }
        }
    }
    gg
}

/// Merges `groups` greedily under `policy`, logging into `log`; returns the groups left,
/// in the order of their indices (see [`topological_order`]).
pub(crate) fn greedy_merge<P: MergePolicy>(
    g: &Graph,
    groups: Vec<Group<P::Kind>>,
    policy: &P,
    log: &mut Vec<String>,
) -> Vec<Group<P::Kind>> {
    let mut groups: Vec<Option<Group<P::Kind>>> = groups.into_iter().map(Some).collect();
    loop {
        let gg = group_graph(g, &groups);
        let live = |i: usize| groups[i].as_ref().expect("edges join live groups");
        let mut candidates: Vec<(u64, usize, usize)> = gg
            .all_edges()
            .map(|(p, c, _)| (bytes_saved(g, &live(p).nodes, &live(c).nodes), p, c))
            .collect();
        let siblings = sibling_pairs(g, &groups, &gg, policy);
        candidates.extend(siblings.iter().map(|&(saved, a, b, _)| (saved, a, b)));
        candidates.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut chosen = None;
        for (saved, p, c) in candidates {
            let pair = (live(p), live(c));
            let mut refuse = |why: &str| {
                if let Some(line) = policy.rejection((p, c), pair, why) {
                    log.push(line);
                }
            };
            let sibling = siblings.iter().find(|s| (s.1, s.2) == (p, c)).map(|s| s.3);
            let admitted = match sibling {
                Some(kind) => Ok(kind),
                None => policy.admit(pair.0, pair.1),
            };
            let kind = match admitted {
                Ok(kind) => kind,
                Err(Refusal::Silent) => continue,
                Err(Refusal::Because(why)) => {
                    refuse(&why);
                    continue;
                }
            };
            if creates_cycle(&gg, p, c) {
                refuse(CYCLE);
                continue;
            }
            let nodes = ordered(g, pair.0.nodes.iter().chain(&pair.1.nodes).copied());
            if let Err(why) = policy.check(kind, &nodes) {
                refuse(&why);
                continue;
            }
            let merged = Group { kind, nodes };
            let mut line = policy.merge((p, c), pair, &merged, saved);
            if sibling.is_some() {
                line.push_str(" (siblings: no value passes between them; they read a common one)");
            }
            log.push(line);
            chosen = Some((p, c, merged));
            break;
        }
        let Some((p, c, merged)) = chosen else {
            break;
        };
        groups[p] = None;
        groups[c] = Some(merged);
    }
    groups.into_iter().flatten().collect()
}

/// Pairs of live groups `(bytes saved, a, b, kind)`, `a < b`, that `policy` merges as
/// siblings: they read a common value (made by a third group, or a graph input) and no
/// edge joins them (a path through other groups is the cycle test's business). The bytes
/// saved are the common values' sizes: read once instead of twice.
fn sibling_pairs<P: MergePolicy>(
    g: &Graph,
    groups: &[Option<Group<P::Kind>>],
    gg: &DiGraphMap<usize, ()>,
    policy: &P,
) -> Vec<(u64, usize, usize, P::Kind)> {
    let mut readers: HashMap<drtc_ir::ValueId, BTreeSet<usize>> = HashMap::new();
    for (i, group) in groups.iter().enumerate() {
        let Some(group) = group else { continue };
        for &n in &group.nodes {
            for &v in &g.node(n).inputs {
                let inside = g.producer(v).is_some_and(|p| group.nodes.contains(&p));
                if !inside && g.ty(v).rank() > 0 {
                    readers.entry(v).or_default().insert(i);
                }
            }
        }
    }
    let mut shared: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    for (v, rs) in &readers {
        let rs: Vec<usize> = rs.iter().copied().collect();
        for (k, &a) in rs.iter().enumerate() {
            for &b in &rs[k + 1..] {
                *shared.entry((a, b)).or_default() += g.ty(*v).size_bytes();
            }
        }
    }
    shared
        .into_iter()
        .filter(|&((a, b), _)| !gg.contains_edge(a, b) && !gg.contains_edge(b, a))
        .filter_map(|((a, b), bytes)| {
            let (ga, gb) = (groups[a].as_ref()?, groups[b].as_ref()?);
            policy.siblings(ga, gb).map(|kind| (bytes, a, b, kind))
        })
        .collect()
}

/// `groups` (which merging left acyclic) in a topological order of their group graph that
/// follows program order where it can (Kahn's algorithm, the group with the earliest node
/// first) and always keeps random ops and opaque ATen calls (`Op::is_random`) in program
/// order, so generated code draws random numbers in the reference's order. Deterministic:
/// the same graph gives the same order on every run.
pub(crate) fn topological_order<K>(g: &Graph, groups: Vec<Group<K>>) -> Vec<Group<K>> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut groups: Vec<Option<Group<K>>> = groups.into_iter().map(Some).collect();
    let plain = group_graph(g, &groups);
    let pos: HashMap<NodeId, usize> = g.body().iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let first = |i: usize| {
        groups[i]
            .as_ref()
            .and_then(|gr| gr.nodes.iter().filter_map(|n| pos.get(n)).min().copied())
            .unwrap_or(usize::MAX)
    };
    let group_of: HashMap<NodeId, usize> = groups
        .iter()
        .enumerate()
        .filter_map(|(i, gr)| gr.as_ref().map(|gr| (i, gr)))
        .flat_map(|(i, gr)| gr.nodes.iter().map(move |&n| (n, i)))
        .collect();
    let effects: Vec<usize> = g
        .body()
        .iter()
        .filter(|&&n| g.node(n).op.is_random(&g.node(n).attrs))
        .filter_map(|n| group_of.get(n).copied())
        .collect();
    let mut with_effects = plain.clone();
    for w in effects.windows(2) {
        if w[0] != w[1] {
            with_effects.add_edge(w[0], w[1], ());
        }
    }
    let kahn = |gg: &DiGraphMap<usize, ()>| -> Option<Vec<usize>> {
        let mut indegree: HashMap<usize, usize> = gg.nodes().map(|n| (n, 0)).collect();
        for (_, c, _) in gg.all_edges() {
            *indegree.get_mut(&c)? += 1;
        }
        let mut ready: BinaryHeap<Reverse<(usize, usize)>> = indegree
            .iter()
            .filter(|(_, &d)| d == 0)
            .map(|(&n, _)| Reverse((first(n), n)))
            .collect();
        let mut out = vec![];
        while let Some(Reverse((_, n))) = ready.pop() {
            out.push(n);
            for c in gg.neighbors_directed(n, petgraph::Direction::Outgoing) {
                let d = indegree.get_mut(&c)?;
                *d -= 1;
                if *d == 0 {
                    ready.push(Reverse((first(c), c)));
                }
            }
        }
        (out.len() == gg.node_count()).then_some(out)
    };
    let order = kahn(&with_effects)
        .or_else(|| kahn(&plain))
        .unwrap_or_else(|| plain.nodes().collect());
    order.into_iter().filter_map(|i| groups[i].take()).collect()
}
