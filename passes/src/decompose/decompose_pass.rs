//! `decompose{max-ops=N}` as an analysis: reports the subproblems (and every merge) in the
//! decision log; the graph is unchanged. `drtc decompose` calls
//! [`decompose`](super::decompose) directly.

use super::{decompose, value_name};
use crate::options::{OptionDef, OptionKind, OptionValue, PassOptions};
use crate::{Analysis, AnalysisInfo, PassContext, PassError};
use drtc_ir::{Graph, NodeId, ValueId};
use std::collections::HashMap;

/// Registry entry.
pub const INFO: AnalysisInfo = AnalysisInfo {
    name: "decompose",
    summary: "split into subproblems of at most max-ops ops along fusion-legal cuts (reported)",
    options: &[OptionDef {
        name: "max-ops",
        kind: OptionKind::Count,
        default: OptionValue::Count(8),
        help: "most ops in one subproblem (scalar constants not counted)",
    }],
    build: DecomposeAnalysis::build,
};

/// Decomposition as an analysis.
#[derive(Clone, Copy, Debug)]
pub struct DecomposeAnalysis {
    pub max_ops: usize,
}

impl DecomposeAnalysis {
    fn build(options: &PassOptions) -> Result<Box<dyn Analysis>, String> {
        let n = options.count("max-ops")?;
        if n == 0 {
            return Err("max-ops must be at least 1".into());
        }
        Ok(Box::new(DecomposeAnalysis {
            max_ops: n as usize,
        }))
    }
}

impl Analysis for DecomposeAnalysis {
    fn name(&self) -> &'static str {
        "decompose"
    }

    fn run(&self, graph: &Graph, cx: &mut PassContext) -> Result<(), PassError> {
        let d = decompose(graph, self.max_ops);
        for line in &d.log {
            cx.log(line.clone());
        }
        let pos: HashMap<NodeId, usize> = graph
            .body()
            .iter()
            .enumerate()
            .map(|(i, &n)| (n, i))
            .collect();
        for (i, sp) in d.subproblems.iter().enumerate() {
            let ops: Vec<String> = sp
                .nodes
                .iter()
                .map(|n| format!("#{} {}", pos[n], graph.node(*n).op))
                .collect();
            let names = |vs: &[ValueId]| {
                vs.iter()
                    .map(|&v| value_name(graph, v))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            cx.log(format!(
                "subproblem {i} ({} ops): [{}] reads ({}) writes ({})",
                sp.op_count(graph),
                ops.join(", "),
                names(&sp.inputs),
                names(&sp.outputs)
            ));
        }
        Ok(())
    }
}
