//! How one region is computed: a Triton template, a GEMM implementation, a convolution
//! implementation, or PyTorch on the host; with the precision and the reason where there
//! was a choice.

use crate::triton::{AttentionImpl, ConvImpl, GemmImpl, GemmShape};

/// How one region is computed.
#[derive(Clone, Debug, PartialEq)]
pub enum Implementation {
    /// The Triton template of the region's kind (pointwise, reduction, window), in fp32
    /// arithmetic; also a contraction region whose product the template cannot take (its
    /// emission then reports the gap).
    Template,
    /// A contraction region: the template at a dot precision, the library call or PyTorch.
    Gemm(GemmPlan),
    /// A convolution region the template covers: the library call or the template.
    Conv(ConvPlan),
    /// An attention region the template covers: the library call or the template.
    Attention(AttentionPlan),
    /// Computed on the host with PyTorch: library, view and fallback regions.
    Host,
}

/// A GEMM region's implementation, its shape, the error model's prediction and why.
#[derive(Clone, Debug, PartialEq)]
pub struct GemmPlan {
    pub imp: GemmImpl,
    pub shape: GemmShape,
    /// The error model's prediction for `imp` (`triton/precision.rs`).
    pub predicted_error: f64,
    pub reason: String,
}

/// A convolution region's implementation (`conv_choice.rs`) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvPlan {
    pub imp: ConvImpl,
    pub reason: String,
    /// The pointwise region the template computes with the convolution (`conv_partner`):
    /// used when `imp` is the template.
    pub partner: Option<usize>,
}

/// An attention region's implementation (`attention_choice.rs`) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttentionPlan {
    pub imp: AttentionImpl,
    pub reason: String,
}

impl ConvPlan {
    /// The region whose place the template's kernel takes: the partner, else the
    /// convolution's own; `None` for the library call.
    pub fn emitted_at(&self, index: usize) -> Option<usize> {
        match self.imp {
            ConvImpl::Triton { .. } => Some(self.partner.unwrap_or(index)),
            ConvImpl::Library => None,
        }
    }
}

impl Implementation {
    /// Short text: `template`, `gemm triton:tf32x3`, `conv:library`, `host`.
    pub fn describe(&self) -> String {
        match self {
            Implementation::Template => "template".into(),
            Implementation::Gemm(p) => format!("gemm {}", p.imp.describe()),
            Implementation::Conv(p) => p.imp.describe(),
            Implementation::Attention(p) => p.imp.describe(),
            Implementation::Host => "host".into(),
        }
    }

    /// The GEMM plan of a contraction region.
    pub fn gemm(&self) -> Option<&GemmPlan> {
        match self {
            Implementation::Gemm(p) => Some(p),
            Implementation::Template
            | Implementation::Conv(_)
            | Implementation::Attention(_)
            | Implementation::Host => None,
        }
    }

    /// The convolution plan of a convolution region.
    pub fn conv(&self) -> Option<&ConvPlan> {
        match self {
            Implementation::Conv(p) => Some(p),
            Implementation::Template
            | Implementation::Gemm(_)
            | Implementation::Attention(_)
            | Implementation::Host => None,
        }
    }

    /// The attention plan of an attention region.
    pub fn attention(&self) -> Option<&AttentionPlan> {
        match self {
            Implementation::Attention(p) => Some(p),
            Implementation::Template
            | Implementation::Gemm(_)
            | Implementation::Conv(_)
            | Implementation::Host => None,
        }
    }
}
