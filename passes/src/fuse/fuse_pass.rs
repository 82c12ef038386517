//! `fuse{max-ops=N}` as an analysis: plans the regions and reports them (and every merge
//! or rejection) in the decision log; it cannot change the graph. The compiler driver
//! calls [`plan_fusion`](super::plan_fusion) directly to use the plan.

use super::{plan_fusion, FuseOptions};
use crate::options::{OptionDef, OptionKind, OptionValue, PassOptions};
use crate::{Analysis, AnalysisInfo, PassContext, PassError};
use drtc_ir::Graph;

/// Registry entry.
pub const INFO: AnalysisInfo = AnalysisInfo {
    name: "fuse",
    summary: "partition the graph into fusable regions (reported; the graph is unchanged)",
    options: &[OptionDef {
        name: "max-ops",
        kind: OptionKind::Count,
        default: OptionValue::Count(64),
        help: "most ops in one region",
    }],
    build: FuseAnalysis::build,
};

/// The fusion planner as an analysis.
#[derive(Clone, Debug)]
pub struct FuseAnalysis {
    pub options: FuseOptions,
}

impl FuseAnalysis {
    fn build(o: &PassOptions) -> Result<Box<dyn Analysis>, String> {
        let max_ops = o.count("max-ops")?;
        if max_ops == 0 {
            return Err("max-ops must be at least 1".into());
        }
        Ok(Box::new(FuseAnalysis {
            options: FuseOptions {
                max_ops: max_ops as usize,
            },
        }))
    }
}

impl Analysis for FuseAnalysis {
    fn name(&self) -> &'static str {
        "fuse"
    }

    fn run(&self, graph: &Graph, cx: &mut PassContext) -> Result<(), PassError> {
        let plan = plan_fusion(graph, &self.options);
        plan.verify(graph)?;
        for line in &plan.log {
            cx.log(line.clone());
        }
        for line in plan.display(graph).lines() {
            cx.log(line.to_string());
        }
        Ok(())
    }
}
