//! End-to-end: `drtc opt --passes simplify --print-ir-after simplify` shows what changed
//! and why (the rules that fired, the op difference, the cost before and after) above the
//! rewritten IR; `decompose{max-ops=N}` lists its subproblems with `--log-decisions`.

use std::path::PathBuf;
use std::process::Command;

const SWISH: &str = "\
graph @swish(%x: f32[8, 16]) {
  %0 = sigmoid(%x) : f32[8, 16]
  %1 = mul(%x, %0) : f32[8, 16]
  %2 = full() {shape = [], value = 2.0, dtype = f32} : f32[]
  %3 = mul(%1, %2) : f32[8, 16]
  %4 = full() {shape = [], value = 4.0, dtype = f32} : f32[]
  %5 = div(%3, %4) : f32[8, 16]
  return %5
}
";

fn file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_simplify");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn drtc(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
fn print_ir_after_simplify_says_what_changed_and_why() {
    let p = file("swish.drt", SWISH);
    let (code, out, err) = drtc(&[
        "opt",
        p.to_str().unwrap(),
        "--passes",
        "simplify",
        "--print-ir-after",
        "simplify",
    ]);
    assert_eq!(code, 0, "{err}");
    let expected = "\
graph @swish(%x: f32[8, 16]) {
  %0 = silu(%x) : f32[8, 16]
  %1 = full() {shape = [], value = 0.5, dtype = f32} : f32[]
  %2 = mul(%0, %1) : f32[8, 16]
  return %2
}
";
    assert_eq!(out, expected);
    assert!(err.starts_with("// ----- IR after `simplify`"), "{err}");
    for why in [
        "// simplify: rule `silu` applied",
        "// simplify: rule `fold-mul-div` applied",
        "// simplify: ops: -div, -full, -mul, -sigmoid, +silu",
        "// simplify: cost ",
    ] {
        assert!(err.contains(why), "missing `{why}` in:\n{err}");
    }
    assert!(err.ends_with(expected), "{err}");
}

#[test]
fn decompose_lists_subproblems() {
    let p = file("swish2.drt", SWISH);
    let (code, out, err) = drtc(&[
        "opt",
        p.to_str().unwrap(),
        "--passes",
        "decompose{max-ops=2}",
        "--log-decisions",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, SWISH, "decompose leaves the graph as it is");
    assert!(
        err.contains(
            "// decompose: subproblem 0 (2 ops): [#0 sigmoid, #1 mul] reads (x) writes (%1)"
        ),
        "{err}"
    );
    assert!(
        err.contains("// decompose: subproblem 1 (2 ops): [#2 full, #3 mul, #4 full, #5 div] reads (%1) writes (%5)"),
        "{err}"
    );
}
