//! Shared by the tests that run generated modules under Triton's CPU interpreter.

use std::path::{Path, PathBuf};

/// drtc's Python, found as every launch finds it (`drtc_env`).
pub fn python() -> PathBuf {
    drtc_env::PythonEnv::locate(&drtc_env::DrtcHome::from_env())
        .unwrap_or_else(|e| panic!("{e}"))
        .python
}

/// Writes `reference` and `candidate` under `out` as `{stem}_ref.py` and
/// `{stem}_drtc.py`; returns their entry (`name`) for [`assert_pairs_match`].
pub fn write_pair(
    out: &Path,
    stem: &str,
    name: &str,
    reference: &str,
    candidate: &str,
) -> serde_json::Value {
    let (rp, cp) = (
        out.join(format!("{stem}_ref.py")),
        out.join(format!("{stem}_drtc.py")),
    );
    std::fs::write(&rp, reference).unwrap();
    std::fs::write(&cp, candidate).unwrap();
    serde_json::json!({"name": name, "reference": rp, "candidate": cp})
}

/// Runs `tests/check_pairs.py` on `pairs` (`{name, reference, candidate}`, listed in
/// `out/pairs.json`) and asserts that every candidate matches its reference.
pub fn assert_pairs_match(out: &Path, pairs: &[serde_json::Value]) {
    let list = out.join("pairs.json");
    std::fs::write(&list, serde_json::to_string(pairs).unwrap()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check_pairs.py");
    let result = std::process::Command::new(python())
        .arg(&script)
        .arg(&list)
        .output()
        .expect("run `drtc setup` or set DRTC_PYTHON");
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert!(
        result.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let failed: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.contains("\"ok\": true"))
        .collect();
    assert_eq!(stdout.lines().count(), pairs.len(), "{stdout}");
    assert!(failed.is_empty(), "mismatches:\n{}", failed.join("\n"));
}
