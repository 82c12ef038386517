//! `drtc ops`: the op matrix runs, lists every op of the IR once, and its cells are the
//! layers' answers (a pointwise op is lowered by the pointwise template and generated as a
//! kernel; an op without a template shows its gap and is computed with PyTorch).

use std::process::Command;

fn drtc(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .args(args)
        .output()
        .expect("run drtc");
    assert!(
        out.status.success(),
        "drtc {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn rows() -> Vec<serde_json::Value> {
    drtc(&["ops", "--json"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn row<'a>(rows: &'a [serde_json::Value], op: &str) -> &'a serde_json::Value {
    rows.iter()
        .find(|r| r["op"] == op)
        .unwrap_or_else(|| panic!("no row for {op}"))
}

#[test]
fn every_op_has_one_row() {
    let rows = rows();
    assert_eq!(rows.len(), drtc_ir::Op::ALL.len());
    for op in drtc_ir::Op::ALL {
        assert_eq!(
            rows.iter().filter(|r| r["op"] == op.name()).count(),
            1,
            "{op}"
        );
    }
}

#[test]
fn cells_are_the_layers_answers() {
    let rows = rows();
    let relu = row(&rows, "relu");
    assert_eq!(relu["triton"], "template:pointwise");
    assert_eq!(relu["codegen"], "kernel");
    assert_eq!(relu["frontend"], "yes");
    assert_eq!(relu["infer"], "f32[4, 8]");
    assert_eq!(relu["flops"], 32);
    assert_eq!(relu["torch"], "torch.relu");
    assert_eq!(relu["synth"], "Unary");
    assert_eq!(relu["egraph_folds"], true);

    let cummax = row(&rows, "cummax");
    assert!(
        cummax["triton"].as_str().unwrap().starts_with("gap: "),
        "{cummax}"
    );
    assert_eq!(cummax["codegen"], "pytorch");
    let cumsum = row(&rows, "cumsum");
    assert_eq!(cumsum["triton"], "template:reduction");
    assert_eq!(cumsum["codegen"], "kernel");

    let conv = row(&rows, "conv2d");
    assert_eq!(conv["triton"], "library call");
    assert_eq!(conv["codegen"], "library");

    let transpose = row(&rows, "transpose");
    assert_eq!(transpose["triton"], "host view");
    assert_eq!(transpose["codegen"], "host");

    let softmax = row(&rows, "softmax");
    assert_eq!(softmax["triton"], "template:reduction");
    assert_eq!(softmax["codegen"], "kernel");
}

#[test]
fn the_default_table_fits_in_100_columns() {
    let text = drtc(&["ops"]);
    for line in text.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.len()
        );
    }
    let header = text.lines().next().unwrap();
    for col in [
        "op", "category", "front", "triton", "codegen", "synth", "e-graph",
    ] {
        assert!(header.contains(col), "{header}");
    }
    assert!(
        text.contains(&format!("\n{} ops: ", drtc_ir::Op::ALL.len())),
        "{text}"
    );
}

#[test]
fn the_wide_table_has_a_header_and_a_summary() {
    let text = drtc(&["ops", "--wide", "--only", "relu"]);
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    for col in [
        "op", "frontend", "infer", "flops", "triton", "codegen", "synth", "e-graph",
    ] {
        assert!(header.contains(col), "{header}");
    }
    assert!(text.contains("template:pointwise"), "{text}");
    // relu and leaky_relu match `relu`
    assert!(text.contains("\n2 ops: "), "{text}");
}
