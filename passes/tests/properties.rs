//! Property tests: on random pointwise graphs, `cse` and `dce` keep the graph valid, keep
//! what it computes (checked by evaluating it, elementwise, before and after, bit for bit),
//! reach a fixpoint in one run, and pipelines print back to what they parse from.

use drtc_ir::{text, verify, Attr, DType, Graph, GraphBuilder, Op, TensorType, ValueDef};
use drtc_passes::{registry, Changed, ManagerOptions, Pass, PassContext, PassManager, Pipeline};
use proptest::prelude::*;

/// One node of a random graph: an op and indices into the values built so far.
#[derive(Clone, Debug)]
enum Step {
    Unary(Op, usize),
    Binary(Op, usize, usize),
    LeakyRelu(f64, usize),
}

const UNARY: [Op; 4] = [Op::Exp, Op::Relu, Op::Neg, Op::Tanh];
const BINARY: [Op; 4] = [Op::Add, Op::Mul, Op::Sub, Op::Maximum];

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0..UNARY.len(), any::<usize>()).prop_map(|(o, a)| Step::Unary(UNARY[o], a)),
        (0..BINARY.len(), any::<usize>(), any::<usize>())
            .prop_map(|(o, a, b)| Step::Binary(BINARY[o], a, b)),
        (
            prop_oneof![Just(0.1), Just(0.2), Just(-0.0), Just(0.0)],
            any::<usize>()
        )
            .prop_map(|(s, a)| Step::LeakyRelu(s, a)),
    ]
}

/// A graph with 1 to 3 inputs, the given steps, and 1 to 3 outputs picked among all values.
fn build(inputs: usize, steps: &[Step], outputs: &[usize]) -> Graph {
    let t = TensorType::new(DType::F32, vec![2, 3]);
    let mut b = GraphBuilder::new("random");
    let mut values: Vec<_> = (0..inputs)
        .map(|i| b.input(format!("x{i}"), t.clone()))
        .collect();
    for s in steps {
        let pick = |i: usize| values[i % values.len()];
        let v = match *s {
            Step::Unary(op, a) => b.op1(op, &[pick(a)], []),
            Step::Binary(op, a, c) => b.op1(op, &[pick(a), pick(c)], []),
            Step::LeakyRelu(slope, a) => b.op1(
                Op::LeakyRelu,
                &[pick(a)],
                [("negative_slope", Attr::Float(slope))],
            ),
        }
        .expect("pointwise ops on equal shapes type-check");
        values.push(v);
    }
    let outs = outputs.iter().map(|&o| values[o % values.len()]).collect();
    b.finish(outs)
}

/// Evaluates a pointwise graph on one element per input: every op here acts elementwise on
/// equal shapes, so one element stands for all of them.
fn eval(g: &Graph, inputs: &[f64]) -> Vec<u64> {
    let mut val = vec![f64::NAN; g.num_values()];
    for &v in g.inputs() {
        if let ValueDef::Input { index, .. } = g.value(v).def {
            val[v.index()] = inputs[index];
        }
    }
    for &n in g.body() {
        let node = g.node(n);
        let x = |i: usize| val[node.inputs[i].index()];
        let r = match node.op {
            Op::Exp => x(0).exp(),
            Op::Relu => x(0).max(0.0),
            Op::Neg => -x(0),
            Op::Tanh => x(0).tanh(),
            Op::Add => x(0) + x(1),
            Op::Mul => x(0) * x(1),
            Op::Sub => x(0) - x(1),
            Op::Maximum => x(0).max(x(1)),
            Op::LeakyRelu => {
                let s = node.attrs["negative_slope"].as_float().unwrap();
                if x(0) >= 0.0 {
                    x(0)
                } else {
                    x(0) * s
                }
            }
            other => panic!("no evaluator for {other}"),
        };
        val[node.outputs[0].index()] = r;
    }
    g.outputs()
        .iter()
        .map(|v| val[v.index()].to_bits())
        .collect()
}

fn graph_case() -> impl Strategy<Value = (usize, Vec<Step>, Vec<usize>, Vec<f64>)> {
    (
        1..=3usize,
        prop::collection::vec(step(), 0..24),
        prop::collection::vec(any::<usize>(), 1..=3),
        prop::collection::vec(-3.0..3.0f64, 3),
    )
}

fn no_errors(g: &Graph) -> bool {
    verify(g).iter().all(|e| !e.is_error())
}

proptest! {
    #[test]
    fn passes_keep_graphs_valid_and_meaning_unchanged(
        (inputs, steps, outputs, xs) in graph_case(),
        pipeline in prop_oneof![Just("cse"), Just("dce"), Just("cse,dce"), Just("cse{commutative=false},dce")],
    ) {
        let original = build(inputs, &steps, &outputs);
        let mut g = original.clone();
        let options = ManagerOptions { verify_each: true, print_ir_after: vec![] };
        PassManager::parse(pipeline, options).unwrap().run(&mut g).unwrap();
        prop_assert!(no_errors(&g));
        prop_assert_eq!(g.inputs().len(), original.inputs().len());
        prop_assert!(g.body().len() <= original.body().len());
        prop_assert_eq!(eval(&g, &xs), eval(&original, &xs));
        // the result is in normal form: printing it and reading it back changes nothing
        let printed = text::print(&g);
        prop_assert_eq!(text::print(&text::parse(&printed).unwrap()), printed);
    }

    #[test]
    fn one_run_reaches_a_fixpoint((inputs, steps, outputs, _) in graph_case()) {
        for name in registry::pass_names() {
            let info = registry::lookup(name).unwrap();
            let pass = (info.build)(&drtc_passes::PassOptions::defaults(info.options)).unwrap();
            let mut g = build(inputs, &steps, &outputs);
            pass.run(&mut g, &mut PassContext::new()).unwrap();
            let once = text::print(&g);
            let again = pass.run(&mut g, &mut PassContext::new()).unwrap();
            prop_assert_eq!(again, Changed::No, "{} changed its own result:\n{}", name, once);
            prop_assert_eq!(text::print(&g), once);
        }
    }

    #[test]
    fn after_dce_every_node_is_used((inputs, steps, outputs, _) in graph_case()) {
        let mut g = build(inputs, &steps, &outputs);
        drtc_passes::dce::Dce.run(&mut g, &mut PassContext::new()).unwrap();
        prop_assert!(verify(&g).is_empty(), "{:?}", verify(&g));
    }

    #[test]
    fn after_cse_no_two_nodes_are_equal((inputs, steps, outputs, _) in graph_case()) {
        let mut g = build(inputs, &steps, &outputs);
        drtc_passes::cse::Cse::default().run(&mut g, &mut PassContext::new()).unwrap();
        let keys: Vec<String> = g.body().iter().map(|&n| {
            let node = g.node(n);
            let mut ins = node.inputs.clone();
            if matches!(node.op, Op::Add | Op::Mul | Op::Maximum) {
                ins.sort();
            }
            format!("{:?} {:?} {:?}", node.op, ins, node.attrs.get("negative_slope").map(|a| a.as_float().unwrap().to_bits()))
        }).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        sorted.dedup();
        prop_assert_eq!(sorted.len(), keys.len());
    }

    #[test]
    fn pipelines_print_back_to_what_they_parse_from(
        entries in prop::collection::vec(
            ("[a-z][a-z0-9_-]{0,8}", prop::collection::btree_map("[a-z][a-z-]{0,6}", "[a-z0-9.-]{1,5}", 0..3)),
            0..5,
        )
    ) {
        let text = entries
            .iter()
            .map(|(name, opts)| {
                if opts.is_empty() {
                    name.clone()
                } else {
                    let o: Vec<String> = opts.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    format!("{name}{{{}}}", o.join(","))
                }
            })
            .collect::<Vec<_>>()
            .join(",");
        let p = Pipeline::parse(&text).unwrap();
        prop_assert_eq!(p.entries.len(), entries.len());
        prop_assert_eq!(p.to_string(), text);
    }
}
