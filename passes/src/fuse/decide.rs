//! The fusion decision: regions start as single nodes of their own kind (`classify`) and
//! merge greedily by bytes saved (`merge.rs`), when their kinds combine, the result stays
//! within `max-ops` and is a valid region of its kind (`legality`); every merge and every
//! rejection is logged. Each region then records its iteration and reduction space.

use super::classify::{classify, is_inlined_constant};
use super::legality::{
    check_reduction, check_region, combine, pointwise_domain, region_inputs, region_outputs,
};
use super::merge::{greedy_merge, ordered, topological_order, Group, MergePolicy, Refusal};
use super::{FusionPlan, ReduceSpace, Region, RegionKind};
use drtc_ir::{Graph, NodeId, Shape};

/// Options of fusion planning (`fuse{max-ops=N}`).
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

/// Fusion's merge policy: kinds combine, at most `max_ops` ops, a valid region.
struct Fusion<'g> {
    g: &'g Graph,
    max_ops: usize,
    /// The graph's scalar constants, copied into every region that reads them.
    constants: Vec<NodeId>,
}

impl Fusion<'_> {
    /// `nodes` with the scalar constants they read, in program order.
    fn with_constants(&self, nodes: &[NodeId]) -> Vec<NodeId> {
        let g = self.g;
        let mut all: Vec<NodeId> = nodes.to_vec();
        for &c in &self.constants {
            let out = g.node(c).outputs[0];
            if nodes.iter().any(|&n| g.node(n).inputs.contains(&out)) {
                all.push(c);
            }
        }
        ordered(g, all)
    }
}

impl MergePolicy for Fusion<'_> {
    type Kind = RegionKind;

    fn admit(
        &self,
        producer: &Group<RegionKind>,
        consumer: &Group<RegionKind>,
    ) -> Result<RegionKind, Refusal> {
        // kinds that never fuse are not worth a log line
        let kind = combine(producer.kind, consumer.kind).ok_or(Refusal::Silent)?;
        if producer.nodes.len() + consumer.nodes.len() > self.max_ops {
            return Err(Refusal::Because(format!(
                "more than max-ops={} ops",
                self.max_ops
            )));
        }
        Ok(kind)
    }

    /// Two reductions (or two pointwise regions) that read a common value merge into one
    /// region when it is a valid region of their kind (one reduction space, one iteration
    /// domain) within `max-ops`: one pass reads the value for both (a mean and a variance
    /// of one tensor; several activations of one input), one launch instead of two.
    fn siblings(&self, a: &Group<RegionKind>, b: &Group<RegionKind>) -> Option<RegionKind> {
        let kind = match (a.kind, b.kind) {
            (RegionKind::Reduction, RegionKind::Reduction) => RegionKind::Reduction,
            (RegionKind::Pointwise, RegionKind::Pointwise) => RegionKind::Pointwise,
            _ => return None,
        };
        (a.nodes.len() + b.nodes.len() <= self.max_ops).then_some(kind)
    }

    fn check(&self, kind: RegionKind, nodes: &[NodeId]) -> Result<(), String> {
        check_region(self.g, kind, &self.with_constants(nodes))
    }

    fn rejection(
        &self,
        (p, c): (usize, usize),
        (pg, cg): (&Group<RegionKind>, &Group<RegionKind>),
        why: &str,
    ) -> Option<String> {
        Some(format!(
            "reject region {p} ({}) into region {c} ({}): {why}",
            pg.kind, cg.kind
        ))
    }

    fn merge(
        &self,
        (p, c): (usize, usize),
        (pg, cg): (&Group<RegionKind>, &Group<RegionKind>),
        merged: &Group<RegionKind>,
        saved: u64,
    ) -> String {
        format!(
            "merge region {p} ({}) into region {c} ({}) as {}: saves {saved} bytes",
            pg.kind, cg.kind, merged.kind
        )
    }
}

/// The iteration space of region `nodes` of `kind` and, for reductions, its reduction
/// space; `Err` when a reduction region has none (the reason).
pub(super) fn spaces(
    g: &Graph,
    kind: RegionKind,
    nodes: &[NodeId],
) -> Result<(Shape, Option<ReduceSpace>), String> {
    let first_output = |n: NodeId| g.ty(g.node(n).outputs[0]).shape.clone();
    Ok(match kind {
        RegionKind::Pointwise => (pointwise_domain(g, nodes), None),
        RegionKind::Reduction => {
            let space = check_reduction(g, nodes)?;
            (space.domain.clone(), Some(space))
        }
        RegionKind::Contraction | RegionKind::Window => {
            let main = nodes
                .iter()
                .copied()
                .find(|&n| classify(g, n) == kind)
                .ok_or_else(|| format!("a {kind} region without its main op"))?;
            (first_output(main), None)
        }
        RegionKind::Library | RegionKind::View | RegionKind::Fallback => {
            let op = nodes
                .iter()
                .copied()
                .find(|&n| !is_inlined_constant(g, n))
                .or(nodes.first().copied())
                .ok_or("an empty region")?;
            (first_output(op), None)
        }
    })
}

/// A region of `kind` made of `ops` (no scalar constants) and the constants in `nodes`.
/// A reduction region whose reduction space cannot be derived is computed with PyTorch
/// instead (a fallback region), and the log says why.
fn region(
    g: &Graph,
    kind: RegionKind,
    ops: &[NodeId],
    nodes: Vec<NodeId>,
    log: &mut Vec<String>,
) -> Region {
    let (kind, (iteration, reduction)) = match spaces(g, kind, &nodes) {
        Ok(s) => (kind, s),
        Err(why) => {
            let names: Vec<&str> = ops.iter().map(|&n| g.node(n).op.name()).collect();
            log.push(format!(
                "fallback: the {kind} region [{}] has no iteration space ({why}); computed with PyTorch",
                names.join(", ")
            ));
            let op = ops.first().copied().unwrap_or(nodes[0]);
            let shape = g.ty(g.node(op).outputs[0]).shape.clone();
            (RegionKind::Fallback, (shape, None))
        }
    };
    Region {
        kind,
        inputs: region_inputs(g, &nodes),
        outputs: region_outputs(g, ops),
        nodes,
        iteration,
        reduction,
    }
}

/// Partitions `g` into regions.
pub fn plan_fusion(g: &Graph, opts: &FuseOptions) -> FusionPlan {
    let mut log = vec![];
    let constants: Vec<NodeId> = g
        .body()
        .iter()
        .copied()
        .filter(|&n| is_inlined_constant(g, n))
        .collect();
    let groups: Vec<Group<RegionKind>> = g
        .body()
        .iter()
        .copied()
        .filter(|n| !constants.contains(n))
        .map(|n| Group {
            kind: classify(g, n),
            nodes: vec![n],
        })
        .collect();
    let fusion = Fusion {
        g,
        max_ops: opts.max_ops,
        constants,
    };
    let groups = topological_order(g, greedy_merge(g, groups, &fusion, &mut log));
    let mut regions: Vec<Region> = vec![];
    for group in groups {
        let nodes = fusion.with_constants(&group.nodes);
        regions.push(region(g, group.kind, &group.nodes, nodes, &mut log));
    }
    // a constant that is itself a graph output gets a region of its own
    for &c in &fusion.constants {
        let out = g.node(c).outputs[0];
        if g.outputs().contains(&out) {
            regions.push(Region {
                kind: RegionKind::Pointwise,
                nodes: vec![c],
                inputs: vec![],
                outputs: vec![out],
                iteration: g.ty(out).shape.clone(),
                reduction: None,
            });
        }
    }
    let plan = FusionPlan { regions, log };
    // in debug builds (and so in every test) each plan is checked where it is made
    #[cfg(debug_assertions)]
    if let Err(e) = plan.verify(g) {
        panic!("plan_fusion made an invalid plan: {e}\n{}", plan.display(g));
    }
    plan
}
