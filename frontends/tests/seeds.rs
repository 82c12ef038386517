//! The committed seed programs cover every operator of ops.md list A.

mod common;

use std::collections::BTreeSet;

/// The IR names of ops.md's list A (the DRTriton generator's operators).
const LIST_A: &[&str] = &[
    "add",
    "sub",
    "mul",
    "div",
    "maximum",
    "minimum",
    "lerp",
    "matmul",
    "bmm",
    "sum",
    "mean",
    "max",
    "min",
    "argmax",
    "argmin",
    "var",
    "norm",
    "transpose",
    "relu",
    "leaky_relu",
    "sigmoid",
    "tanh",
    "silu",
    "gelu",
    "selu",
    "hardsigmoid",
    "softplus",
    "softsign",
    "elu",
    "hardtanh",
    "clamp",
    "logsigmoid",
    "abs",
    "cos",
    "sin",
    "exp2",
    "softmax",
    "log_softmax",
    "cumsum",
    "cummax",
    "cummin",
    "batch_norm",
    "layer_norm",
    "group_norm",
    "instance_norm",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "triu",
    "tril",
    "cat",
    "stack",
];

#[test]
fn seeds_cover_list_a() {
    let mut seen = BTreeSet::new();
    let mut programs = 0;
    for (label, text) in common::corpus()
        .into_iter()
        .filter(|(l, _)| l.starts_with("list_a.jsonl"))
    {
        let lowered =
            drtc_frontends::lower(&text).unwrap_or_else(|e| panic!("{}", e.render(&label, &text)));
        assert_eq!(lowered.format, drtc_frontends::Format::Seed, "{label}");
        programs += 1;
        for &n in lowered.graph.body() {
            seen.insert(lowered.graph.node(n).op.name());
        }
    }
    assert!(programs > 0, "no seed programs");
    let missing: Vec<&&str> = LIST_A.iter().filter(|op| !seen.contains(**op)).collect();
    assert!(
        missing.is_empty(),
        "ops of list A without a seed program: {missing:?}"
    );
}
