//! What code generation does with one region: one entry of the lowering plan.

use super::implementation::Implementation;
use crate::triton::LaunchConfig;
use drtc_ir::{NodeId, ValueId};
use drtc_passes::fuse::RegionKind;

/// What code generation does with one region.
#[derive(Clone, Debug, PartialEq)]
pub struct RegionPlan {
    pub index: usize,
    pub kind: RegionKind,
    /// The region's ops in program order (for reading the plan).
    pub ops: Vec<&'static str>,
    pub implementation: Implementation,
    /// A launch configuration chosen by the search; `None`: the template's heuristic.
    pub config: Option<LaunchConfig>,
    /// The region's kernel walks (and writes) channels-last order.
    pub channels_last: bool,
    /// A pointwise region whose place the template kernel of this convolution region takes
    /// (the convolution with this region as its epilogue).
    pub epilogue_of: Option<usize>,
    /// A contraction region run by the template: the tile moments its epilogue writes for
    /// a later reduction region (`gemm_moments.rs`).
    pub moments: Option<MomentsLink>,
    /// A reduction region: the contraction region whose epilogue writes its moments.
    pub moments_from: Option<usize>,
    /// A reduction region (a norm) whose normalized output a later window region computes
    /// at each tap (`norm_apply.rs`): this region's kernel writes only the norm's
    /// statistics.
    pub applied_in: Option<usize>,
    /// A window region: the norm it applies in its prologue, from that region's inputs
    /// and statistics.
    pub applies: Option<NormApply>,
}

/// A norm's normalization, computed in a later window region's prologue instead of being
/// written by its own region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NormApply {
    /// The reduction region that computes the statistics.
    pub region: usize,
    /// Its nodes, program order: the window kernel computes them again at each tap, the
    /// norm from the statistics.
    pub nodes: Vec<NodeId>,
    /// The norm.
    pub norm: NodeId,
}

/// A contraction region's tile moments of one output, merged by a later reduction region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MomentsLink {
    /// The reduction region that takes them.
    pub consumer: usize,
    /// The contraction's output whose column moments are written.
    pub value: ValueId,
    /// Row chunks (tiles along M) and rows per chunk (the template's BLOCK_M).
    pub chunks: u64,
    pub chunk: u64,
}
