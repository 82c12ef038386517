//! `fuse{max-ops=N}` as a pass: plans the regions and reports them (and every merge or
//! rejection) in the decision log; the graph itself is left unchanged. The compiler
//! driver calls [`plan_fusion`](super::plan_fusion) directly to use the plan.

use super::{plan_fusion, FuseOptions};
use crate::options::{OptionDef, OptionKind, OptionValue, PassOptions};
use crate::{Changed, Pass, PassContext, PassError, PassInfo};
use drtc_ir::Graph;

/// Registry entry.
pub const INFO: PassInfo = PassInfo {
    name: "fuse",
    summary: "partition the graph into fusable regions (reported; the graph is unchanged)",
    options: &[OptionDef {
        name: "max-ops",
        kind: OptionKind::Count,
        default: OptionValue::Count(64),
        help: "most ops in one region",
    }],
    build: FusePass::build,
};

/// The fusion planner as a pass.
#[derive(Clone, Debug)]
pub struct FusePass {
    pub options: FuseOptions,
}

impl FusePass {
    fn build(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
        let max_ops = o.count("max-ops")?;
        if max_ops == 0 {
            return Err("max-ops must be at least 1".into());
        }
        Ok(Box::new(FusePass {
            options: FuseOptions {
                max_ops: max_ops as usize,
            },
        }))
    }
}

impl Pass for FusePass {
    fn name(&self) -> &'static str {
        "fuse"
    }

    fn run(&self, graph: &mut Graph, cx: &mut PassContext) -> Result<Changed, PassError> {
        let plan = plan_fusion(graph, &self.options);
        for line in &plan.log {
            cx.log(line.clone());
        }
        for line in plan.display(graph).lines() {
            cx.log(line.to_string());
        }
        Ok(Changed::No)
    }
}
