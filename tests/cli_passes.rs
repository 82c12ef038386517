//! End-to-end tests of `drtc fmt` and `drtc opt`: run the built binary on good and bad
//! input and check exit codes, stdout and the messages on stderr.

use std::path::PathBuf;
use std::process::{Command, Output};

/// A canonical (already formatted) graph with a duplicate and a dead node.
const CANONICAL: &str = "\
graph @g(%x: f32[4, 8], %w: param f32[8]) {
  %0 = mul(%x, %w) : f32[4, 8]
  %1 = mul(%x, %w) : f32[4, 8]
  %2 = exp(%0) : f32[4, 8]
  %3 = add(%0, %1) : f32[4, 8]
  return %3
}
";

/// `CANONICAL` after `cse,dce`.
const OPTIMIZED: &str = "\
graph @g(%x: f32[4, 8], %w: param f32[8]) {
  %0 = mul(%x, %w) : f32[4, 8]
  %1 = add(%0, %0) : f32[4, 8]
  return %1
}
";

/// Writes `contents` to a fresh file named `name` and returns its path.
fn file(name: &str, contents: &[u8]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_passes");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

fn drtc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_drtc"))
        .args(args)
        .output()
        .expect("drtc runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn path_str(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

// ------------------------------------------------------------------ fmt

#[test]
fn fmt_prints_a_canonical_file_unchanged_and_check_passes() {
    let p = file("canonical.drt", CANONICAL.as_bytes());
    let o = drtc(&["fmt", path_str(&p)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), CANONICAL);
    // the dead `exp` is a warning, on stderr, and does not fail the command
    assert!(
        stderr(&o).contains("warning: node #2: the result of `exp` is never used"),
        "{}",
        stderr(&o)
    );
    let o = drtc(&["fmt", "--check", path_str(&p)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
}

#[test]
fn fmt_normalizes_and_check_fails_on_unformatted_input() {
    let messy = "// a comment\ngraph @g(%x: f32[4, 8],   %w: param f32[8]) {\n  %0 = mul(%x, %w) : f32[4, 8]\n\n  %1 = mul(%x, %w)  : f32[4, 8]\n  %2 = exp(%0) : f32[4, 8]\n  %3 = add(%0, %1) : f32[4, 8]\n  return %3\n}\n";
    let p = file("messy.drt", messy.as_bytes());
    let o = drtc(&["fmt", path_str(&p)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), CANONICAL);
    let o = drtc(&["fmt", "--check", path_str(&p)]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "");
    assert!(
        stderr(&o).contains("messy.drt is not formatted (first difference at line 1)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn fmt_parse_errors_point_at_the_line_with_a_caret() {
    let bad = "graph @g(%x: f32[4]) {\n  %0 = rleu(%x) : f32[4]\n  return %0\n}\n";
    let p = file("parse_error.drt", bad.as_bytes());
    let o = drtc(&["fmt", path_str(&p)]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains("rleu"), "{err}");
    assert!(err.contains("parse_error.drt:2:8"), "{err}");
    assert!(
        err.contains("2 |   %0 = rleu(%x) : f32[4]\n  |        ^^^^"),
        "{err}"
    );
    assert_eq!(stdout(&o), "");
}

#[test]
fn fmt_lists_verifier_errors_one_per_line() {
    // both result types are wrong: relu keeps the shape, sum over dim 0 drops it
    let bad = "graph @g(%x: f32[4, 8]) {\n  %0 = relu(%x) : f32[4, 9]\n  %1 = sum(%x) {dim = [0], keepdim = false} : f32[4]\n  %2 = add(%0, %1) : f32[4, 9]\n  return %2\n}\n";
    let p = file("verify_error.drt", bad.as_bytes());
    let o = drtc(&["fmt", path_str(&p)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("verify_error.drt does not verify"), "{err}");
    let errors: Vec<&str> = err
        .lines()
        .filter(|l| l.trim_start().starts_with("error: node #"))
        .collect();
    assert!(errors.len() >= 2, "{err}");
    assert!(
        errors[0].contains("node #0") && errors[0].contains("f32[4, 9]"),
        "{err}"
    );
    assert!(
        errors[1].contains("node #1") && errors[1].contains("f32[8]"),
        "{err}"
    );
}

#[test]
fn fmt_reports_unreadable_files() {
    let o = drtc(&["fmt", "/nonexistent/dir/x.drt"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot read `/nonexistent/dir/x.drt`"),
        "{}",
        stderr(&o)
    );

    let p = file("binary.drt", &[0xff, 0xfe, 0x00, 0x01]);
    let o = drtc(&["fmt", path_str(&p)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot read"), "{}", stderr(&o));
}

#[test]
fn fmt_never_panics_on_garbage() {
    for (i, junk) in [
        "",
        "graph",
        "graph @g(",
        "}}}{{{",
        "graph @g() {\n  return %9\n}\n",
        "%0 = relu(%x)",
    ]
    .iter()
    .enumerate()
    {
        let p = file(&format!("junk{i}.drt"), junk.as_bytes());
        let o = drtc(&["fmt", path_str(&p)]);
        assert_eq!(o.status.code(), Some(2), "{junk:?}: {}", stderr(&o));
        assert!(
            stderr(&o).starts_with("error: "),
            "{junk:?}: {}",
            stderr(&o)
        );
        assert!(!stderr(&o).contains("panicked"), "{junk:?}: {}", stderr(&o));
    }
}

// ------------------------------------------------------------------ opt

#[test]
fn opt_runs_the_pipeline_and_prints_the_result() {
    let p = file("opt_input.drt", CANONICAL.as_bytes());
    let o = drtc(&["opt", path_str(&p), "--passes", "cse,dce"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), OPTIMIZED);
    assert_eq!(stderr(&o), "");
    // the exp is dead from the start, so `dce,cse` reaches the same result; `cse` alone
    // keeps it
    let o = drtc(&["opt", path_str(&p), "--passes", "dce,cse"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), OPTIMIZED);
    let o = drtc(&["opt", path_str(&p), "--passes", "cse"]);
    assert!(stdout(&o).contains("exp(%0)"), "{}", stdout(&o));
}

#[test]
fn opt_unknown_pass_lists_the_valid_ones() {
    let p = file("opt_bogus.drt", CANONICAL.as_bytes());
    let o = drtc(&["opt", path_str(&p), "--passes", "bogus"]);
    assert_eq!(o.status.code(), Some(2));
    let valid = drtc_passes::registry::names().join(", ");
    assert!(valid.contains("cse") && valid.contains("dce"), "{valid}");
    assert_eq!(
        stderr(&o),
        format!("error: invalid pipeline: unknown pass `bogus`; valid passes: {valid}\n  bogus\n  ^^^^^\n")
    );
    assert_eq!(stdout(&o), "");
    // reported even when the file does not exist: the pipeline is checked first
    let o = drtc(&["opt", "/nonexistent.drt", "--passes", "cse,bogus"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(&format!("valid passes: {valid}\n  cse,bogus\n      ^^^^^")),
        "{}",
        stderr(&o)
    );
}

#[test]
fn opt_unknown_option_and_bad_syntax_are_reported_with_a_caret() {
    let p = file("opt_options.drt", CANONICAL.as_bytes());
    let o = drtc(&["opt", path_str(&p), "--passes", "dce,cse{max-ops=6}"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown option `max-ops` for pass `cse`; valid options: commutative\n  dce,cse{max-ops=6}\n          ^^^^^^^"),
        "{}",
        stderr(&o)
    );
    let o = drtc(&["opt", path_str(&p), "--passes", "dce,,cse"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("expected a pass name, found `,`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn opt_prints_ir_after_a_named_pass_to_stderr() {
    let p = file("opt_print.drt", CANONICAL.as_bytes());
    let o = drtc(&[
        "opt",
        path_str(&p),
        "--passes",
        "cse,dce",
        "--print-ir-after",
        "cse",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), OPTIMIZED);
    let err = stderr(&o);
    let header = "// ----- IR after `cse` (pass 1 of the pipeline) -----\n";
    assert!(err.starts_with(header), "{err}");
    // the pass's decisions come with its IR; after cse the dead exp is still there
    let dump = &err[header.len()..];
    assert!(
        dump.starts_with("// cse: merged #1 `mul` into #0\ngraph @g(") && err.contains("exp(%0)"),
        "{err}"
    );
    assert!(!err.contains("after `dce`"), "{err}");

    let o = drtc(&[
        "opt",
        path_str(&p),
        "--passes",
        "cse",
        "--print-ir-after",
        "dce",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "cannot print the IR after `dce`: it is not in the pipeline (its passes: cse)"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn opt_time_passes_prints_a_table() {
    let p = file("opt_time.drt", CANONICAL.as_bytes());
    let o = drtc(&[
        "opt",
        path_str(&p),
        "--passes",
        "cse,dce,cse",
        "--time-passes",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), OPTIMIZED);
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 5, "{err}");
    assert!(
        lines[0].contains("changed") && lines[0].contains("pass (ms)"),
        "{err}"
    );
    assert!(
        lines[1].trim_start().starts_with("1 cse") && lines[1].contains("yes"),
        "{err}"
    );
    assert!(
        lines[2].trim_start().starts_with("2 dce") && lines[2].contains("yes"),
        "{err}"
    );
    assert!(
        lines[3].trim_start().starts_with("3 cse") && lines[3].contains("no"),
        "{err}"
    );
    assert!(lines[4].trim_start().starts_with("total"), "{err}");
}

#[test]
fn opt_log_decisions_shows_what_each_pass_did() {
    let p = file("opt_log.drt", CANONICAL.as_bytes());
    let o = drtc(&[
        "opt",
        path_str(&p),
        "--passes",
        "cse,dce",
        "--log-decisions",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "// cse: merged #1 `mul` into #0\n// dce: removed #1 `exp`: its results are unused\n"
    );
}

#[test]
fn opt_rejects_invalid_input_ir() {
    let bad = "graph @g(%x: f32[4]) {\n  %0 = relu(%x) : f32[5]\n  return %0\n}\n";
    let p = file("opt_invalid.drt", bad.as_bytes());
    let o = drtc(&["opt", path_str(&p), "--passes", "dce"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("opt_invalid.drt does not verify (1 error):\n  error: node #0"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn opt_requires_a_pipeline() {
    let p = file("opt_nopasses.drt", CANONICAL.as_bytes());
    let o = drtc(&["opt", path_str(&p)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--passes"), "{}", stderr(&o));
}

// ------------------------------------------------------------------ help

#[test]
fn help_texts_explain_and_give_examples() {
    let o = drtc(&["opt", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    let help = stdout(&o);
    for needle in [
        "--passes",
        "--print-ir-after",
        "--time-passes",
        "Passes:",
        "cse",
        "dce",
        "commutative",
        "Examples:",
        "drtc opt model.drt --passes cse,dce",
    ] {
        assert!(help.contains(needle), "`{needle}` missing from:\n{help}");
    }
    let o = drtc(&["fmt", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    let help = stdout(&o);
    for needle in [
        "--check",
        "canonical",
        "Examples:",
        "drtc fmt --check model.drt",
    ] {
        assert!(help.contains(needle), "`{needle}` missing from:\n{help}");
    }
    let o = drtc(&["--help"]);
    assert!(
        stdout(&o).contains("fmt") && stdout(&o).contains("opt"),
        "{}",
        stdout(&o)
    );
}
