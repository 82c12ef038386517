//! The precision policy through the CLI, on CPU: the verifier's fp32 rule
//! (`allclose(atol=rtol=1e-4)`) rejects what the relative-norm rule lets through; a
//! compile reports each GEMM region's implementation and why; `--search` on CPU says it
//! needs a GPU and still verifies, `--search=quick` (the default) is silent there and an
//! unknown scope is refused. Needs the Python of `drtc setup` (or `DRTC_PYTHON`).

use std::path::PathBuf;
use std::process::Command;

fn data(p: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data")).join(p)
}

fn drtc(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .args(args)
        .output()
        .expect("drtc runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn the_fp32_rule_is_stricter_than_the_relative_norm() {
    let (r, c) = (
        data("verifier/seed_relu_add.py"),
        data("verifier/near_tolerance.py"),
    );
    let (r, c) = (r.to_str().unwrap(), c.to_str().unwrap());
    let (ok, out, err) = drtc(&["verify", r, c, "--device", "cpu", "--rule", "rel-norm"]);
    assert!(ok, "rel-norm rule: {out}{err}");
    let (ok, out, err) = drtc(&["verify", r, c, "--device", "cpu", "--rule", "allclose-1e-4"]);
    assert!(!ok, "allclose rule must reject: {out}{err}");
    assert!(out.contains("allclose(atol=rtol=1e-4) fails"), "{out}");
    // the default is the fp32 policy's rule
    let (ok, out, err) = drtc(&["verify", r, c, "--device", "cpu"]);
    assert!(!ok, "the default rule must reject: {out}{err}");
}

#[test]
fn compile_reports_the_gemm_choice_and_search_needs_a_gpu() {
    let dir = std::env::temp_dir().join(format!("drtc-precision-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = data("gemm/linear_relu.py");
    for (policy, want) in [("fp32", "triton:tf32x3"), ("tf32", "triton:tf32")] {
        let out = dir.join(format!("{policy}.py"));
        let report = dir.join(format!("{policy}.json"));
        let (ok, _, err) = drtc(&[
            "compile",
            model.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--device",
            "cpu",
            "--precision",
            policy,
            "--search",
            "--report",
            report.to_str().unwrap(),
        ]);
        assert!(ok, "{policy}: {err}");
        assert!(err.contains("need a CUDA GPU"), "{err}");
        assert!(err.contains("verified on cpu"), "{err}");
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        let gemm = r["regions"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|x| x["gemm"].as_object().cloned())
            .expect("a GEMM region");
        assert_eq!(gemm["implementation"], want, "{policy}");
        assert_eq!(gemm["k"], 40);
        assert!(gemm["reason"].as_str().unwrap().contains(policy));
        let summary = r["verification"]["summary"].as_str().unwrap_or("");
        if policy == "fp32" {
            assert!(summary.contains("1e-4: yes"), "{summary}");
        }
    }
}

/// The reference-accuracy rule: a candidate rejected by the value rule against a reference
/// whose own fp32 result is outside the rule is judged against the float64 truth.
#[test]
fn a_rule_the_reference_itself_fails_is_judged_against_float64() {
    let reference = data("verifier/cancel_ref.py");
    let r = reference.to_str().unwrap();
    let strict = ["--device", "cpu", "--rule", "allclose-1e-4"];
    let exact = data("verifier/cancel_exact.py");
    let (ok, out, err) = drtc(&[&["verify", r, exact.to_str().unwrap()][..], &strict].concat());
    assert!(ok, "the exact result must verify: {out}{err}");
    assert!(
        out.contains("accepted by the reference-accuracy rule"),
        "{out}"
    );
    // further from the truth than twice the reference's own error: refused, with figures
    let wrong = data("verifier/cancel_wrong.py");
    let (ok, out, err) = drtc(&[&["verify", r, wrong.to_str().unwrap()][..], &strict].concat());
    assert!(!ok, "a wrong candidate must fail: {out}{err}");
    assert!(out.contains("more than 2x the reference's own"), "{out}");
    // a program that draws random numbers has no float64 truth
    let random = data("verifier/cancel_random_ref.py");
    let (ok, out, err) = drtc(
        &[
            &["verify", random.to_str().unwrap(), exact.to_str().unwrap()][..],
            &strict,
        ]
        .concat(),
    );
    assert!(!ok, "no truth, no rescue: {out}{err}");
    assert!(out.contains("draws random numbers"), "{out}");
}

/// A running statistic that is zero in exact arithmetic is compared with a norm floor:
/// two roundings of zero are not a relative error.
#[test]
fn state_that_is_rounding_noise_around_zero_verifies() {
    let (r, c) = (
        data("verifier/kb_zero_mean_bn.py"),
        data("verifier/kb_zero_mean_bn_new.py"),
    );
    let (ok, out, err) = drtc(&[
        "verify",
        r.to_str().unwrap(),
        c.to_str().unwrap(),
        "--device",
        "cpu",
        "--rule",
        "allclose-1e-4",
    ]);
    assert!(ok, "{out}{err}");
}

#[test]
fn search_scopes_parse_and_quick_is_silent_on_cpu() {
    let dir = std::env::temp_dir().join(format!("drtc-search-scope-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (model, out) = (data("gemm/linear_relu.py"), dir.join("quick.py"));
    let compile = |scope: &str| {
        let (m, o) = (model.to_str().unwrap(), out.to_str().unwrap());
        drtc(&["compile", m, "-o", o, "--device", "cpu", scope])
    };
    // quick (the default, spelled out) has nothing to time on the CPU: no note, verified
    let (ok, _, err) = compile("--search=quick");
    assert!(ok, "{err}");
    assert!(!err.contains("need a CUDA GPU"), "{err}");
    assert!(err.contains("verified on cpu"), "{err}");
    // an unknown scope is refused with the valid ones
    let (ok, _, err) = compile("--search=fast");
    assert!(!ok);
    for scope in ["off", "quick", "full"] {
        assert!(err.contains(scope), "{err}");
    }
}
