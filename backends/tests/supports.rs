//! The fusion planner's region kinds (`drtc_passes::fuse::classify`) are what the Triton
//! backend says it supports (`triton::supports`, the one statement of the templates'
//! limits in `drtc_passes::fuse::support`), on every op's example and on the edge cases
//! of each template limit; and every example the backend claims a template for is
//! generated as a kernel (a claimed lowering is a real one).

use drtc_backends::stitch::{generate_module, CodegenOptions, ModuleForm};
use drtc_backends::triton::{supports, Support};
use drtc_ir::op::example::example_graph;
use drtc_ir::{Attr, DType, Graph, GraphBuilder, Op, TensorType};
use drtc_passes::fuse::{classify, plan_fusion, FuseOptions, RegionKind};

fn one_op(op: Op, inputs: &[TensorType], attrs: Vec<(&'static str, Attr)>) -> Graph {
    let mut b = GraphBuilder::new("edge");
    let ins: Vec<_> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| b.input(format!("x{i}"), t.clone()))
        .collect();
    let outs = b.op(op, &ins, attrs).unwrap();
    b.finish(outs)
}

fn check(g: &Graph) -> Support {
    let node = *g.body().last().unwrap();
    let s = supports(g, node);
    assert_eq!(
        classify(g, node),
        s.region_kind(),
        "{}: planner and backend disagree ({})",
        g.node(node).op,
        s.describe()
    );
    s
}

#[test]
fn planner_and_backend_agree_on_every_example() {
    for &op in Op::ALL {
        let g = example_graph(op).unwrap();
        check(&g);
    }
}

#[test]
fn planner_and_backend_agree_on_template_limits() {
    let t = |shape: &[i64]| TensorType::new(DType::F32, shape.to_vec());
    let cases = [
        one_op(Op::Sum, &[t(&[])], vec![]),
        one_op(Op::Softmax, &[t(&[])], vec![("dim", Attr::Int(0))]),
        one_op(
            Op::Dropout,
            &[t(&[4])],
            vec![("p", Attr::Float(0.5)), ("training", Attr::Bool(true))],
        ),
        one_op(
            Op::Dropout,
            &[t(&[4])],
            vec![("p", Attr::Float(0.0)), ("training", Attr::Bool(true))],
        ),
        one_op(
            Op::AdaptiveAvgPool2d,
            &[t(&[2, 3, 6, 6])],
            vec![("output_size", Attr::Ints(vec![2, 2]))],
        ),
        one_op(
            Op::AdaptiveAvgPool1d,
            &[t(&[3, 6])],
            vec![("output_size", Attr::Ints(vec![1]))],
        ),
        one_op(Op::Matmul, &[t(&[8]), t(&[8, 4])], vec![]),
        one_op(
            Op::MaxPool1d,
            &[t(&[3, 16])],
            vec![("kernel_size", Attr::Ints(vec![2]))],
        ),
    ];
    let got: Vec<Support> = cases.iter().map(check).collect();
    assert!(matches!(got[0], Support::Gap(_)), "{got:?}");
    assert!(matches!(got[1], Support::Gap(_)), "{got:?}");
    assert!(matches!(got[2], Support::Gap(_)), "{got:?}");
    assert_eq!(got[3], Support::Template(RegionKind::Pointwise));
    assert!(
        got[4..].iter().all(|s| matches!(s, Support::Gap(_))),
        "{got:?}"
    );
}

#[test]
fn a_claimed_template_generates_a_kernel() {
    let mut missing = vec![];
    for &op in Op::ALL {
        let g = example_graph(op).unwrap();
        let node = *g.body().last().unwrap();
        let Support::Template(kind) = supports(&g, node) else {
            continue;
        };
        let plan = plan_fusion(&g, &FuseOptions::default());
        let m = generate_module(&g, &plan, &ModuleForm::Seed, &CodegenOptions::default());
        let region = m.regions.iter().find(|r| r.ops.contains(&op.name()));
        match region {
            Some(r) if r.kind == kind && r.kernel.is_some() && !r.fallback => {}
            _ => missing.push(op.name()),
        }
    }
    assert!(missing.is_empty(), "claimed but not generated: {missing:?}");
}
