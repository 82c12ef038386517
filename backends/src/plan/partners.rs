//! Partners: regions whose code depends on another region's implementation. A
//! convolution run by the template computes its pointwise consumer region in the same
//! kernel (`conv_choice.rs`); a GEMM or a lone convolution run by the template writes tile
//! moments that a later batch norm's region merges (`gemm_moments.rs` emits the link); a
//! norm's region writes only its statistics when a later pooling applies it
//! (`norm_apply.rs`). Derived
//! from the implementations, configurations and layout, so re-derived after every edit.

use super::region_plan::MomentsLink;
use super::LoweringPlan;
use crate::conv_choice::region_conv;
use crate::layout::channels_last_order;
use crate::triton::{
    contraction_config, conv_config, reduction_kernel, ConvImpl, GemmImpl, GivenMoments,
    PhaseLaunch,
};
use drtc_ir::{Graph, NodeId, ValueId};
use drtc_passes::fuse::{FusionPlan, RegionKind};

impl LoweringPlan {
    /// Derives every region's partners from the implementations, configurations and
    /// layout.
    pub(super) fn link(&mut self, g: &Graph, fusion: &FusionPlan) {
        for r in &mut self.regions {
            r.epilogue_of = None;
            r.moments = None;
            r.moments_from = None;
            r.applied_in = None;
            r.applies = None;
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
            .filter_map(|i| self.find_link(g, fusion, i).map(|l| (i, l)))
            .collect();
        for (i, link) in links {
            self.regions[link.consumer].moments_from = Some(i);
            self.regions[i].moments = Some(link);
        }
        self.link_norm_applies(g, fusion);
        // after the moment links: a moments consumer writes its outputs contiguously
        self.cat_prefixes = super::cat_prefix::cat_prefixes(g, fusion, &self.layout);
        let views: Vec<NodeId> = self.cat_prefixes.iter().map(|p| p.node).collect();
        self.placements =
            super::concat::placements(g, fusion, (&self.regions, &self.layout), &views);
        self.view_writes = super::view_chain::view_writes(
            g,
            fusion,
            (&self.regions, &self.layout),
            &self.placements,
        );
    }

    /// The link from contraction region `i` to the first later reduction region that reads
    /// its output and takes the tile moments, if any. Whether the consumer takes them is
    /// its template's answer (`reduction::takes_moments`), so the consumer's kernel is
    /// generated here with the partials offered.
    fn find_link(&self, g: &Graph, fusion: &FusionPlan, i: usize) -> Option<MomentsLink> {
        let r = &fusion.regions[i];
        if r.kind == RegionKind::Library {
            return self.conv_link(g, fusion, i);
        }
        if r.kind != RegionKind::Contraction {
            return None;
        }
        let gemm = self.regions[i].implementation.gemm()?;
        let GemmImpl::Triton { dot } = gemm.imp else {
            return None;
        };
        let shape = &gemm.shape;
        if shape.batch != 1 {
            return None;
        }
        let config = self.regions[i].config.clone().unwrap_or_else(|| {
            contraction_config(shape.m, shape.n, shape.k, shape.batch, shape.half, dot)
        });
        let bm = config.block("BLOCK_M");
        let chunks = shape.m.div_ceil(bm);
        let plain = |v: &ValueId| {
            let t = g.ty(*v);
            t.rank() == 2 && t.shape == [shape.m as i64, shape.n as i64] && t.dtype.is_float()
        };
        for &v in r.outputs.iter().filter(|v| plain(v)) {
            let Some(j) = first_reduction_reader(g, fusion, i, v) else {
                continue;
            };
            let link = MomentsLink {
                consumer: j,
                value: v,
                chunks,
                chunk: bm,
            };
            if self.takes_moments(g, fusion, &link) {
                return Some(link);
            }
        }
        None
    }

    /// The link from convolution region `i`, run alone by the template (no pointwise
    /// partner: a batch norm reads its output), to the first later reduction region that
    /// reads its output and takes the tile moments: per channel, one chunk per tile of
    /// output pixels.
    fn conv_link(&self, g: &Graph, fusion: &FusionPlan, i: usize) -> Option<MomentsLink> {
        let conv = self.regions[i].implementation.conv()?;
        let ConvImpl::Triton { phases, .. } = conv.imp else {
            return None;
        };
        let shape = region_conv(g, fusion, i)?;
        if shape.transposed || phases != PhaseLaunch::One || conv.emitted_at(i) != Some(i) {
            return None;
        }
        let v = g.node(shape.node).outputs[0];
        if !g.ty(v).dtype.is_float() {
            return None;
        }
        let bm = conv_config(&shape).block("BLOCK_M");
        let j = first_reduction_reader(g, fusion, i, v)?;
        let link = MomentsLink {
            consumer: j,
            value: v,
            chunks: shape.m.div_ceil(bm),
            chunk: bm,
        };
        self.takes_moments(g, fusion, &link).then_some(link)
    }

    /// Whether the consumer of `link` (a reduction region) takes the partials: its kernel
    /// generated as `region.rs` generates it, with them offered.
    fn takes_moments(&self, g: &Graph, fusion: &FusionPlan, link: &MomentsLink) -> bool {
        let (j, rp) = (link.consumer, &self.regions[link.consumer]);
        let r = &fusion.regions[j];
        let Some(space) = r.reduction.as_ref() else {
            return false;
        };
        let order = rp
            .channels_last
            .then(|| channels_last_order(space.domain.len()));
        let given = GivenMoments {
            value: link.value,
            chunks: link.chunks,
            chunk: link.chunk,
        };
        reduction_kernel(
            g,
            &format!("drtc_k{j}_{}", r.kind),
            (&r.nodes, &r.outputs),
            space,
            rp.config.clone(),
            order.as_deref(),
            Some(given),
            &[],
        )
        .is_some_and(|code| code.given.is_some())
    }
}

/// The first reduction region after region `i` that reads `v`.
fn first_reduction_reader(g: &Graph, fusion: &FusionPlan, i: usize, v: ValueId) -> Option<usize> {
    (i + 1..fusion.regions.len()).find(|&j| {
        let r = &fusion.regions[j];
        r.kind == RegionKind::Reduction && r.nodes.iter().any(|&n| g.node(n).inputs.contains(&v))
    })
}
