//! Regions and fusion plans: the result of the `fuse` pass.

use super::ReduceSpace;
use drtc_ir::{Graph, NodeId, Shape, ValueId};
use std::fmt::{self, Write};

/// What kind of kernel (or host code) a region becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RegionKind {
    /// Elementwise chain over one iteration space, with broadcasting inputs.
    Pointwise,
    /// Reductions over one (rows x cols) space with pointwise producers and consumers;
    /// includes softmax-like ops and normalizations.
    Reduction,
    /// A matrix product with a pointwise epilogue.
    Contraction,
    /// A pooling window with a pointwise epilogue.
    Window,
    /// Called through PyTorch's library (cuDNN convolutions, attention, einsum).
    Library,
    /// Zero-cost views (reshape, permute, slices) done on the host.
    View,
    /// No template yet: computed with PyTorch, and reported as such.
    Fallback,
}

impl RegionKind {
    pub fn name(self) -> &'static str {
        match self {
            RegionKind::Pointwise => "pointwise",
            RegionKind::Reduction => "reduction",
            RegionKind::Contraction => "contraction",
            RegionKind::Window => "window",
            RegionKind::Library => "library",
            RegionKind::View => "view",
            RegionKind::Fallback => "fallback",
        }
    }

    /// Whether the region runs as a generated Triton kernel.
    pub fn is_kernel(self) -> bool {
        matches!(
            self,
            RegionKind::Pointwise
                | RegionKind::Reduction
                | RegionKind::Contraction
                | RegionKind::Window
        )
    }
}

/// A fusable subgraph: nodes in program order, the values it reads and the values it
/// must write (used outside, or graph outputs), and the spaces its kernel iterates over.
/// Backends read the spaces from here; they never recompute them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub kind: RegionKind,
    /// Nodes in program order. Scalar constants used by several regions appear in each.
    pub nodes: Vec<NodeId>,
    pub inputs: Vec<ValueId>,
    pub outputs: Vec<ValueId>,
    /// The iteration space: the shape the region writes (pointwise), the reduction
    /// domain (reduction), the main op's result (contraction, window), the op's result
    /// (library, view and fallback regions).
    pub iteration: Shape,
    /// Reduction regions: the space their reductions share (the domain with its reduced
    /// dims); `None` for every other kind.
    pub reduction: Option<ReduceSpace>,
}

/// A partition of a graph's nodes into regions, in a topological order of regions
/// ([`FusionPlan::verify`] checks it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FusionPlan {
    pub regions: Vec<Region>,
    /// Human-readable decisions: what merged, what was rejected and why.
    pub log: Vec<String>,
}

impl FusionPlan {
    /// A normalized listing of the regions (node positions and op names), for snapshots
    /// and `--print-ir-after fuse`.
    pub fn display(&self, g: &Graph) -> String {
        let pos: std::collections::HashMap<NodeId, usize> =
            g.body().iter().enumerate().map(|(i, &n)| (n, i)).collect();
        let name_of = |v: ValueId| match g.producer(v) {
            Some(n) => format!(
                "%{}",
                pos.get(&n).map(|p| p.to_string()).unwrap_or("?".into())
            ),
            None => format!("%{}", g.value(v).name.clone().unwrap_or_default()),
        };
        let mut s = String::new();
        for (i, r) in self.regions.iter().enumerate() {
            let ops: Vec<String> = r
                .nodes
                .iter()
                .map(|n| {
                    format!(
                        "#{} {}",
                        pos.get(n).copied().unwrap_or(usize::MAX),
                        g.node(*n).op.name()
                    )
                })
                .collect();
            let ins: Vec<String> = r.inputs.iter().map(|&v| name_of(v)).collect();
            let outs: Vec<String> = r.outputs.iter().map(|&v| name_of(v)).collect();
            writeln!(
                s,
                "region {i} {}: [{}] reads ({}) writes ({})",
                r.kind.name(),
                ops.join(", "),
                ins.join(", "),
                outs.join(", ")
            )
            .unwrap();
        }
        s
    }
}

impl fmt::Display for RegionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
