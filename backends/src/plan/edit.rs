//! Edits of a lowering plan: what the search and the retry ladder change ("region 3:
//! library call", "every convolution in NCHW"). Each edit says why, keeps the rest of the
//! plan, and re-derives what depends on it (the layout's regions, the partners).

use super::{GemmPlan, Implementation, LoweringPlan};
use crate::graphs::GraphMode;
use crate::layout::{plan_layout, LayoutChoice};
use crate::triton::{predicted_error, AttentionImpl, ConvImpl, GemmImpl, LaunchConfig};
use drtc_ir::Graph;
use drtc_passes::fuse::FusionPlan;
use thiserror::Error;

/// An edit that does not fit the plan.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PlanError {
    #[error("the plan has no region {0}")]
    NoRegion(usize),
    #[error("region {0} is not a GEMM region")]
    NotGemm(usize),
    #[error("region {0} is not a convolution the template covers")]
    NotConv(usize),
    #[error("region {0} is not an attention the template covers")]
    NotAttention(usize),
}

impl LoweringPlan {
    /// Region `i` computed by `imp` (`why`: the reason reported).
    pub fn set_gemm(
        &mut self,
        (g, fusion): (&Graph, &FusionPlan),
        i: usize,
        imp: GemmImpl,
        why: &str,
    ) -> Result<(), PlanError> {
        let precision = self.options.precision;
        let r = self.regions.get_mut(i).ok_or(PlanError::NoRegion(i))?;
        let Implementation::Gemm(p) = &r.implementation else {
            return Err(PlanError::NotGemm(i));
        };
        r.implementation = Implementation::Gemm(GemmPlan {
            imp,
            predicted_error: predicted_error(imp, p.shape.k, precision),
            reason: why.to_string(),
            shape: p.shape.clone(),
        });
        self.link(g, fusion);
        Ok(())
    }

    /// Convolution region `i` computed by `imp` (`why`: the reason reported).
    pub fn set_conv(
        &mut self,
        (g, fusion): (&Graph, &FusionPlan),
        i: usize,
        imp: ConvImpl,
        why: &str,
    ) -> Result<(), PlanError> {
        let r = self.regions.get_mut(i).ok_or(PlanError::NoRegion(i))?;
        let Implementation::Conv(p) = &mut r.implementation else {
            return Err(PlanError::NotConv(i));
        };
        p.imp = imp;
        p.reason = why.to_string();
        self.link(g, fusion);
        Ok(())
    }

    /// Attention region `i` computed by `imp` (`why`: the reason reported).
    pub fn set_attention(
        &mut self,
        i: usize,
        imp: AttentionImpl,
        why: &str,
    ) -> Result<(), PlanError> {
        let r = self.regions.get_mut(i).ok_or(PlanError::NoRegion(i))?;
        let Implementation::Attention(p) = &mut r.implementation else {
            return Err(PlanError::NotAttention(i));
        };
        p.imp = imp;
        p.reason = why.to_string();
        Ok(())
    }

    /// Region `i` launched with `config` instead of the template's heuristic.
    pub fn set_config(
        &mut self,
        (g, fusion): (&Graph, &FusionPlan),
        i: usize,
        config: LaunchConfig,
    ) -> Result<(), PlanError> {
        let r = self.regions.get_mut(i).ok_or(PlanError::NoRegion(i))?;
        r.config = Some(config);
        self.link(g, fusion);
        Ok(())
    }

    /// Every convolution's layout decided by `choice` (the layout retry: `Nchw`).
    pub fn set_layout(&mut self, (g, fusion): (&Graph, &FusionPlan), choice: LayoutChoice) {
        self.options.layout = choice;
        self.layout = plan_layout(g, fusion, choice);
        for r in &mut self.regions {
            r.channels_last = self.layout.regions.contains(&r.index);
        }
        self.link(g, fusion);
    }

    /// Whether the entry point captures CUDA graphs (the graph race's eager side: `Off`).
    pub fn set_graphs(&mut self, mode: GraphMode) {
        self.options.graphs = mode;
    }
}
