//! Library regions a drtc template computes instead, as the lowering plan chose (the
//! search's races): a convolution (`conv_choice.rs`, with its pointwise partner fused) or
//! an attention (`attention_choice.rs`). The stitcher asks, per region, whether a chosen
//! template's kernel is emitted there, and emits it in place of the library call.

use crate::attention_choice::attention_region_kernel;
use crate::conv_choice::conv_region_kernel;
use crate::layout::LayoutPlan;
use crate::plan::{Implementation, LoweringPlan};
use crate::triton::{
    AttentionImpl, ConvImpl, DotPrecision, LaunchConfig, PhaseLaunch, Placements, TileMoments,
    TritonKernel,
};
use drtc_ir::Graph;
use drtc_passes::fuse::FusionPlan;
use std::collections::HashMap;

/// Which template takes over a library region.
#[derive(Clone, Copy, Debug)]
enum Template {
    Conv {
        partner: Option<usize>,
        phases: PhaseLaunch,
    },
    Attention,
}

/// A library region computed by a drtc template.
#[derive(Clone, Debug)]
pub(crate) struct Chosen {
    /// The library region.
    pub source: usize,
    template: Template,
    dot: DotPrecision,
    /// The plan's launch configuration (the search's), for the attention template.
    config: Option<LaunchConfig>,
    /// The plan's reason.
    why: String,
}

impl Chosen {
    /// `conv:triton:tf32x3`.
    pub fn describe(&self) -> String {
        match self.template {
            Template::Conv { phases, .. } => ConvImpl::Triton {
                dot: self.dot,
                phases,
            }
            .describe(),
            Template::Attention => AttentionImpl::Triton { dot: self.dot }.describe(),
        }
    }

    /// The report's line when the kernel is emitted.
    pub fn report(&self) -> String {
        format!("{}: {}", self.describe(), self.why)
    }

    /// The report's line when the template does not cover the region after all.
    pub fn uncovered(&self) -> String {
        let library = match self.template {
            Template::Conv { .. } => ConvImpl::Library.describe(),
            Template::Attention => AttentionImpl::Library.describe(),
        };
        format!(
            "{library} ({} was chosen, but the template does not cover this region)",
            self.describe()
        )
    }

    /// The template's kernel, when it covers the region; `stores`: where the emitting
    /// region's outputs are stored when not in tensors of their own, and the tile moments
    /// a convolution writes for a later batch norm.
    pub fn kernel(
        &self,
        g: &Graph,
        plan: &FusionPlan,
        layout: &LayoutPlan,
        stores: (&Placements, Option<&TileMoments>),
    ) -> Option<TritonKernel> {
        match self.template {
            Template::Conv { partner, phases } => {
                let imp = (self.dot, phases);
                conv_region_kernel(g, plan, self.source, partner, imp, layout, stores)
            }
            Template::Attention => {
                attention_region_kernel(g, plan, self.source, self.dot, self.config.clone())
            }
        }
    }
}

/// The chosen templates by the region that emits each kernel: a convolution's pointwise
/// partner (fused) or the library region itself.
pub(crate) fn chosen_templates(lowering: &LoweringPlan) -> HashMap<usize, Chosen> {
    let mut at = HashMap::new();
    for (i, rp) in lowering.regions.iter().enumerate() {
        let (template, dot, why, emitted) = match &rp.implementation {
            Implementation::Conv(c) => match (c.imp, c.emitted_at(i)) {
                (ConvImpl::Triton { dot, phases }, Some(j)) => (
                    Template::Conv {
                        partner: c.partner,
                        phases,
                    },
                    dot,
                    &c.reason,
                    j,
                ),
                _ => continue,
            },
            Implementation::Attention(a) => match a.imp {
                AttentionImpl::Triton { dot } => (Template::Attention, dot, &a.reason, i),
                AttentionImpl::Library => continue,
            },
            Implementation::Template | Implementation::Gemm(_) | Implementation::Host => continue,
        };
        at.insert(
            emitted,
            Chosen {
                source: i,
                template,
                dot,
                config: rp.config.clone(),
                why: why.clone(),
            },
        );
    }
    at
}
