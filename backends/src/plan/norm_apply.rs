//! A norm applied in a later pooling's prologue: when a reduction region's one output is
//! a norm's normalized result (a training-mode batch norm, a group, instance or layer
//! norm, with pointwise ops before and after it) that only a window region reads, the
//! reduction region's kernel writes only the norm's per-row statistics (a batch norm's
//! it writes anyway, for the running statistics) and the window kernel computes the
//! normalized value at each tap from the norm's own inputs and those statistics
//! (`triton/tap_norm.rs`). The normalized tensor is then neither written nor read back,
//! nor read again by the norm's kernel: a DenseNet transition, a ResNet stem, a
//! convolution, norm and pooling chain move three passes over the activations fewer.
//!
//! The link is made only when both kernels generate with it (their templates' answer);
//! otherwise both regions are generated as before. Derived in `partners.rs` with the other
//! links, so re-derived after every edit.

use super::implementation::Implementation;
use super::region_plan::NormApply;
use super::LoweringPlan;
use crate::layout::channels_last_order;
use crate::triton::{reduction_kernel, window_kernel, TapNorm};
use drtc_ir::{Graph, NodeId};
use drtc_passes::fuse::{reduce_space, FusionPlan, RegionKind};

impl LoweringPlan {
    /// Links every reduction region whose norm a later window region can apply.
    pub(super) fn link_norm_applies(&mut self, g: &Graph, fusion: &FusionPlan) {
        for i in 0..self.regions.len() {
            let Some((j, apply)) = self.candidate(g, fusion, i) else {
                continue;
            };
            if self.generates(g, fusion, (i, j), &apply) {
                self.regions[i].applied_in = Some(j);
                self.regions[j].applies = Some(apply);
            }
        }
    }

    /// Whether both kernels generate with the link, as `region.rs` generates them: region
    /// `i` writing only its norm's statistics, window region `j` applying the norm.
    fn generates(
        &self,
        g: &Graph,
        fusion: &FusionPlan,
        (i, j): (usize, usize),
        apply: &NormApply,
    ) -> bool {
        let (ri, rj) = (&fusion.regions[i], &fusion.regions[j]);
        let (pi, pj) = (&self.regions[i], &self.regions[j]);
        let Some(space) = ri.reduction.as_ref() else {
            return false;
        };
        let order = |cl: bool, rank: usize| cl.then(|| channels_last_order(rank));
        let order_i = order(pi.channels_last, space.domain.len());
        let stats = reduction_kernel(
            g,
            &format!("drtc_k{i}_{}", ri.kind),
            (&ri.nodes, &[]),
            space,
            pi.config.clone(),
            order_i.as_deref(),
            None,
            &[],
        )
        .is_some_and(|code| code.stats.len() == 1);
        let tap = TapNorm {
            nodes: &apply.nodes,
            norm: apply.norm,
        };
        let order_j = order(pj.channels_last, rj.iteration.len());
        let name = format!("drtc_k{j}_{}", rj.kind);
        let region = (&rj.nodes[..], &rj.outputs[..]);
        let window = window_kernel(
            g,
            &name,
            region,
            pj.config.clone(),
            order_j.as_deref(),
            Some(tap),
        );
        stats && window.is_some()
    }

    /// The window region that could apply region `i`'s norm, and the link: region `i` is a
    /// template reduction region with one reduction, whose one output (not a graph output,
    /// of the reduction's domain) only window region `j`'s pooling or prologue reads.
    /// Whether that reduction is a norm the window can apply (a batch norm in training mode,
    /// a group, instance or layer norm) over ops it can compute at a tap is the templates'
    /// answer (`generates`).
    fn candidate(&self, g: &Graph, fusion: &FusionPlan, i: usize) -> Option<(usize, NormApply)> {
        let (r, rp) = (&fusion.regions[i], &self.regions[i]);
        let space = r.reduction.as_ref()?;
        let plain = r.kind == RegionKind::Reduction
            && rp.implementation == Implementation::Template
            && rp.moments_from.is_none();
        let [y] = r.outputs[..] else {
            return None;
        };
        if !plain || g.outputs().contains(&y) || g.ty(y).shape != space.domain {
            return None;
        }
        // which norms apply at a tap, over which ops, is the templates' answer (`generates`)
        let reductions: Vec<NodeId> = r
            .nodes
            .iter()
            .copied()
            .filter(|&n| reduce_space(g, n).is_some())
            .collect();
        let [norm] = reductions[..] else {
            return None;
        };
        let users = g.users(y);
        let mut readers: Vec<usize> = users
            .iter()
            .filter_map(|u| fusion.regions.iter().position(|r| r.nodes.contains(u)))
            .collect();
        readers.sort_unstable();
        readers.dedup();
        let [j] = readers[..] else {
            return None;
        };
        let w = &fusion.regions[j];
        if w.kind != RegionKind::Window || j <= i || self.regions[j].applies.is_some() {
            return None;
        }
        // read by the pooling or its prologue only: nothing after the pool reads it
        let pool = w
            .nodes
            .iter()
            .position(|&n| g.node(n).op.kind().pooling().is_some())?;
        if users
            .iter()
            .any(|u| w.nodes.iter().position(|n| n == u).is_none_or(|p| p > pool))
        {
            return None;
        }
        let apply = NormApply {
            region: i,
            nodes: r.nodes.clone(),
            norm,
        };
        Some((j, apply))
    }
}
