//! The timing loop stops once every contender's median is settled (its 95% interval
//! within 1% of it, after 20 calls and 25 ms), else at the fixed rule (50 calls and
//! 100 ms): `tests/check_timing_rule.py` runs the worker's rule on made-up samples.

mod support {
    pub mod python_check;
}

use support::python_check::{case, run_check};

#[test]
fn the_timing_loop_stops_when_every_median_is_settled() {
    let r = run_check("check_timing_rule.py", &[])
        .pop()
        .expect("one JSON line");
    // 20 calls within 0.2% of each other: settled; 20% apart: not
    assert_eq!(r["steady"], true, "{r}");
    assert_eq!(r["noisy"], false, "{r}");
    // too few calls, or too little time, is never settled
    assert_eq!(r["few"], false, "{r}");
    assert_eq!(r["tiny"], false, "{r}");
    // two slow calls past the interval's ranks leave the median settled
    assert_eq!(r["outlier"], true, "{r}");
    assert_eq!(r["interval_orders"], serde_json::json!([1.0, 5.0]), "{r}");
    // the loop stops when every contender is settled, or all are past the fixed rule
    assert_eq!(r["stop_all_settled"], true, "{r}");
    assert_eq!(r["stop_one_noisy"], false, "{r}");
    assert_eq!(r["stop_fixed_rule"], true, "{r}");
}

/// The whole timing session without a GPU (`tests/check_timing_session.py`: CUDA events
/// stood in for, every call 2 ms): the loop stops at the settled minimum, an untrusted
/// candidate gets as many calls as the reference needed, and its timed outputs, fetched
/// after the loop, are checked, with the fingerprints of four other calls picked after the
/// loop (an answer right only on the calls it knows are checked in full fails).
#[test]
fn the_timing_session_measures_then_reports() {
    let cases = run_check("check_timing_session.py", &[]);
    let case = |name: &str| case(&cases, name);
    for name in [
        "trusted",
        "sandboxed",
        "sandboxed, wrong timed outputs",
        "sandboxed, adaptive",
    ] {
        let c = case(name);
        assert_eq!(c["rounds"], 20, "settled at the minimum: {c}");
        assert_eq!(c["reference_calls"], 20, "{c}");
        assert_eq!(c["candidate_calls"], 20, "as many as the reference: {c}");
        assert_eq!(c["candidate_median_ms"], 2.0, "{c}");
    }
    assert_eq!(case("trusted")["timed_outputs_ok"], true);
    assert_eq!(case("sandboxed")["timed_outputs_ok"], true);
    let wrong = case("sandboxed, wrong timed outputs");
    assert_eq!(wrong["timed_outputs_ok"], false, "{wrong}");
    let failures = wrong["failures"].to_string();
    assert!(
        failures.contains("buffer 0") && failures.contains("buffer 1"),
        "{failures}"
    );
    // four calls besides the last ones, picked after the loop, checked by fingerprint
    assert_eq!(
        case("sandboxed")["fingerprints_checked"]
            .as_array()
            .map(Vec::len),
        Some(4)
    );
    let adaptive = case("sandboxed, adaptive");
    assert_eq!(adaptive["timed_outputs_ok"], false, "{adaptive}");
    let failures = adaptive["failures"].to_string();
    assert!(
        failures.contains("fingerprint")
            && failures.contains("against the float64 truth")
            && !failures.contains("buffer"),
        "{failures}"
    );
    // a truth that ran out of memory is no verdict on the candidate's values: the report
    // fails as out of memory, which the suite retries alone
    let short = case("sandboxed, wrong, truth out of memory");
    let raised = short["raised"].as_str().unwrap_or_default();
    assert!(
        raised.contains("OutOfMemoryError") && raised.contains("float64 truth"),
        "{short}"
    );
    // torch.compile's outputs: none kept from call to call in the loops, each mode's
    // taken once after them, parked in host memory and still checked (one is off by one)
    let modes = case("modes parked");
    assert_eq!(modes["most_alive_at_a_call"], 0, "{modes}");
    assert_eq!(
        modes["parked"],
        serde_json::json!([
            "compiled",
            "compiled:max-autotune",
            "compiled:reduce-overhead"
        ]),
        "{modes}"
    );
    assert_eq!(modes["outputs_ok"]["default"], true, "{modes}");
    assert_eq!(modes["outputs_ok"]["reduce-overhead"], true, "{modes}");
    assert_eq!(modes["outputs_ok"]["max-autotune"], false, "{modes}");
    assert_eq!(modes["samples"]["max-autotune"], 20, "{modes}");
    // a mode still compiling at the budget: interrupted there (not after its 5 s), reported
    // over budget and not timed, dynamo reset; the other mode timed
    let budget = case("compile budget");
    assert!(budget["compile_s"].as_f64().unwrap() < 3.0, "{budget}");
    assert_eq!(budget["over_budget"]["max-autotune"], true, "{budget}");
    assert_eq!(budget["over_budget"]["default"], false, "{budget}");
    let error = budget["errors"]["max-autotune"]
        .as_str()
        .unwrap_or_default();
    assert!(
        error.contains("over budget") && error.contains("0.5 s"),
        "{budget}"
    );
    assert!(budget["errors"]["default"].is_null(), "{budget}");
    assert_eq!(budget["timed"], serde_json::json!(["default"]), "{budget}");
    assert_eq!(budget["resets"], 1, "{budget}");
    let bounds = case("fingerprint bounds");
    assert!(bounds["within_rule"].is_null(), "{bounds}");
    assert!(bounds["tiny_within_atol"].is_null(), "{bounds}");
    assert!(bounds["half_near_overflow"].is_null(), "{bounds}");
    for off in ["zeroed", "scaled", "shape", "missing"] {
        assert!(bounds[off].is_string(), "{off}: {bounds}");
    }
}
