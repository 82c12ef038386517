//! `FusionPlan::verify`: every plan `plan_fusion` makes verifies (random graphs mixing
//! pointwise ops, reductions, softmax and matrix products, with branches, at every
//! max-ops), and each kind of broken plan is rejected with its own error.

use drtc_ir::{Attr, DType, Graph, GraphBuilder, Op, TensorType, ValueId};
use drtc_passes::fuse::{plan_fusion, FuseOptions, FusionPlan, PlanError, RegionKind};
use proptest::prelude::*;

/// One node of a random graph, with indices into the values built so far.
#[derive(Clone, Debug)]
enum Node {
    Exp(usize),
    Relu(usize),
    Add(usize, usize),
    Mul(usize, usize),
    Scale(usize),
    SumRows(usize),
    Softmax(usize),
    Matmul(usize),
}

fn node() -> impl Strategy<Value = Node> {
    let i = any::<usize>;
    prop_oneof![
        i().prop_map(Node::Exp),
        i().prop_map(Node::Relu),
        (i(), i()).prop_map(|(a, b)| Node::Add(a, b)),
        (i(), i()).prop_map(|(a, b)| Node::Mul(a, b)),
        i().prop_map(Node::Scale),
        i().prop_map(Node::SumRows),
        i().prop_map(Node::Softmax),
        i().prop_map(Node::Matmul),
    ]
}

/// Values of shape [2, 4, 8] ("full") and [2, 4, 1] ("rows"); nodes that do not fit the
/// picked values' shapes are skipped.
fn build(nodes: &[Node], outputs: &[usize]) -> Graph {
    let full = TensorType::new(DType::F32, vec![2, 4, 8]);
    let mut b = GraphBuilder::new("mixed");
    let x = b.input("x", full);
    let w = b.param("w", TensorType::new(DType::F32, vec![8, 8]));
    let mut values: Vec<(ValueId, bool)> = vec![(x, true)];
    for n in nodes {
        let pick = |i: usize| values[i % values.len()];
        let made = match *n {
            Node::Exp(a) => b
                .op1(Op::Exp, &[pick(a).0], [])
                .ok()
                .map(|v| (v, pick(a).1)),
            Node::Relu(a) => b
                .op1(Op::Relu, &[pick(a).0], [])
                .ok()
                .map(|v| (v, pick(a).1)),
            Node::Add(a, c) | Node::Mul(a, c) => {
                let op = if matches!(n, Node::Add(..)) {
                    Op::Add
                } else {
                    Op::Mul
                };
                let (l, r) = (pick(a), pick(c));
                b.op1(op, &[l.0, r.0], []).ok().map(|v| (v, l.1 || r.1))
            }
            Node::Scale(a) => {
                let two = b.constant(2.0, DType::F32);
                b.op1(Op::Mul, &[pick(a).0, two], [])
                    .ok()
                    .map(|v| (v, pick(a).1))
            }
            Node::SumRows(a) if pick(a).1 => b
                .op1(
                    Op::Sum,
                    &[pick(a).0],
                    [("dim", Attr::Ints(vec![2])), ("keepdim", Attr::Bool(true))],
                )
                .ok()
                .map(|v| (v, false)),
            Node::Softmax(a) if pick(a).1 => b
                .op1(Op::Softmax, &[pick(a).0], [("dim", Attr::Int(-1))])
                .ok()
                .map(|v| (v, true)),
            Node::Matmul(a) if pick(a).1 => b
                .op1(Op::Matmul, &[pick(a).0, w], [])
                .ok()
                .map(|v| (v, true)),
            Node::SumRows(_) | Node::Softmax(_) | Node::Matmul(_) => None,
        };
        values.extend(made);
    }
    let outs = outputs
        .iter()
        .map(|&o| values[o % values.len()].0)
        .collect();
    b.finish(outs)
}

proptest! {
    #[test]
    fn every_plan_verifies(
        nodes in prop::collection::vec(node(), 1..20),
        outputs in prop::collection::vec(any::<usize>(), 1..=3),
        max_ops in 1..10usize,
    ) {
        let g = build(&nodes, &outputs);
        let plan = plan_fusion(&g, &FuseOptions { max_ops });
        prop_assert_eq!(plan.verify(&g), Ok(()), "{}", plan.display(&g));
    }
}

/// x -> exp -> sum(keepdim) -> mul by x (broadcast) -> relu, and matmul(relu, w).
fn sample() -> (Graph, FusionPlan) {
    let mut b = GraphBuilder::new("g");
    let x = b.input("x", TensorType::new(DType::F32, vec![2, 4, 8]));
    let w = b.param("w", TensorType::new(DType::F32, vec![8, 8]));
    let e = b.op1(Op::Exp, &[x], []).unwrap();
    let s = b
        .op1(
            Op::Sum,
            &[e],
            [("dim", Attr::Ints(vec![2])), ("keepdim", Attr::Bool(true))],
        )
        .unwrap();
    let m = b.op1(Op::Mul, &[x, s], []).unwrap();
    let r = b.op1(Op::Relu, &[m], []).unwrap();
    let y = b.op1(Op::Matmul, &[r, w], []).unwrap();
    let g = b.finish(vec![y]);
    let plan = plan_fusion(&g, &FuseOptions::default());
    assert_eq!(plan.verify(&g), Ok(()));
    (g, plan)
}

fn broken(edit: impl FnOnce(&mut FusionPlan)) -> PlanError {
    let (g, mut plan) = sample();
    edit(&mut plan);
    plan.verify(&g)
        .expect_err("the broken plan must be rejected")
}

#[test]
fn the_sample_plans_a_reduction_and_a_contraction() {
    let (_, plan) = sample();
    let kinds: Vec<RegionKind> = plan.regions.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [RegionKind::Reduction, RegionKind::Contraction]);
    let red = plan.regions[0]
        .reduction
        .as_ref()
        .expect("a reduction space");
    assert_eq!(red.domain, vec![2, 4, 8]);
    assert_eq!(red.reduced, [false, false, true]);
    assert_eq!(plan.regions[0].iteration, vec![2, 4, 8]);
    assert_eq!(plan.regions[1].iteration, vec![2, 4, 8]);
    assert_eq!(plan.regions[1].reduction, None);
}

#[test]
fn a_node_in_no_region_is_rejected() {
    let e = broken(|p| {
        let r = &mut p.regions[0];
        r.nodes.remove(0);
    });
    assert!(
        matches!(&e, PlanError::Unplanned { node } if node == "#0 exp"),
        "{e}"
    );
}

#[test]
fn a_node_in_two_regions_is_rejected() {
    let e = broken(|p| {
        let n = p.regions[0].nodes[3];
        p.regions[1].nodes.insert(0, n);
    });
    assert!(
        matches!(
            &e,
            PlanError::TwiceOwned {
                first: 0,
                second: 1,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn regions_out_of_topological_order_are_rejected() {
    let e = broken(|p| p.regions.swap(0, 1));
    assert!(
        matches!(&e, PlanError::NotTopological { region: 0, value } if value == "%3"),
        "{e}"
    );
}

#[test]
fn nodes_out_of_program_order_are_rejected() {
    let e = broken(|p| p.regions[0].nodes.swap(0, 1));
    assert_eq!(e, PlanError::Unordered { region: 0 });
}

#[test]
fn wrong_inputs_or_outputs_are_rejected() {
    let e = broken(|p| p.regions[1].inputs.clear());
    assert!(matches!(&e, PlanError::Inputs { region: 1, .. }), "{e}");
    let e = broken(|p| p.regions[0].outputs.clear());
    assert!(matches!(&e, PlanError::Outputs { region: 0, .. }), "{e}");
}

#[test]
fn a_region_of_the_wrong_kind_is_rejected() {
    let e = broken(|p| p.regions[0].kind = RegionKind::Pointwise);
    assert!(
        matches!(
            &e,
            PlanError::Invalid {
                region: 0,
                kind: RegionKind::Pointwise,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("#1 sum is a reduction op"), "{e}");
    let e = broken(|p| p.regions[1].kind = RegionKind::Library);
    assert!(matches!(&e, PlanError::Invalid { region: 1, .. }), "{e}");
}

#[test]
fn a_wrong_recorded_space_is_rejected() {
    let e = broken(|p| p.regions[1].iteration = vec![2, 4]);
    assert!(matches!(&e, PlanError::Space { region: 1, .. }), "{e}");
    let e = broken(|p| p.regions[0].reduction = None);
    assert!(matches!(&e, PlanError::Space { region: 0, .. }), "{e}");
    let e = broken(|p| {
        if let Some(r) = &mut p.regions[0].reduction {
            r.reduced = vec![false, true, true];
        }
    });
    assert!(matches!(&e, PlanError::Space { region: 0, .. }), "{e}");
}

#[test]
fn a_node_outside_the_body_is_rejected() {
    let e = broken(|p| p.regions[1].nodes.push(drtc_ir::NodeId(999)));
    assert_eq!(e, PlanError::UnknownNode { region: 1 });
}

#[test]
fn a_missing_region_is_rejected() {
    let e = broken(|p| {
        p.regions.pop();
    });
    assert!(
        matches!(&e, PlanError::Unplanned { node } if node == "#4 matmul"),
        "{e}"
    );
}
