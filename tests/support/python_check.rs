//! Running one of the `tests/check_*.py` scripts with drtc's worker environment: the
//! worker's package folder first, then the script's own arguments; its stdout's JSON lines.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Runs `tests/<script>` with the worker folder and `args`, asserts that it succeeds, and
/// returns every JSON object it printed, one per line.
pub fn run_check(script: &str, args: &[&Path]) -> Vec<Value> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let home = drtc::verifier::DrtcHome::from_env();
    let python = drtc::verifier::PythonEnv::locate(&home)
        .unwrap_or_else(|e| panic!("{e}"))
        .python;
    let out = Command::new(python)
        .arg(root.join("tests").join(script))
        .arg(root.join("src/verifier/worker"))
        .args(args)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The object among `cases` whose `case` field is `name`.
#[allow(dead_code)] // each test crate compiles this module; not every one has cases
pub fn case(cases: &[Value], name: &str) -> Value {
    cases
        .iter()
        .find(|c| c["case"] == name)
        .unwrap_or_else(|| panic!("no case {name}: {cases:?}"))
        .clone()
}
