//! Partners: regions whose code depends on another region's implementation. A
//! convolution run by the template computes its pointwise consumer region in the same
//! kernel (`conv_choice.rs`); a GEMM run by the template writes tile moments that a later
//! batch norm's region merges (`gemm_moments.rs`). Derived from the implementations,
//! configurations and layout, so re-derived after every edit.

use super::LoweringPlan;
use crate::gemm_moments::find_link;
use drtc_ir::{Graph, ValueId};
use drtc_passes::fuse::FusionPlan;

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

impl LoweringPlan {
    /// Derives every region's partners from the implementations, configurations and
    /// layout.
    pub(super) fn link(&mut self, g: &Graph, fusion: &FusionPlan) {
        for r in &mut self.regions {
            r.epilogue_of = None;
            r.moments = None;
            r.moments_from = None;
        }
        let fused: Vec<(usize, usize)> = self
            .regions
            .iter()
            .filter_map(|r| {
                let conv = r.implementation.conv()?;
                let at = conv.emitted_at(r.index)?;
                (at != r.index).then_some((at, r.index))
            })
            .collect();
        for (at, conv) in fused {
            self.regions[at].epilogue_of = Some(conv);
        }
        let links: Vec<(usize, MomentsLink)> = (0..self.regions.len())
            .filter_map(|i| find_link(g, fusion, self, i).map(|l| (i, l)))
            .collect();
        for (i, link) in links {
            self.regions[link.consumer].moments_from = Some(i);
            self.regions[i].moments = Some(link);
        }
    }
}
