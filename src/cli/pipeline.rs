//! A pass pipeline (`--passes`) run over a loaded program before a command's work.

use super::error::{DriverError, DriverResult};
use drtc::driver::decompose::run_pipeline;

/// Runs `pipeline` (if any) over a loaded program's graph.
pub fn prepare(graph: &mut drtc_ir::Graph, pipeline: Option<&str>) -> DriverResult<()> {
    run_pipeline(graph, pipeline).map_err(DriverError::Reported)
}
