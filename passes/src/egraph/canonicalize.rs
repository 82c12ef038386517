//! `canonicalize`: the algebra and layout rule families (identities, constant folding,
//! clamp and min/max merging, transpose/permute/reshape chains) with egg, so later passes
//! see one spelling of each computation.

use super::engine::run_pass;
use super::rules;
use crate::{Changed, Pass, PassContext, PassError, PassInfo};
use drtc_ir::Graph;

/// Registry entry.
pub const INFO: PassInfo = PassInfo {
    name: "canonicalize",
    summary:
        "e-graph rewrites to normal forms: identities, constant folding, clamps, layout chains",
    options: &[],
    build: |_| Ok(Box::new(Canonicalize)),
};

/// The `canonicalize` pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct Canonicalize;

impl Pass for Canonicalize {
    fn name(&self) -> &'static str {
        "canonicalize"
    }

    fn run(&self, graph: &mut Graph, cx: &mut PassContext) -> Result<Changed, PassError> {
        run_pass("canonicalize", &rules::canonical(), graph, cx)
    }
}
