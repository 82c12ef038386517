//! The lowering plan as text (one line per region, what a filetest snapshots) and as JSON
//! (the compile report's `lowering`).

use super::{Implementation, LoweringPlan, RegionPlan};
use crate::triton::{AttentionImpl, ConvImpl, GemmImpl, Precision};
use serde_json::{json, Value};
use std::fmt;

impl RegionPlan {
    /// The implementation, precision and reason in words.
    fn implementation_text(&self) -> String {
        match &self.implementation {
            Implementation::Template => format!("{} template", self.kind),
            Implementation::Gemm(p) => {
                let s = &p.shape;
                format!(
                    "gemm {} [{}x{}x{}, batch {}; predicted error {:.1e}]: {}",
                    p.imp.describe(),
                    s.m,
                    s.n,
                    s.k,
                    s.batch,
                    p.predicted_error,
                    p.reason
                )
            }
            Implementation::Conv(p) => format!("{}: {}", p.imp.describe(), p.reason),
            Implementation::Attention(p) => format!("{}: {}", p.imp.describe(), p.reason),
            Implementation::Host => "pytorch on the host".into(),
        }
    }

    /// Layout, configuration and partners, each when it applies.
    fn notes(&self) -> Vec<String> {
        let mut notes = vec![];
        if let Some(c) = &self.config {
            notes.push(format!("config {}", c.describe()));
        }
        if self.channels_last {
            notes.push("channels-last".into());
        }
        if let Some(j) = self.implementation.conv().and_then(|c| c.partner) {
            notes.push(format!("partner region {j}"));
        }
        if let Some(c) = self.epilogue_of {
            notes.push(format!("computed by convolution region {c}'s template"));
        }
        if let Some(l) = &self.moments {
            notes.push(format!(
                "moments to region {} ({} chunks of {} rows)",
                l.consumer, l.chunks, l.chunk
            ));
        }
        if let Some(i) = self.moments_from {
            notes.push(format!("moments from region {i}"));
        }
        if let Some(j) = self.applied_in {
            notes.push(format!("statistics only: applied in region {j}"));
        }
        if let Some(a) = &self.applies {
            notes.push(format!("applies region {}'s norm at each tap", a.region));
        }
        notes
    }

    /// The arithmetic of the region under `policy`: a dot precision, the library's
    /// matmul precision, fp32 for templates; `None` for host regions.
    fn precision(&self, policy: Precision) -> Option<String> {
        let library = || format!("torch matmul precision {}", policy.torch_matmul_precision());
        match &self.implementation {
            Implementation::Template => Some("fp32".into()),
            Implementation::Gemm(p) => Some(match p.imp {
                GemmImpl::Triton { dot } => dot.name().to_string(),
                GemmImpl::Library | GemmImpl::PaddedLibrary | GemmImpl::PyTorch => library(),
            }),
            Implementation::Conv(p) => Some(match p.imp {
                ConvImpl::Triton { dot, .. } => dot.name().to_string(),
                ConvImpl::Library => "the library's (cuDNN at PyTorch's defaults)".into(),
            }),
            Implementation::Attention(p) => Some(match p.imp {
                AttentionImpl::Triton { dot } => dot.name().to_string(),
                AttentionImpl::Library => "the library's (PyTorch's fused attention)".into(),
            }),
            Implementation::Host => None,
        }
    }

    /// This region as JSON (`policy`: the module's precision policy).
    pub fn json(&self, policy: Precision) -> Value {
        let mut v = json!({
            "index": self.index,
            "kind": self.kind.name(),
            "ops": self.ops,
            "implementation": self.implementation.describe(),
            "config": self.config.as_ref().map(|c| c.describe()),
            "channels_last": self.channels_last,
            "epilogue_of": self.epilogue_of,
            "moments_to": self.moments.as_ref().map(|l| l.consumer),
            "moments_from": self.moments_from,
            "applied_in": self.applied_in,
            "applies": self.applies.as_ref().map(|a| a.region),
            "precision": self.precision(policy),
        });
        match &self.implementation {
            Implementation::Gemm(p) => {
                v["predicted_error"] = json!(p.predicted_error);
                v["reason"] = json!(p.reason);
            }
            Implementation::Conv(p) => {
                v["reason"] = json!(p.reason);
                v["partner"] = json!(p.partner);
            }
            Implementation::Attention(p) => v["reason"] = json!(p.reason),
            Implementation::Template | Implementation::Host => {}
        }
        v
    }
}

impl LoweringPlan {
    /// The plan as JSON: the module's options and one object per region.
    pub fn json(&self) -> Value {
        let o = &self.options;
        json!({
            "precision": o.precision.name(),
            "layout": o.layout.name(),
            "cuda_graphs": o.graphs.name(),
            "interpret": o.interpret,
            "conv_layouts": self.layout.notes,
            "regions": self.regions.iter().map(|r| r.json(o.precision)).collect::<Vec<_>>(),
            "in_place": self.placements.iter().map(|p| json!({
                "producer": p.producer,
                "cat_region": p.cat_region,
                "dim": p.dim,
                "offset": p.offset,
                "channels_last": p.channels_last,
                "skew": p.skew,
            })).collect::<Vec<_>>(),
            "cat_prefixes": self.cat_prefixes.iter().map(|p| json!({
                "cat_region": p.region,
                "whole_region": p.whole_region,
                "dim": p.dim,
                "len": p.len,
                "channels_last": p.channels_last,
            })).collect::<Vec<_>>(),
            "view_writes": self.view_writes.iter().map(|w| json!({
                "producer": w.producer,
                "views": w.nodes.len(),
            })).collect::<Vec<_>>(),
        })
    }
}

impl fmt::Display for LoweringPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = &self.options;
        writeln!(
            f,
            "lowering plan: precision {}, layout {}, cuda graphs {}{}",
            o.precision.name(),
            o.layout.name(),
            o.graphs.name(),
            if o.interpret { ", interpreter" } else { "" }
        )?;
        for r in &self.regions {
            write!(
                f,
                "region {} ({}: {}): {}",
                r.index,
                r.kind,
                r.ops.join(", "),
                r.implementation_text()
            )?;
            for n in r.notes() {
                write!(f, "; {n}")?;
            }
            writeln!(f)?;
        }
        for n in &self.layout.notes {
            writeln!(f, "layout: {n}")?;
        }
        for w in &self.view_writes {
            writeln!(
                f,
                "view write: region {} stores its output through a chain of {} views into the chain's result",
                w.producer,
                w.nodes.len()
            )?;
        }
        for p in &self.cat_prefixes {
            writeln!(
                f,
                "cat prefix: region {}'s cat is the first {} along dim {} of region {}'s result{}",
                p.region,
                p.len,
                p.dim,
                p.whole_region,
                if p.channels_last {
                    " (channels-last)"
                } else {
                    ""
                }
            )?;
        }
        for p in &self.placements {
            writeln!(
                f,
                "in place: region {} writes its operand of region {}'s cat at offset {} of dim {}{}",
                p.producer,
                p.cat_region,
                p.offset,
                p.dim,
                match p.skew {
                    0 => String::new(),
                    s => format!(" (through a view from {s} element(s) before it, aligned)"),
                }
            )?;
        }
        Ok(())
    }
}
