//! The verified-module cache through `drtc compile`: a second compile of the same program
//! with the same options returns the same module and report, marked as a hit, without
//! verifying again (the default); with `--no-cache`, another option or another program
//! text it compiles anew.
//! `--timings` prints where a compile's time went and leaves the key alone.

use drtc::verifier::{DrtcHome, PythonEnv};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn data(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/verifier")).join(name)
}

/// `drtc compile` with a private home (its own cache) and drtc's interpreter.
fn compile(home: &Path, program: &Path, out: &Path, report: &Path, extra: &[&str]) -> Output {
    let python = PythonEnv::locate(&DrtcHome::from_env()).expect("drtc setup");
    Command::new(env!("CARGO_BIN_EXE_drtc"))
        .env("DRTC_HOME", home)
        .env("DRTC_PYTHON", &python.python)
        .arg("compile")
        .arg(program)
        .arg("-o")
        .arg(out)
        .arg("--report")
        .arg(report)
        .args(["--device", "cpu"])
        .args(extra)
        .output()
        .expect("run drtc compile")
}

fn report(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("report")).expect("JSON")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_repeated_compile_comes_from_the_cache_and_a_changed_one_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let program = dir.path().join("seed.py");
    std::fs::copy(data("seed_relu_add.py"), &program).unwrap();
    let (out1, rep1) = (dir.path().join("m1.py"), dir.path().join("r1.json"));
    let first = compile(&home, &program, &out1, &rep1, &["--timings"]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(stderr(&first).contains("verifying against the reference"));
    // --timings: where the time went (and it does not change the cache's key below)
    let said = stderr(&first);
    assert!(
        said.contains("timings: front end")
            && said.contains("; compile ")
            && said.contains("5 trials")
            && said.contains("load"),
        "{said}"
    );
    let stages = &report(&rep1)["timings"];
    assert!(stages["frontend_s"].as_f64().is_some(), "{stages}");
    assert!(
        stages["compile_ms"].as_f64().unwrap_or(0.0) > 0.0,
        "{stages}"
    );
    // a fresh home: the compile waited for a worker's start, and says where it went
    let start = &stages["worker_start"];
    assert!(start["imports_s"].as_f64().unwrap_or(0.0) > 0.0, "{stages}");
    assert!(
        start["wall_s"].as_f64().unwrap_or(0.0) >= start["imports_s"].as_f64().unwrap_or(0.0),
        "{stages}"
    );
    assert!(said.contains("(its start: interpreter "), "{said}");
    let phases = &report(&rep1)["verification"]["phases"];
    assert!(phases["trials_s"].as_f64().unwrap_or(0.0) > 0.0, "{phases}");
    assert!(report(&rep1).get("cache").is_none());

    let (out2, rep2) = (dir.path().join("m2.py"), dir.path().join("r2.json"));
    let second = compile(&home, &program, &out2, &rep2, &[]);
    assert!(second.status.success(), "{}", stderr(&second));
    let said = stderr(&second);
    assert!(said.contains("from the verified-module cache"), "{said}");
    assert!(!said.contains("verifying against the reference"), "{said}");
    assert_eq!(
        std::fs::read_to_string(&out1).unwrap(),
        std::fs::read_to_string(&out2).unwrap()
    );
    let r2 = report(&rep2);
    assert_eq!(r2["cache"]["hit"], true, "{r2}");
    assert_eq!(r2["verification"]["verified"], true, "{r2}");

    // --no-cache, another option, another program text: each compiles and verifies anew
    let (out3, rep3) = (dir.path().join("m3.py"), dir.path().join("r3.json"));
    for extra in [&["--no-cache"][..], &["--max-ops", "1"][..]] {
        let o = compile(&home, &program, &out3, &rep3, extra);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("verifying against the reference"),
            "{extra:?}: {}",
            stderr(&o)
        );
        assert!(report(&rep3).get("cache").is_none(), "{extra:?}");
    }
    let mut text = std::fs::read_to_string(&program).unwrap();
    text.push_str("\n# an edit\n");
    std::fs::write(&program, text).unwrap();
    let o = compile(&home, &program, &out3, &rep3, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(report(&rep3).get("cache").is_none());
}
