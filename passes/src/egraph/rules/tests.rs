//! Every rule's one-line test: `inputs | before => after`. The `before` program is run
//! through all rules; the rule must fire and the result must print as `after` does.

use super::super::convert::extract;
use super::super::engine::{rewrite_graph_within, Accept, Budget};
use super::super::lang::{normalize_literal, parse_attr_literal, AttrSet, TNode};
use super::super::types_and_constants::{TGraph, TypeAnalysis};
use super::{all, FAMILIES};
use crate::PassContext;
use drtc_ir::{text, verify, DType, Graph, InputKind, TensorType};
use egg::{Id, RecExpr};

/// `x: f32[4, 8], w: f32[8]` -> names and types.
fn parse_decls(s: &str) -> Vec<(String, TensorType)> {
    s.split(']')
        .map(|p| p.trim().trim_start_matches(',').trim())
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (name, ty) = p.split_once(':').expect("`name: type`");
            let (dt, dims) = ty.trim().split_once('[').expect("`dtype[dims`");
            let shape: Vec<i64> = dims
                .split(',')
                .filter(|d| !d.trim().is_empty())
                .map(|d| d.trim().parse::<i64>().expect("a dim"))
                .collect();
            let dtype = DType::from_name(dt.trim()).expect("a dtype");
            (name.trim().to_string(), TensorType::new(dtype, shape))
        })
        .collect()
}

/// Rewrites input names to `inN` and number literals to f32 scalar constants.
fn desugar(expr: &str, names: &[String]) -> String {
    let spaced = expr.replace('(', " ( ").replace(')', " ) ");
    spaced
        .split_whitespace()
        .map(|tok| {
            if let Some(i) = names.iter().position(|n| n == tok) {
                format!("in{i}")
            } else if tok.parse::<f64>().is_ok() {
                format!("(full @shape=[];value={tok})")
            } else {
                tok.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Adds an expression, normalizing attributes (an op without a literal gets defaults).
fn add(egraph: &mut TGraph, expr: &RecExpr<TNode>) -> Id {
    let nodes = expr.as_ref();
    let mut ids: Vec<Id> = vec![];
    for node in nodes {
        let id = match node {
            TNode::Op { op, children, .. } => {
                let mut kids: Vec<Id> = vec![];
                let mut raw = drtc_ir::Attrs::new();
                for &c in children {
                    match &nodes[usize::from(c)] {
                        TNode::Attrs(a) => raw = a.to_attrs(),
                        _ => kids.push(ids[usize::from(c)]),
                    }
                }
                let attrs = normalize_literal(*op, &raw).expect("attributes normalize");
                if TNode::has_attrs(*op) {
                    kids.push(egraph.add(TNode::Attrs(AttrSet::from_attrs(&attrs))));
                }
                egraph.add(TNode::Op {
                    op: *op,
                    nonce: 0,
                    children: kids,
                })
            }
            // attribute leaves are read by their parent; inputs are leaves
            other => egraph.add(other.clone()),
        };
        ids.push(id);
    }
    *ids.last().expect("a non-empty expression")
}

/// The graph computing `expr` over `decls`.
fn program(decls: &[(String, TensorType)], expr: &str) -> Graph {
    let names: Vec<String> = decls.iter().map(|d| d.0.clone()).collect();
    let parsed: RecExpr<TNode> = desugar(expr, &names)
        .parse()
        .unwrap_or_else(|e| panic!("`{expr}` does not parse: {e}"));
    let mut template = Graph::new("t");
    for (n, t) in decls {
        template.add_input(n.clone(), InputKind::Activation, t.clone());
    }
    let mut egraph = TGraph::new(TypeAnalysis {
        input_types: decls.iter().map(|d| d.1.clone()).collect(),
    });
    let root = add(&mut egraph, &parsed);
    egraph.rebuild();
    assert!(
        egraph[root].data.ty.is_some(),
        "`{expr}` does not type-check"
    );
    extract(&egraph, &[root], &template).unwrap()
}

/// The outputs of `g` as s-expressions, operands of commutative ops sorted, so that
/// `add(x, y)` and `add(y, x)` compare equal.
fn canonical(g: &Graph) -> String {
    fn expr(g: &Graph, v: drtc_ir::ValueId) -> String {
        match g.producer(v) {
            None => g.value(v).name.clone().unwrap_or_default(),
            Some(n) => {
                let node = g.node(n);
                let mut args: Vec<String> = node.inputs.iter().map(|&i| expr(g, i)).collect();
                if matches!(
                    node.op,
                    drtc_ir::Op::Add
                        | drtc_ir::Op::Mul
                        | drtc_ir::Op::Maximum
                        | drtc_ir::Op::Minimum
                ) {
                    args.sort();
                }
                let attrs: Vec<String> =
                    node.attrs.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("({} {} {{{}}})", node.op, args.join(" "), attrs.join(","))
            }
        }
    }
    g.outputs()
        .iter()
        .map(|&v| expr(g, v))
        .collect::<Vec<_>>()
        .join("; ")
}

#[test]
fn every_rule_passes_its_one_line_test() {
    let rules = all();
    let mut failures = vec![];
    for rule in &rules {
        let (decls, rest) = rule.test.split_once('|').expect("`inputs | test`");
        let (before, after) = rest.split_once("=>").expect("`before => after`");
        let decls = parse_decls(decls);
        let mut g = program(&decls, before.trim());
        let expected = program(&decls, after.trim());
        let mut cx = PassContext::new();
        // the per-op accept test: these programs are too small for the planned cost
        let per_op = Budget {
            accept: Accept::PerOp,
            ..Budget::DEFAULT
        };
        let summary = rewrite_graph_within(per_op, "simplify", &rules, &mut g, &mut cx).unwrap();
        let errors: Vec<_> = verify(&g).into_iter().filter(|e| e.is_error()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", rule.name);
        if !summary.applied.contains_key(rule.name) {
            failures.push(format!(
                "{}: did not fire on `{}`",
                rule.name,
                before.trim()
            ));
        } else if canonical(&g) != canonical(&expected) {
            failures.push(format!(
                "{}: got\n{}expected\n{}log: {:?}",
                rule.name,
                text::print(&g),
                text::print(&expected),
                cx.decisions()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn rule_names_are_unique_and_every_rule_has_a_test() {
    let mut names = std::collections::HashSet::new();
    for f in FAMILIES {
        let rules = (f.rules)();
        assert!(!rules.is_empty(), "family {} is empty", f.name);
        for r in rules {
            assert!(names.insert(r.name), "duplicate rule name {}", r.name);
            assert!(r.test.contains('|') && r.test.contains("=>"), "{}", r.name);
            r.to_rewrite().unwrap();
        }
    }
}

#[test]
fn attribute_literals_in_tests_parse() {
    assert!(parse_attr_literal("@shape=[];value=1.0").is_some());
}
