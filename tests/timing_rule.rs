//! The timing loop stops once every contender's median is settled (its 95% interval
//! within 1% of it, after 20 calls and 25 ms), else at the fixed rule (50 calls and
//! 100 ms): `tests/check_timing_rule.py` runs the worker's rule on made-up samples.

mod support {
    pub mod python_check;
}

use support::python_check::run_check;

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
