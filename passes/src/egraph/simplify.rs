//! `simplify`: every rule family with egg (algebra, activation recognition, reductions and
//! shape facts, linearity, layout), extracting the cheapest program by the cost model.

use super::engine::run_pass;
use super::rules;
use crate::{Changed, Pass, PassContext, PassError, PassInfo};
use drtc_ir::Graph;

/// Registry entry.
pub const INFO: PassInfo = PassInfo {
    name: "simplify",
    summary: "e-graph rewrites with every rule family, extracting the cheapest program",
    options: &[],
    build: |_| Ok(Box::new(Simplify)),
};

/// The `simplify` pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct Simplify;

impl Pass for Simplify {
    fn name(&self) -> &'static str {
        "simplify"
    }

    fn run(&self, graph: &mut Graph, cx: &mut PassContext) -> Result<Changed, PassError> {
        run_pass("simplify", &rules::all(), graph, cx)
    }
}
