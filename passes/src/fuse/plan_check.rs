//! The fusion plan's check: [`FusionPlan::verify`] checks what every later stage
//! relies on (ARCHITECTURE.md, invariant 7), so a planning bug is reported where it is made
//! rather than as wrong code in a backend:
//!
//! - the regions partition the graph's nodes: every node of the body is in exactly one
//!   region, except scalar constants, which are copied into each region that reads them
//!   (and get a region of their own when they are graph outputs);
//! - each region's nodes are in program order; its inputs are what its nodes read from
//!   outside, its outputs what they compute that other nodes read or the graph returns;
//! - the regions are in a topological order of the region graph, so that graph is
//!   acyclic: a region reads only graph inputs and values that earlier regions write;
//! - each region is a valid instance of its kind (`check_region`; host regions hold one
//!   op of their kind, fallbacks anything), made of nodes whose own kinds combine into it;
//! - each region's recorded iteration space and reduction space are the ones its nodes
//!   give, so backends can use them without recomputing.
//!
//! It costs about what planning costs (the same legality checks, once per region), so the
//! compiler runs it on every plan.

use super::classify::{classify, is_inlined_constant};
use super::decide::spaces;
use super::legality::{check_region, combine, region_inputs, region_outputs};
use super::{FusionPlan, RegionKind};
use drtc_ir::{Graph, NodeId, ValueId};
use std::collections::HashMap;

/// A fusion plan that breaks one of its invariants. Nodes and values are named as in
/// [`FusionPlan::display`]: `#k` is the k-th node of the body, `%k` its result.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("region {region} holds a node that is not in the graph's body")]
    UnknownNode { region: usize },
    #[error("node {node} is in no region")]
    Unplanned { node: String },
    #[error("node {node} is in region {first} and in region {second}")]
    TwiceOwned {
        node: String,
        first: usize,
        second: usize,
    },
    #[error("region {region} copies the constant {node} without reading it")]
    StrayConstant { region: usize, node: String },
    #[error("region {region}: its nodes are not in program order (or one is listed twice)")]
    Unordered { region: usize },
    #[error("region {region} lists inputs ({listed}) but its nodes read ({actual})")]
    Inputs {
        region: usize,
        listed: String,
        actual: String,
    },
    #[error("region {region} lists outputs ({listed}) but must write ({actual})")]
    Outputs {
        region: usize,
        listed: String,
        actual: String,
    },
    #[error(
        "region {region} reads {value}, which no earlier region writes: the regions are not \
         in a topological order of an acyclic region graph"
    )]
    NotTopological { region: usize, value: String },
    #[error("region {region} is not a valid {kind} region: {why}")]
    Invalid {
        region: usize,
        kind: RegionKind,
        why: String,
    },
    #[error("region {region} records {recorded} but its nodes give {derived}")]
    Space {
        region: usize,
        recorded: String,
        derived: String,
    },
}

/// Names for nodes and values, as the plan's listing prints them.
struct Names<'g> {
    g: &'g Graph,
    pos: HashMap<NodeId, usize>,
}

impl Names<'_> {
    fn node(&self, n: NodeId) -> String {
        format!("#{} {}", self.pos[&n], self.g.node(n).op.name())
    }

    fn value(&self, v: ValueId) -> String {
        match self.g.producer(v) {
            Some(n) => match self.pos.get(&n) {
                Some(p) => format!("%{p}"),
                None => "%?".into(),
            },
            None => format!("%{}", self.g.value(v).name.clone().unwrap_or_default()),
        }
    }

    fn values(&self, vs: &[ValueId]) -> String {
        vs.iter()
            .map(|&v| self.value(v))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Whether a node of kind `node` may sit in a region of kind `region` (as producer or
/// consumer of the region's other nodes).
fn fits(node: RegionKind, region: RegionKind) -> bool {
    node == region || combine(node, region) == Some(region) || combine(region, node) == Some(region)
}

impl FusionPlan {
    /// Checks the plan's invariants for `g` (see the module documentation); the first
    /// broken one is the error.
    pub fn verify(&self, g: &Graph) -> Result<(), PlanError> {
        let pos: HashMap<NodeId, usize> =
            g.body().iter().enumerate().map(|(i, &n)| (n, i)).collect();
        let names = Names { g, pos };
        let pos = &names.pos;
        // partition
        let mut owner: HashMap<NodeId, usize> = HashMap::new();
        for (i, r) in self.regions.iter().enumerate() {
            if r.nodes.iter().any(|n| !pos.contains_key(n)) {
                return Err(PlanError::UnknownNode { region: i });
            }
            if !r.nodes.windows(2).all(|w| pos[&w[0]] < pos[&w[1]]) {
                return Err(PlanError::Unordered { region: i });
            }
            let constant_region = r.nodes.iter().all(|&n| is_inlined_constant(g, n));
            for &n in &r.nodes {
                if is_inlined_constant(g, n) {
                    let out = g.node(n).outputs[0];
                    let read = r.nodes.iter().any(|&m| g.node(m).inputs.contains(&out));
                    let own_output = constant_region && g.outputs().contains(&out);
                    if !(read || own_output) {
                        return Err(PlanError::StrayConstant {
                            region: i,
                            node: names.node(n),
                        });
                    }
                } else if let Some(first) = owner.insert(n, i) {
                    return Err(PlanError::TwiceOwned {
                        node: names.node(n),
                        first,
                        second: i,
                    });
                }
            }
        }
        if let Some(&n) = g
            .body()
            .iter()
            .find(|&&n| !is_inlined_constant(g, n) && !owner.contains_key(&n))
        {
            return Err(PlanError::Unplanned {
                node: names.node(n),
            });
        }
        // dataflow and order
        let mut written: std::collections::HashSet<ValueId> = g.inputs().iter().copied().collect();
        for (i, r) in self.regions.iter().enumerate() {
            let ops: Vec<NodeId> = r
                .nodes
                .iter()
                .copied()
                .filter(|&n| !is_inlined_constant(g, n))
                .collect();
            let inputs = region_inputs(g, &r.nodes);
            if inputs != r.inputs {
                return Err(PlanError::Inputs {
                    region: i,
                    listed: names.values(&r.inputs),
                    actual: names.values(&inputs),
                });
            }
            let outputs = if ops.is_empty() {
                r.nodes
                    .iter()
                    .map(|&c| g.node(c).outputs[0])
                    .filter(|v| g.outputs().contains(v))
                    .collect()
            } else {
                region_outputs(g, &ops)
            };
            if outputs != r.outputs {
                return Err(PlanError::Outputs {
                    region: i,
                    listed: names.values(&r.outputs),
                    actual: names.values(&outputs),
                });
            }
            if let Some(&v) = r.inputs.iter().find(|v| !written.contains(v)) {
                return Err(PlanError::NotTopological {
                    region: i,
                    value: names.value(v),
                });
            }
            written.extend(r.outputs.iter().copied());
            // the kind
            let invalid = |why: String| PlanError::Invalid {
                region: i,
                kind: r.kind,
                why,
            };
            if let Some(&n) = ops.iter().find(|&&n| !fits(classify(g, n), r.kind)) {
                if r.kind != RegionKind::Fallback {
                    return Err(invalid(format!(
                        "{} is a {} op",
                        names.node(n),
                        classify(g, n)
                    )));
                }
            }
            match r.kind {
                RegionKind::Pointwise
                | RegionKind::Reduction
                | RegionKind::Contraction
                | RegionKind::Window => {
                    if !ops.is_empty() {
                        check_region(g, r.kind, &r.nodes).map_err(invalid)?;
                    }
                }
                RegionKind::Library | RegionKind::View => {
                    if ops.len() != 1 {
                        return Err(invalid(format!("it holds {} ops, not one", ops.len())));
                    }
                }
                RegionKind::Fallback => {}
            }
            // the spaces
            let derived = spaces(g, r.kind, &r.nodes).map_err(invalid)?;
            if (&r.iteration, &r.reduction) != (&derived.0, &derived.1) {
                return Err(PlanError::Space {
                    region: i,
                    recorded: format!(
                        "iteration space {:?}, reduction {:?}",
                        r.iteration, r.reduction
                    ),
                    derived: format!("iteration space {:?}, reduction {:?}", derived.0, derived.1),
                });
            }
        }
        // graph outputs need no check of their own: every node is planned, and a region's
        // outputs include the graph outputs its nodes compute
        Ok(())
    }
}
