//! Decomposition as a library: a program split into subproblems of at most N ops along
//! the `decompose` pass's cuts, each written as a standalone seed program with its
//! provenance (what `drtc decompose` writes one JSON line for, and `drtc.decompose` returns).

use drtc_backends::torch::emit_seed_program;
use drtc_ir::Graph;
use drtc_passes::decompose::{decompose, subproblem_graph, value_name};
use serde_json::json;

/// Runs `pipeline` (if any) over a loaded program's graph, verifying after each pass.
pub fn run_pipeline(graph: &mut Graph, pipeline: Option<&str>) -> Result<(), String> {
    let Some(pipeline) = pipeline else {
        return Ok(());
    };
    let options = drtc_passes::ManagerOptions {
        verify_each: true,
        print_ir_after: vec![],
    };
    let pm = drtc_passes::PassManager::parse(pipeline, options).map_err(|e| match e {
        drtc_passes::PassError::Pipeline(p) => p.render(),
        other => other.to_string(),
    })?;
    pm.run(graph).map_err(|e| e.to_string())?;
    Ok(())
}

/// One record per subproblem of `graph` (at most `max_ops` ops each): `pytorch` (a
/// standalone seed program), `difficulty` (its op count), and provenance: `source`,
/// `source_line`, `subproblem`, `subproblems`, `reads`, `writes`, `ops`, `max_ops`.
pub fn subproblem_records(
    graph: &Graph,
    source: &str,
    source_line: Option<usize>,
    max_ops: usize,
) -> Vec<serde_json::Value> {
    let g = graph;
    let d = decompose(g, max_ops);
    let k = d.subproblems.len();
    d.subproblems
        .iter()
        .enumerate()
        .map(|(i, sp)| {
            let sub = subproblem_graph(g, sp, &format!("subproblem_{i}"));
            let names = |vs: &[drtc_ir::ValueId]| -> Vec<String> {
                vs.iter().map(|&v| value_name(g, v)).collect()
            };
            let ops: Vec<&str> = sp.nodes.iter().map(|&n| g.node(n).op.name()).collect();
            json!({
                "pytorch": emit_seed_program(&sub),
                "difficulty": sp.op_count(g),
                "source": source,
                "source_line": source_line,
                "subproblem": i,
                "subproblems": k,
                "reads": names(&sp.inputs),
                "writes": names(&sp.outputs),
                "ops": ops,
                "max_ops": max_ops,
            })
        })
        .collect()
}
