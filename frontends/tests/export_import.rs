//! The export importer on hand-written helper JSON (no Python needed): ATen ops map to IR
//! ops with the export's types, unmapped ops become opaque `aten` calls that print and
//! parse back, batch-norm statistics are accepted as the module's own updates, and every
//! refusal names the target and the source line.

use drtc_frontends::export::{import, ExportError};
use drtc_ir::{InputKind, Op, ValueDef};
use serde_json::{json, Value};

fn t(shape: &[i64]) -> Value {
    let mut stride = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        stride[i] = stride[i + 1] * shape[i + 1];
    }
    json!({"shape": shape, "dtype": "float32", "stride": stride})
}

fn placeholder(name: &str, meta: Value) -> Value {
    json!({"name": name, "op": "placeholder", "meta": meta, "line": null})
}

fn call(name: &str, target: &str, args: Value, meta: Value, line: usize) -> Value {
    json!({"name": name, "op": "call_function", "target": target, "args": args, "kwargs": {}, "meta": meta, "line": line})
}

fn node(n: &str) -> Value {
    json!({"node": n})
}

fn file(inputs: Value, nodes: Vec<Value>, outputs: Value) -> String {
    json!({"ok": true, "format": "kernelbench", "torch": "test", "inputs": inputs, "nodes": nodes, "outputs": outputs}).to_string()
}

#[test]
fn aten_ops_map_to_ir_ops_with_state_dict_names() {
    let j = file(
        json!([
            {"placeholder": "p_fc_weight", "kind": "parameter", "target": "fc.weight"},
            {"placeholder": "p_fc_bias", "kind": "parameter", "target": "fc.bias"},
            {"placeholder": "x", "kind": "activation", "index": 0},
        ]),
        vec![
            placeholder("p_fc_weight", t(&[4, 8])),
            placeholder("p_fc_bias", t(&[4])),
            placeholder("x", t(&[2, 8])),
            call(
                "linear",
                "aten.linear.default",
                json!([node("x"), node("p_fc_weight"), node("p_fc_bias")]),
                t(&[2, 4]),
                10,
            ),
            call(
                "mul",
                "aten.mul.Tensor",
                json!([node("linear"), 2.0]),
                t(&[2, 4]),
                11,
            ),
            call(
                "split",
                "aten.split.Tensor",
                json!([node("mul"), 2, -1]),
                json!([t(&[2, 2]), t(&[2, 2])]),
                12,
            ),
            call(
                "g0",
                "operator.getitem",
                json!([node("split"), 0]),
                t(&[2, 2]),
                12,
            ),
            call(
                "g1",
                "operator.getitem",
                json!([node("split"), 1]),
                t(&[2, 2]),
                12,
            ),
            call(
                "gt",
                "aten.gt.Scalar",
                json!([node("g0"), 0.5]),
                json!({"shape": [2, 2], "dtype": "bool", "stride": [2, 1]}),
                13,
            ),
            call(
                "mf",
                "aten.masked_fill.Scalar",
                json!([node("g1"), node("gt"), -1.0]),
                t(&[2, 2]),
                13,
            ),
            call(
                "relu",
                "aten.relu.default",
                json!([node("mf")]),
                t(&[2, 2]),
                14,
            ),
        ],
        json!([{"kind": "user", "arg": "relu"}]),
    );
    let im = import(&j).expect("imports");
    assert!(im.library_calls.is_empty(), "{:?}", im.library_calls);
    assert!(im.notes.is_empty(), "{:?}", im.notes);
    let g = &im.graph;
    let names: Vec<(String, InputKind)> = g
        .inputs()
        .iter()
        .map(|&v| match &g.value(v).def {
            ValueDef::Input { kind, .. } => {
                (g.value(v).name.clone().unwrap_or_default(), kind.clone())
            }
            _ => unreachable!("inputs are inputs"),
        })
        .collect();
    assert_eq!(
        names,
        vec![
            ("x".to_string(), InputKind::Activation),
            ("fc.weight".to_string(), InputKind::Param),
            ("fc.bias".to_string(), InputKind::Param),
        ]
    );
    let ops: Vec<Op> = g.body().iter().map(|&n| g.node(n).op).collect();
    for op in [Op::Linear, Op::Mul, Op::Slice, Op::Gt, Op::Where, Op::Relu] {
        assert!(ops.contains(&op), "{op} missing from {ops:?}");
    }
    let text = drtc_ir::text::print(g);
    assert_eq!(drtc_ir::text::print(&drtc_ir::parse(&text).unwrap()), text);
}

#[test]
fn unmapped_ops_are_opaque_calls_that_round_trip() {
    let j = file(
        json!([{"placeholder": "x", "kind": "activation", "index": 0}]),
        vec![
            placeholder("x", t(&[3, 4])),
            call("r", "aten.randn.default", json!([[3, 4]]), t(&[3, 4]), 7),
            call(
                "e",
                "aten.special_bessel_j0.default",
                json!([node("x")]),
                t(&[3, 4]),
                8,
            ),
            call(
                "s",
                "aten.sort.default",
                json!([node("e"), -1, false]),
                json!([t(&[3, 4]), {"shape": [3, 4], "dtype": "int64", "stride": [4, 1]}]),
                9,
            ),
            call(
                "v",
                "operator.getitem",
                json!([node("s"), 0]),
                t(&[3, 4]),
                9,
            ),
            call(
                "a",
                "aten.add.Tensor",
                json!([node("v"), node("r")]),
                t(&[3, 4]),
                10,
            ),
        ],
        json!([{"kind": "user", "arg": "a"}]),
    );
    let im = import(&j).expect("imports");
    let targets: Vec<(&str, Option<usize>)> = im
        .library_calls
        .iter()
        .map(|c| (c.target.as_str(), c.line))
        .collect();
    assert_eq!(
        targets,
        vec![
            ("aten.randn.default", Some(7)),
            ("aten.special_bessel_j0.default", Some(8)),
            ("aten.sort.default", Some(9))
        ]
    );
    let text = drtc_ir::text::print(&im.graph);
    assert!(text.contains(r#"target = "aten.sort.default""#), "{text}");
    assert!(
        text.contains(r#"types = "(f32[3, 4]; i64[3, 4])""#),
        "{text}"
    );
    let back = drtc_ir::parse(&text).expect("parses");
    assert_eq!(drtc_ir::text::print(&back), text);
    // the torch emitter spells them as torch.ops calls, tuples unpacked
    let seed = drtc_backends_free_emit(&back);
    assert!(
        seed.contains("torch.ops.aten.sort.default(tensor_1, -1, False)"),
        "{seed}"
    );
}

/// The seed-format emission of a graph (through the IR text, so this crate's tests need
/// no backend): checks only what the importer put in the attributes.
fn drtc_backends_free_emit(g: &drtc_ir::Graph) -> String {
    let mut out = String::new();
    for &n in g.body() {
        let node = g.node(n);
        if node.op == Op::Aten {
            let ins: Vec<String> = node
                .inputs
                .iter()
                .map(|v| {
                    let pos = g.body().iter().position(|&m| g.node(m).outputs.contains(v));
                    pos.map_or("x".to_string(), |p| format!("tensor_{p}"))
                })
                .collect();
            let args = drtc_ir::op::aten::render_args(
                node.attrs["args"].as_str().unwrap(),
                &ins,
                "x.device",
            )
            .unwrap();
            out.push_str(&format!(
                "torch.ops.{}({args})\n",
                node.attrs["target"].as_str().unwrap()
            ));
        }
    }
    out
}

#[test]
fn batch_norm_statistics_are_the_modules_own_updates() {
    let inputs = json!([
        {"placeholder": "p_bn_weight", "kind": "parameter", "target": "bn.weight"},
        {"placeholder": "p_bn_bias", "kind": "parameter", "target": "bn.bias"},
        {"placeholder": "b_bn_running_mean", "kind": "buffer", "target": "bn.running_mean", "persistent": true},
        {"placeholder": "b_bn_running_var", "kind": "buffer", "target": "bn.running_var", "persistent": true},
        {"placeholder": "x", "kind": "activation", "index": 0},
    ]);
    let nodes = vec![
        placeholder("p_bn_weight", t(&[3])),
        placeholder("p_bn_bias", t(&[3])),
        placeholder("b_bn_running_mean", t(&[3])),
        placeholder("b_bn_running_var", t(&[3])),
        placeholder("x", t(&[2, 3, 4, 4])),
        call(
            "bn",
            "aten._native_batch_norm_legit_functional.default",
            json!([
                node("x"),
                node("p_bn_weight"),
                node("p_bn_bias"),
                node("b_bn_running_mean"),
                node("b_bn_running_var"),
                true,
                0.1,
                1e-5
            ]),
            json!([t(&[2, 3, 4, 4]), t(&[3]), t(&[3]), t(&[3]), t(&[3])]),
            21,
        ),
        call(
            "y",
            "operator.getitem",
            json!([node("bn"), 0]),
            t(&[2, 3, 4, 4]),
            21,
        ),
        call("m", "operator.getitem", json!([node("bn"), 3]), t(&[3]), 21),
    ];
    let ok = file(
        inputs.clone(),
        nodes.clone(),
        json!([{"kind": "buffer_mutation", "target": "bn.running_mean", "arg": "m"}, {"kind": "user", "arg": "y"}]),
    );
    let im = import(&ok).expect("imports");
    let bn = im
        .graph
        .body()
        .iter()
        .find(|&&n| im.graph.node(n).op == Op::BatchNorm);
    assert!(bn.is_some(), "{}", drtc_ir::text::print(&im.graph));
    assert!(im.state_updates.is_empty(), "{:?}", im.state_updates);
    assert_eq!(im.graph.outputs().len(), 1);
    // another buffer written in forward is module state: its new value is an output
    // after the user outputs, which the generated module writes back
    let state = file(
        inputs.clone(),
        nodes.clone(),
        json!([{"kind": "buffer_mutation", "target": "other.state", "arg": "m", "assigned": true}, {"kind": "user", "arg": "y"}]),
    );
    let im = import(&state).expect("imports");
    assert_eq!(im.state_updates.len(), 1, "{:?}", im.state_updates);
    assert_eq!(im.state_updates[0].name, "other.state");
    assert!(im.state_updates[0].assigned && !im.state_updates[0].attribute);
    assert_eq!(im.state_updates[0].line, Some(21));
    assert_eq!(im.graph.outputs().len(), 2);
    assert_eq!(im.graph.ty(im.graph.outputs()[1]).shape, vec![3]);
    // a mutated input cannot be reproduced: refused with its line
    let bad = file(
        inputs,
        nodes,
        json!([{"kind": "input_mutation", "target": "x", "arg": "m"}, {"kind": "user", "arg": "y"}]),
    );
    let e = import(&bad).unwrap_err();
    assert!(
        matches!(e, ExportError::Unsupported { line: Some(21), .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("input_mutation"), "{e}");
}

#[test]
fn refusals_name_the_target_and_the_line() {
    let j = file(
        json!([{"placeholder": "x", "kind": "activation", "index": 0}]),
        vec![
            placeholder("x", t(&[3])),
            call(
                "c",
                "aten.bernoulli.default",
                json!([node("x"), {"unsupported": "Generator", "text": "<torch._C.Generator>"}]),
                t(&[3]),
                5,
            ),
        ],
        json!([{"kind": "user", "arg": "c"}]),
    );
    let e = import(&j).unwrap_err();
    match &e {
        ExportError::Op {
            target,
            line,
            message,
        } => {
            assert_eq!(target, "aten.bernoulli.default");
            assert_eq!(*line, Some(5));
            assert!(message.contains("Generator"), "{message}");
        }
        other => panic!("expected an op error, got {other:?}"),
    }
    let src = "import torch\n\n\n\n    y = torch.bernoulli(x, generator=g)\n";
    let shown = e.render("model.py", src);
    assert!(shown.contains("model.py:5"), "{shown}");
    assert!(shown.contains("aten.bernoulli.default"), "{shown}");
    // the helper's own failures keep export's reason and line
    let j = json!({"ok": false, "error": {"kind": "export", "message": "Could not guard on data-dependent expression", "line": 3}}).to_string();
    let e = import(&j).unwrap_err();
    assert!(
        matches!(e, ExportError::Export { line: Some(3), .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("data-dependent"), "{e}");
    assert!(matches!(
        import("{not json").unwrap_err(),
        ExportError::Json { .. }
    ));
}

#[test]
fn a_mapping_that_disagrees_with_the_export_falls_back_to_pytorch() {
    // metadata that no IR inference gives (a relu "returning" f16): run by PyTorch, noted
    let j = file(
        json!([{"placeholder": "x", "kind": "activation", "index": 0}]),
        vec![
            placeholder("x", t(&[3])),
            call(
                "r",
                "aten.relu.default",
                json!([node("x")]),
                json!({"shape": [3], "dtype": "float16", "stride": [1]}),
                4,
            ),
        ],
        json!([{"kind": "user", "arg": "r"}]),
    );
    let im = import(&j).expect("imports");
    assert_eq!(im.library_calls.len(), 1);
    assert!(
        im.notes[0].contains("aten.relu.default (line 4)"),
        "{:?}",
        im.notes
    );
}

/// Tensor attributes the helper promoted to buffers: read ones are inputs under their
/// attribute names, unread ones are no inputs at all, and one named like a forward
/// argument is refused (both would name one input of the generated module).
#[test]
fn tensor_attributes_are_inputs_only_where_forward_reads_them() {
    let inputs = |target: &str| {
        json!([
            {"placeholder": "b_h", "kind": "buffer", "target": target, "persistent": false, "attribute": true},
            {"placeholder": "b_unused", "kind": "buffer", "target": "unused", "persistent": false, "attribute": true},
            {"placeholder": "x", "kind": "activation", "index": 0},
        ])
    };
    let nodes = vec![
        placeholder("b_h", t(&[3])),
        placeholder("b_unused", t(&[5])),
        placeholder("x", t(&[3])),
        call(
            "y",
            "aten.add.Tensor",
            json!([node("x"), node("b_h")]),
            t(&[3]),
            9,
        ),
    ];
    let outputs = json!([{"kind": "user", "arg": "y"}]);
    let im = import(&file(inputs("hidden"), nodes.clone(), outputs.clone())).expect("imports");
    let names: Vec<&str> = im
        .graph
        .inputs()
        .iter()
        .map(|&v| im.graph.value(v).name.as_deref().unwrap_or(""))
        .collect();
    assert_eq!(names, vec!["x", "hidden"]);
    let e = import(&file(inputs("x"), nodes, outputs)).unwrap_err();
    assert!(
        e.to_string()
            .contains("has the name of the module's tensor `self.x`"),
        "{e}"
    );
}
