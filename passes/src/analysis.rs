//! The `Analysis` trait: a computation over a graph that only reports. It reads the graph
//! and logs what it found in the [`PassContext`]; it cannot change the graph, so the pass
//! manager never verifies after it. Fusion planning (`fuse`) and decomposition
//! (`decompose`) are analyses: pipelines may name them (`drtc opt --log-decisions`,
//! filetests) to see their decisions, and the compiler calls their own entry points
//! ([`plan_fusion`](crate::fuse::plan_fusion), [`decompose`](crate::decompose::decompose))
//! to use their results. [`AnalysisInfo`] is what each analysis declares about itself.

use crate::options::{OptionDef, PassOptions};
use crate::{PassContext, PassError};
use drtc_ir::Graph;

/// A report over a graph, named as in pipeline strings.
pub trait Analysis {
    /// The name used in pipeline strings (`fuse`, `decompose`).
    fn name(&self) -> &'static str;

    /// Reads `graph` and logs its findings in `cx`.
    fn run(&self, graph: &Graph, cx: &mut PassContext) -> Result<(), PassError>;
}

/// What an analysis declares about itself: its name, options and constructor. Each
/// analysis has one as `INFO`; the registry lists them apart from the rewrites.
pub struct AnalysisInfo {
    /// The name in pipeline strings.
    pub name: &'static str,
    /// One line: what the analysis reports.
    pub summary: &'static str,
    pub options: &'static [OptionDef],
    /// Builds the analysis from checked options (all declared options present); `Err`
    /// explains a value that is well-typed but unacceptable.
    pub build: fn(&PassOptions) -> Result<Box<dyn Analysis>, String>,
}
