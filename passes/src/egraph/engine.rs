//! Runs a rule set over a graph: load it into an e-graph, saturate within the budgets,
//! extract the cheapest program, and keep it only if it is strictly cheaper than the input
//! by the cost model. Budgets are named constants; running out of one is a stop reason
//! written to the pass's log, never a panic. The log says which rules fired, how the ops
//! changed and the cost before and after.

use super::convert::{extract, load};
use super::cost::graph_cost;
use super::rule::Rule;
use crate::{Changed, PassContext, PassError};
use drtc_ir::Graph;
use egg::{Runner, StopReason};
use std::collections::BTreeMap;
use std::time::Duration;

/// Most rounds of rule application.
pub const ITERATION_BUDGET: usize = 16;
/// Most e-nodes in the e-graph.
pub const NODE_BUDGET: usize = 20_000;
/// Most time spent saturating.
pub const TIME_BUDGET: Duration = Duration::from_secs(2);

/// What one rewrite run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RewriteSummary {
    /// Applications per rule (only rules that fired).
    pub applied: BTreeMap<String, usize>,
    pub cost_before: u64,
    pub cost_after: u64,
    pub changed: bool,
    pub stop: String,
}

/// Runs `rules` over `graph`, logging to `cx`; `pass` names the pass in errors.
pub fn rewrite_graph(
    pass: &'static str,
    rules: &[Rule],
    graph: &mut Graph,
    cx: &mut PassContext,
) -> Result<RewriteSummary, PassError> {
    let failed = |message: String| PassError::Failed { pass, message };
    let mut summary = RewriteSummary::default();
    let loaded = match load(graph) {
        Ok(l) => l,
        Err(why) => {
            cx.log(format!("skipped: {why}"));
            summary.stop = "skipped".into();
            return Ok(summary);
        }
    };
    let rewrites = rules
        .iter()
        .map(Rule::to_rewrite)
        .collect::<Result<Vec<_>, _>>()
        .map_err(failed)?;
    let runner = Runner::default()
        .with_egraph(loaded.egraph)
        .with_iter_limit(ITERATION_BUDGET)
        .with_node_limit(NODE_BUDGET)
        .with_time_limit(TIME_BUDGET)
        .run(&rewrites);
    for it in &runner.iterations {
        for (name, n) in &it.applied {
            *summary.applied.entry(name.to_string()).or_default() += n;
        }
    }
    summary.stop = match &runner.stop_reason {
        Some(StopReason::Saturated) | None => "saturated".to_string(),
        Some(StopReason::IterationLimit(n)) => format!("iteration budget ({n}) reached"),
        Some(StopReason::NodeLimit(n)) => format!("node budget ({n}) reached"),
        Some(StopReason::TimeLimit(s)) => format!("time budget ({s} s) reached"),
        Some(StopReason::Other(s)) => s.clone(),
    };
    let before = graph_cost(graph);
    summary.cost_before = before.total();
    summary.cost_after = before.total();
    if summary.applied.is_empty() {
        cx.log(format!("no rule applied ({})", summary.stop));
        return Ok(summary);
    }
    for (name, n) in &summary.applied {
        cx.log(format!("rule `{name}` applied {n}x"));
    }
    if !matches!(runner.stop_reason, Some(StopReason::Saturated)) {
        cx.log(format!("stopped: {}", summary.stop));
    }
    let new = extract(&runner.egraph, &loaded.roots, graph).map_err(failed)?;
    let after = graph_cost(&new);
    if after.total() >= before.total() {
        cx.log(format!(
            "kept the input: the cheapest program found costs {after}, the input {before}"
        ));
        return Ok(summary);
    }
    cx.log(format!("ops: {}", op_diff(graph, &new)));
    cx.log(format!("cost {before} -> {after}"));
    summary.cost_after = after.total();
    summary.changed = true;
    *graph = new;
    Ok(summary)
}

/// `-mul x2, +silu` style difference of the op multisets of two graphs.
pub fn op_diff(before: &Graph, after: &Graph) -> String {
    let count = |g: &Graph| {
        let mut m: BTreeMap<&'static str, i64> = BTreeMap::new();
        for &n in g.body() {
            *m.entry(g.node(n).op.name()).or_default() += 1;
        }
        m
    };
    let (b, a) = (count(before), count(after));
    let mut names: Vec<&str> = b.keys().chain(a.keys()).copied().collect();
    names.sort_unstable();
    names.dedup();
    let mut parts = vec![];
    for n in names {
        let d = a.get(n).copied().unwrap_or(0) - b.get(n).copied().unwrap_or(0);
        match d {
            0 => {}
            1 => parts.push(format!("+{n}")),
            -1 => parts.push(format!("-{n}")),
            d if d > 0 => parts.push(format!("+{n} x{d}")),
            d => parts.push(format!("-{n} x{}", -d)),
        }
    }
    if parts.is_empty() {
        "same op counts".into()
    } else {
        parts.join(", ")
    }
}

/// The pass body shared by `canonicalize` and `simplify`.
pub fn run_pass(
    pass: &'static str,
    rules: &[Rule],
    graph: &mut Graph,
    cx: &mut PassContext,
) -> Result<Changed, PassError> {
    Ok(Changed::from_bool(
        rewrite_graph(pass, rules, graph, cx)?.changed,
    ))
}
