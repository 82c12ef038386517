//! Runs a rule set over a graph: load it into an e-graph, saturate within the budgets,
//! extract the cheapest program, and keep it only if it is strictly cheaper than the input
//! by the cost model. Budgets are named constants; running out of one is a stop reason
//! written to the pass's log, never a panic. The log says which rules fired, how the ops
//! changed and the cost before and after.

use super::convert::{extract, load};
use super::cost::graph_cost;
use super::planned::planned_cost;
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

/// Which cost decides whether the extracted program replaces the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accept {
    /// The planned cost (`planned.rs`: fused regions, rooflines, launches), ties broken by
    /// the per-op cost: what the passes use.
    Planned,
    /// The per-op cost alone (`cost.rs`): for tests of what rules and extraction find,
    /// on programs too small for the planned cost to see a difference.
    PerOp,
}

/// The limits of one saturation run, and its accept test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub iterations: usize,
    pub nodes: usize,
    pub time: Duration,
    pub accept: Accept,
}

impl Budget {
    /// The passes' budget: the named constants above.
    pub const DEFAULT: Budget = Budget {
        iterations: ITERATION_BUDGET,
        nodes: NODE_BUDGET,
        time: TIME_BUDGET,
        accept: Accept::Planned,
    };
}

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

/// Runs `rules` over `graph` within [`Budget::DEFAULT`], logging to `cx`; `pass` names the
/// pass in errors.
pub fn rewrite_graph(
    pass: &'static str,
    rules: &[Rule],
    graph: &mut Graph,
    cx: &mut PassContext,
) -> Result<RewriteSummary, PassError> {
    rewrite_graph_within(Budget::DEFAULT, pass, rules, graph, cx)
}

/// [`rewrite_graph`] with an explicit budget.
pub fn rewrite_graph_within(
    budget: Budget,
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
        .with_iter_limit(budget.iterations)
        .with_node_limit(budget.nodes)
        .with_time_limit(budget.time)
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
    let (input_cost, before) = accept_cost(budget.accept, graph);
    summary.cost_before = input_cost;
    summary.cost_after = input_cost;
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
    let (cost_after, after) = accept_cost(budget.accept, &new);
    // equal planned costs (the same kernels): the per-op cost decides, so normal forms
    // that only remove work inside a fused kernel still apply
    let tie_won = budget.accept == Accept::Planned
        && cost_after == input_cost
        && graph_cost(&new).total() < graph_cost(graph).total();
    let better = cost_after < input_cost || tie_won;
    if !better {
        cx.log(format!(
            "kept the input: the cheapest program found costs {after}, the input {before}"
        ));
        return Ok(summary);
    }
    cx.log(format!("ops: {}", op_diff(graph, &new)));
    cx.log(format!("cost {before} -> {after}"));
    summary.cost_after = cost_after;
    summary.changed = true;
    *graph = new;
    Ok(summary)
}

/// The cost of `g` under the accept test, and its text for the log.
fn accept_cost(accept: Accept, g: &Graph) -> (u64, String) {
    match accept {
        Accept::Planned => {
            let c = planned_cost(g);
            (c.total(), c.to_string())
        }
        Accept::PerOp => {
            let c = graph_cost(g);
            (c.total(), c.to_string())
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egraph::rules;
    use drtc_ir::{DType, GraphBuilder, Op, TensorType};

    /// x * 2 * 3 * 4 * 5: folding needs several rounds.
    fn chain() -> Graph {
        let mut b = GraphBuilder::new("g");
        let mut x = b.input("x", TensorType::new(DType::F32, vec![4, 8]));
        for v in [2.0, 3.0, 4.0, 5.0] {
            let c = b.constant(v, DType::F32);
            x = b.op1(Op::Mul, &[x, c], []).unwrap();
        }
        b.finish(vec![x])
    }

    #[test]
    fn running_out_of_budget_is_a_reported_stop_reason() {
        let mut g = chain();
        let mut cx = PassContext::new();
        let tight = Budget {
            iterations: 1,
            accept: Accept::PerOp,
            ..Budget::DEFAULT
        };
        let s = rewrite_graph_within(tight, "simplify", &rules::all(), &mut g, &mut cx).unwrap();
        assert_eq!(s.stop, "iteration budget (1) reached");
        assert!(cx
            .decisions()
            .iter()
            .any(|d| d == "stopped: iteration budget (1) reached"));
        // what was found within the budget is still used, and verifies
        assert!(s.changed && s.cost_after < s.cost_before);
        assert!(drtc_ir::verify(&g).iter().all(|e| !e.is_error()));
    }

    #[test]
    fn a_full_budget_folds_the_whole_chain() {
        let mut g = chain();
        let s = rewrite_graph("simplify", &rules::all(), &mut g, &mut PassContext::new()).unwrap();
        assert_eq!(s.stop, "saturated");
        let ops: Vec<Op> = g.body().iter().map(|&n| g.node(n).op).collect();
        assert_eq!(ops, [Op::Full, Op::Mul]);
        let c = g.node(g.body()[0]).attrs["value"].as_float();
        assert_eq!(c, Some(120.0));
    }

    #[test]
    fn deep_sharing_does_not_defeat_extraction() {
        // y = x * sigmoid(x) + c, 120 times: tree costs double at every level
        let mut b = GraphBuilder::new("g");
        let t = TensorType::new(DType::F32, vec![8, 8]);
        let mut x = b.input("x", t);
        let c = b.constant(0.5, DType::F32);
        for _ in 0..120 {
            let s = b.op1(Op::Sigmoid, &[x], []).unwrap();
            let m = b.op1(Op::Mul, &[x, s], []).unwrap();
            x = b.op1(Op::Add, &[m, c], []).unwrap();
        }
        let mut g = b.finish(vec![x]);
        rewrite_graph("simplify", &rules::all(), &mut g, &mut PassContext::new()).unwrap();
        let count = |op: Op| g.body().iter().filter(|&&n| g.node(n).op == op).count();
        assert_eq!(
            (count(Op::Silu), count(Op::Sigmoid), count(Op::Mul)),
            (120, 0, 0)
        );
    }

    #[test]
    fn op_diff_counts_ops() {
        let g = chain();
        let mut b = GraphBuilder::new("g");
        let x = b.input("x", TensorType::new(DType::F32, vec![4, 8]));
        let s = b.op1(Op::Silu, &[x], []).unwrap();
        let h = b.finish(vec![s]);
        assert_eq!(op_diff(&g, &h), "-full x4, -mul x4, +silu");
        assert_eq!(op_diff(&g, &g), "same op counts");
    }
}
