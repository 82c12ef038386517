//! A training-mode batch norm applied in a later pooling's prologue: when a reduction
//! region's one output is a batch norm's normalized result (with pointwise ops before and
//! after it) that only a window region reads, the reduction region's kernel writes only the
//! batch statistics (which it writes anyway, for the running statistics) and the window
//! kernel computes the normalized value at each tap from the norm's own inputs and those
//! statistics. The normalized tensor is then neither written nor read back: a DenseNet
//! transition, a ResNet stem, a convolution, batch norm and pooling chain move two passes
//! over the activations fewer.
//!
//! The link is made only when both kernels generate with it (their templates' answer);
//! otherwise both regions are generated as before. Derived in `partners.rs` with the other
//! links, so re-derived after every edit.

use super::implementation::Implementation;
use super::region_plan::NormApply;
use super::LoweringPlan;
use crate::region::{region_kernel, Links};
use drtc_ir::{Attr, Graph, NodeId, Op};
use drtc_passes::fuse::{is_inlined_constant, reduce_space, FusionPlan, RegionKind};

impl LoweringPlan {
    /// Links every reduction region whose batch norm a later window region can apply.
    pub(super) fn link_norm_applies(&mut self, g: &Graph, fusion: &FusionPlan) {
        for i in 0..self.regions.len() {
            let Some((j, apply)) = self.candidate(g, fusion, i) else {
                continue;
            };
            self.regions[i].applied_in = Some(j);
            self.regions[j].applies = Some(apply);
            if !self.generates(g, fusion, i) || !self.generates(g, fusion, j) {
                self.regions[i].applied_in = None;
                self.regions[j].applies = None;
            }
        }
    }

    /// Whether region `i`'s kernel generates as the plan now says.
    fn generates(&self, g: &Graph, fusion: &FusionPlan, i: usize) -> bool {
        let r = &fusion.regions[i];
        let name = format!("drtc_k{i}_{}", r.kind);
        region_kernel(g, r, i, &name, self, &Links::default())
            .is_ok_and(|code| self.regions[i].applied_in.is_none() || code.stats.len() == 1)
    }

    /// The window region that could apply region `i`'s batch norm, and the link: region
    /// `i` is a template reduction region whose one reduction is a training-mode batch norm,
    /// every other op over the norm's domain, whose one output (not a graph output) only
    /// window region `j`'s pooling or prologue reads.
    fn candidate(&self, g: &Graph, fusion: &FusionPlan, i: usize) -> Option<(usize, NormApply)> {
        let (r, rp) = (&fusion.regions[i], &self.regions[i]);
        let space = r.reduction.as_ref()?;
        let plain = r.kind == RegionKind::Reduction
            && rp.implementation == Implementation::Template
            && rp.moments_from.is_none()
            && rp.applies.is_none();
        let [y] = r.outputs[..] else {
            return None;
        };
        if !plain || g.outputs().contains(&y) || g.ty(y).shape != space.domain {
            return None;
        }
        let ops: Vec<NodeId> = r
            .nodes
            .iter()
            .copied()
            .filter(|&n| !is_inlined_constant(g, n))
            .collect();
        let reductions: Vec<NodeId> = ops
            .iter()
            .copied()
            .filter(|&n| reduce_space(g, n).is_some())
            .collect();
        let [norm] = reductions[..] else {
            return None;
        };
        let bn = g.node(norm);
        let training = bn.attrs.get("training").and_then(Attr::as_bool) == Some(true);
        let over_domain = ops
            .iter()
            .all(|&n| g.ty(g.node(n).outputs[0]).shape == space.domain);
        if bn.op != Op::BatchNorm || !training || !over_domain {
            return None;
        }
        let users = g.users(y);
        let mut readers: Vec<usize> = users
            .iter()
            .filter_map(|u| fusion.regions.iter().position(|r| r.nodes.contains(u)))
            .collect();
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
