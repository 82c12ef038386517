//! The lowering plan: what code generation decided for each region of a fusion plan, as
//! data, between the fusion plan and the emitted module. Computed once from the graph,
//! the fusion plan and the options (`LoweringPlan::new`): per region its implementation
//! (a Triton template, a GEMM's template/library call/PyTorch with its precision and
//! reason, a convolution's library call or template), its launch configuration, its
//! layout and its partners (a convolution's fused pointwise consumer, a GEMM's moments
//! for a later batch norm, a norm applied in a later pooling's prologue); for the module its layout decisions, the operands of
//! concatenations written in place, the concatenations that are views of later ones, and
//! options.
//!
//! The stitcher (`stitch.rs`, `region.rs`) only reads it. The search and the retry ladder
//! edit it (`edit.rs`: "region 3: library call") and emit again; each edit re-derives
//! what depends on it (the layout, the partners). It prints as text (`text.rs`, the
//! filetest form snapshotted by `tests/plan.rs`) and as JSON in the compile report.

mod cat_prefix;
mod concat;
mod edit;
mod gemm_choice;
mod implementation;
mod norm_apply;
mod partners;
mod region_plan;
mod text;
mod view_chain;

pub use cat_prefix::CatPrefix;
pub(crate) use concat::operand_slices;
pub use concat::Placement;
pub use edit::PlanError;
pub use implementation::{AttentionPlan, ConvPlan, GemmPlan, Implementation};
pub use region_plan::{MomentsLink, NormApply, RegionPlan};
pub use view_chain::ViewWrite;

use crate::attention_choice::region_attention;
use crate::conv_choice::{conv_partner, region_conv};
use crate::layout::{plan_layout, LayoutPlan};
use crate::options::CodegenOptions;
use crate::triton::{AttentionImpl, ConvImpl, StoreMap};
use drtc_ir::{Graph, ValueId};
use drtc_passes::fuse::{FusionPlan, RegionKind};
use gemm_choice::gemm_choice;

/// What code generation does with every region of one fusion plan.
#[derive(Clone, Debug)]
pub struct LoweringPlan {
    /// The module's options (precision policy, interpreter, guards, layout rule, graphs).
    pub options: CodegenOptions,
    /// Which convolutions, values and regions are channels-last (`layout.rs`).
    pub layout: LayoutPlan,
    /// One entry per region of the fusion plan, in its order.
    pub regions: Vec<RegionPlan>,
    /// Operands of concatenations that their producer's kernel writes into their slice of
    /// the result (`concat.rs`).
    pub placements: Vec<Placement>,
    /// Concatenations computed as the first slice of a later one's result
    /// (`cat_prefix.rs`).
    pub cat_prefixes: Vec<CatPrefix>,
    /// Kernel outputs stored into the result of the chain of views that reads them
    /// (`view_chain.rs`).
    pub view_writes: Vec<ViewWrite>,
}

impl LoweringPlan {
    /// The plan of `fusion` under `opts`: each region's implementation by the policy, the
    /// heuristic launch configurations, the layout rule's decisions, and the partners.
    pub fn new(g: &Graph, fusion: &FusionPlan, opts: &CodegenOptions) -> LoweringPlan {
        let layout = plan_layout(g, fusion, opts.layout);
        let regions = fusion
            .regions
            .iter()
            .enumerate()
            .map(|(i, r)| RegionPlan {
                index: i,
                kind: r.kind,
                ops: r.nodes.iter().map(|&n| g.node(n).op.name()).collect(),
                implementation: implementation(g, fusion, i, opts),
                config: None,
                channels_last: layout.regions.contains(&i),
                epilogue_of: None,
                moments: None,
                moments_from: None,
                applied_in: None,
                applies: None,
            })
            .collect();
        let mut plan = LoweringPlan {
            options: opts.clone(),
            layout,
            regions,
            placements: vec![],
            cat_prefixes: vec![],
            view_writes: vec![],
        };
        plan.link(g, fusion);
        plan
    }

    /// The indices of the GEMM regions.
    pub fn gemm_regions(&self) -> Vec<usize> {
        self.regions
            .iter()
            .filter(|r| r.implementation.gemm().is_some())
            .map(|r| r.index)
            .collect()
    }
}

/// The policy's implementation of region `i`, before any search.
fn implementation(
    g: &Graph,
    fusion: &FusionPlan,
    i: usize,
    opts: &CodegenOptions,
) -> Implementation {
    let r = &fusion.regions[i];
    match r.kind {
        RegionKind::Contraction => match gemm_choice(g, r, opts) {
            Some(p) => Implementation::Gemm(p),
            None => Implementation::Template,
        },
        RegionKind::Library if region_conv(g, fusion, i).is_some() => {
            Implementation::Conv(ConvPlan {
                imp: ConvImpl::Library,
                reason: "the library call (default)".into(),
                partner: conv_partner(g, fusion, i),
            })
        }
        RegionKind::Library if region_attention(g, fusion, i).is_some() => {
            Implementation::Attention(AttentionPlan {
                imp: AttentionImpl::Library,
                reason: "the library call (default)".into(),
            })
        }
        RegionKind::Library | RegionKind::View | RegionKind::Fallback => Implementation::Host,
        RegionKind::Pointwise | RegionKind::Reduction | RegionKind::Window => {
            Implementation::Template
        }
    }
}

impl LoweringPlan {
    /// The placement of `v`, when it is written into its slice of a concatenation.
    pub fn placement_of(&self, v: ValueId) -> Option<&Placement> {
        self.placements.iter().find(|p| p.value == v)
    }

    /// Where region `i`'s kernel writes each of `outputs` (`triton::Placements`): the strides of
    /// the concatenation's result for the placed ones, the chain of views for a view write
    /// (`view_chain.rs`).
    pub(crate) fn region_placements(
        &self,
        g: &Graph,
        i: usize,
        outputs: &[ValueId],
    ) -> Vec<Option<StoreMap>> {
        outputs
            .iter()
            .map(|&v| {
                if let Some(w) = self
                    .view_writes
                    .iter()
                    .find(|w| w.value == v && w.producer == i)
                {
                    return Some(StoreMap::Views(w.steps.clone()));
                }
                let p = self.placement_of(v).filter(|p| p.producer == i)?;
                Some(p.store_map(&g.ty(p.cat).shape))
            })
            .collect()
    }
}
