//! The well-formedness check reports every problem of a broken graph at once, each with a
//! message that says what is wrong; graphs survive a JSON round trip.

use drtc_ir::text::{parse, print};
use drtc_ir::{verify, Attr, DType, Graph, GraphBuilder, InputKind, Op, TensorType};

fn t(shape: &[i64]) -> TensorType {
    TensorType::new(DType::F32, shape.to_vec())
}

const BROKEN: &str = "\
graph @broken(%x: f32[2, 3], %w: param f32[3, 4]) {
  // declared f32[2, 5], inference gives f32[2, 4]
  %0 = matmul(%x, %w) : f32[2, 5]
  // add takes two inputs
  %1 = add(%0) : f32[2, 4]
  // relu has no attributes
  %2 = relu(%x) {alpha = 1.0} : f32[2, 3]
  // softmax needs a dim
  %3 = softmax(%x) : f32[2, 3]
  // %5 is defined below
  %4 = neg(%5) : f32[2, 3]
  %5 = relu(%x) : f32[2, 3]
  // unused
  %6 = exp(%x) : f32[2, 3]
  return %1, %2, %3, %4
}
";

#[test]
fn broken_file_reports_every_error() {
    let g = parse(BROKEN).unwrap();
    let found = verify(&g);
    let messages: Vec<String> = found.iter().map(|e| e.to_string()).collect();
    let expect = [
        "error: node #0: `matmul` result 0 is declared f32[2, 5] but inference gives f32[2, 4]",
        "error: node #1: `add` takes 2 inputs, got 1",
        "error: node #2: `relu`: unknown attribute `alpha` (this op takes no attributes)",
        "error: node #3: `softmax`: missing required attribute `dim`",
        "error: node #4: `neg` input 0 is used before it is defined",
        "warning: node #6: the result of `exp` is never used",
    ];
    for e in expect {
        assert!(
            messages.iter().any(|m| m == e),
            "missing `{e}` in:\n{}",
            messages.join("\n")
        );
    }
    assert_eq!(
        found.iter().filter(|e| e.is_error()).count(),
        5,
        "{}",
        messages.join("\n")
    );
    insta::assert_snapshot!(messages.join("\n"));
}

#[test]
fn a_valid_file_verifies_clean() {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mlp.drt"))
        .unwrap();
    let g = parse(&src).unwrap();
    assert_eq!(verify(&g), vec![]);
}

/// Two nodes feeding each other, built with the raw API.
#[test]
fn a_cycle_is_reported_as_a_cycle() {
    let mut g = Graph::new("cyclic");
    let x = g.add_input("x", InputKind::Activation, t(&[4]));
    let a = g.add_node_unchecked(Op::Add, vec![x, x], Default::default(), vec![t(&[4])]);
    let b = g.add_node_unchecked(
        Op::Relu,
        vec![g.node(a).outputs[0]],
        Default::default(),
        vec![t(&[4])],
    );
    let b_out = g.node(b).outputs[0];
    g.node_mut(a).inputs[1] = b_out;
    g.set_outputs(vec![b_out]);
    let found = verify(&g);
    let errors: Vec<String> = found
        .iter()
        .filter(|e| e.is_error())
        .map(|e| e.to_string())
        .collect();
    assert_eq!(errors, vec!["error: node #0: cycle through nodes #0, #1"]);
}

/// Forward references in the text format can spell a cycle too.
#[test]
fn a_cycle_in_text_is_reported() {
    let g = parse("graph @g(%x: f32[4]) {\n  %0 = add(%x, %1) : f32[4]\n  %1 = relu(%0) : f32[4]\n  %2 = neg(%2) : f32[4]\n  return %1, %2\n}\n").unwrap();
    let errors: Vec<String> = verify(&g)
        .iter()
        .filter(|e| e.is_error())
        .map(|e| e.to_string())
        .collect();
    assert_eq!(
        errors,
        vec![
            "error: node #0: cycle through nodes #0, #1",
            "error: node #2: cycle through nodes #2"
        ]
    );
}

/// Dangling outputs and duplicate input names are found without panicking.
#[test]
fn bookkeeping_errors() {
    let mut g = Graph::new("g");
    let x = g.add_input("x", InputKind::Activation, t(&[2]));
    g.add_input("x", InputKind::Param, t(&[2]));
    g.set_outputs(vec![x, drtc_ir::ValueId(99)]);
    let messages: Vec<String> = verify(&g).iter().map(|e| e.to_string()).collect();
    assert_eq!(
        messages,
        vec![
            "error: inputs 0 and 1 are both named `x`",
            "error: output 1 is a dangling value (%99)",
        ]
    );
}

fn sample_graph() -> Graph {
    let mut b = GraphBuilder::new("sample");
    let x = b.input("x", TensorType::new(DType::F32, vec![2, 3, 8, 8]));
    let w = b.param("conv.weight", TensorType::new(DType::F32, vec![4, 3, 3, 3]));
    let rm = b.buffer("bn.running_mean", TensorType::new(DType::F32, vec![4]));
    let c = b
        .op1(Op::Conv2d, &[x, w], [("padding", Attr::Ints(vec![1, 1]))])
        .unwrap();
    let n = b
        .op1(Op::BatchNorm, &[c, rm], [("eps", Attr::Float(1e-3))])
        .unwrap();
    let h = b
        .op1(
            Op::Hardtanh,
            &[n],
            [
                ("min_val", Attr::Float(f64::NEG_INFINITY)),
                ("max_val", Attr::Float(f64::INFINITY)),
            ],
        )
        .unwrap();
    let g = b
        .op1(Op::Gelu, &[h], [("approximate", Attr::Str("tanh".into()))])
        .unwrap();
    let s = b
        .op1(
            Op::Sum,
            &[g],
            [
                ("dim", Attr::Ints(vec![1, -1])),
                ("keepdim", Attr::Bool(true)),
            ],
        )
        .unwrap();
    let k = b.constant(0.5, DType::F64);
    let m = b.op1(Op::Mul, &[s, k], []).unwrap();
    let i = b.op1(Op::Argmax, &[m], [("dim", Attr::Int(0))]).unwrap();
    let f = b
        .op1(Op::Cast, &[i], [("dtype", Attr::DType(DType::BF16))])
        .unwrap();
    b.finish(vec![m, f])
}

#[test]
fn json_round_trip() {
    let g = sample_graph();
    assert_eq!(verify(&g).iter().filter(|e| e.is_error()).count(), 0);
    let json = serde_json::to_string(&g).unwrap();
    let back: Graph = serde_json::from_str(&json).unwrap();
    assert_eq!(back, g);
    assert_eq!(print(&back), print(&g));
}

/// Non-finite attribute values (hardtanh's -inf) survive JSON, which has no such numbers.
#[test]
fn json_keeps_non_finite_floats() {
    let g = sample_graph();
    let json = serde_json::to_string_pretty(&g).unwrap();
    assert!(json.contains("\"-inf\""), "{json}");
    let back: Graph = serde_json::from_str(&json).unwrap();
    let h = back.node(back.body()[2]);
    assert_eq!(h.attrs["min_val"], Attr::Float(f64::NEG_INFINITY));
    assert_eq!(h.attrs["max_val"], Attr::Float(f64::INFINITY));
    let nan: Attr =
        serde_json::from_str(&serde_json::to_string(&Attr::Float(f64::NAN)).unwrap()).unwrap();
    assert!(nan.as_float().unwrap().is_nan());
}

mod never_panics {
    use super::*;
    use drtc_ir::{Attrs, NodeId, ValueId};
    use proptest::prelude::*;

    fn attr(r: u64) -> Attr {
        match r % 8 {
            0 => Attr::None,
            1 => Attr::Bool(r % 16 < 8),
            2 => Attr::Int((r >> 3) as i64 % 7 - 3),
            3 => Attr::Float((r >> 3) as f64 / 4.0),
            4 => Attr::Str(["mean", "none", "tanh", "ij->ji"][(r >> 3) as usize % 4].into()),
            5 => Attr::Ints(vec![(r >> 3) as i64 % 4; (r >> 5) as usize % 3]),
            6 => Attr::DType(DType::ALL[(r >> 3) as usize % 7]),
            _ => Attr::Int(i64::MAX),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// Random nodes on random (possibly dangling) values, with random attributes,
        /// types and program order: the verifier reports, it does not panic; neither do
        /// FLOP counting, printing and parsing the printed text.
        #[test]
        fn verify_never_panics(
            inputs in prop::collection::vec(prop::collection::vec(0i64..4, 0..4), 0..3),
            nodes in prop::collection::vec((any::<u16>(), prop::collection::vec(any::<u16>(), 0..4), prop::collection::vec(any::<u64>(), 0..4), prop::collection::vec(prop::collection::vec(0i64..4, 0..4), 0..3)), 0..8),
            order in prop::collection::vec(any::<u16>(), 0..10),
            outputs in prop::collection::vec(any::<u16>(), 0..3),
        ) {
            let mut g = Graph::new("fuzz");
            for (i, shape) in inputs.iter().enumerate() {
                g.add_input(format!("in{i}"), InputKind::Activation, t(shape));
            }
            let mut ids = vec![];
            for (op, args, attrs, results) in &nodes {
                let op = Op::ALL[*op as usize % Op::ALL.len()];
                let limit = g.num_values() as u16 + 3;
                let args = args.iter().map(|&a| ValueId((a % limit) as u32)).collect();
                let names = op.def().attrs.iter().map(|a| a.name).chain(["bogus"]);
                let attrs: Attrs = names.zip(attrs).map(|(n, &r)| (n.to_string(), attr(r))).collect();
                let results = results.iter().map(|s| t(s)).collect();
                ids.push(g.add_node_unchecked(op, args, attrs, results));
            }
            if !order.is_empty() {
                let n = g.num_nodes() as u16 + 1;
                g.set_body(order.iter().map(|&o| NodeId((o % n) as u32)).collect());
            }
            let limit = g.num_values() as u16 + 2;
            g.set_outputs(outputs.iter().map(|&o| ValueId((o % limit) as u32)).collect());
            let found = verify(&g);
            let _ = g.flops();
            let text = print(&g);
            if let Ok(back) = parse(&text) {
                let _ = verify(&back);
            }
            // a graph without findings prints and parses back to itself
            if found.iter().all(|e| !e.is_error()) {
                let back = parse(&text).map_err(|e| TestCaseError::fail(e.render(&text, "printed")))?;
                prop_assert_eq!(print(&back), text);
            }
        }
    }
}
