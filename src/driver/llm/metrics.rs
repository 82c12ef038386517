//! Benchmark metrics for kernel models (semantics.md): accuracy (pass@1), pass@k by the
//! unbiased estimator, fast_p (share of tasks solved with a speedup above p), the
//! geometric-mean speedup (a task without a verified sample counts 1.0, as falling back
//! to the reference), per-op success rates, and token and time totals.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The thresholds of fast_p.
pub const FAST_P: [f64; 4] = [1.0, 1.2, 1.5, 2.0];

/// One sample of one task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleResult {
    pub sample: usize,
    pub verified: bool,
    pub reason: Option<String>,
    /// Candidate median on the GPU (`None` on CPU: not measured).
    pub time_ms: Option<f64>,
    pub eager_ms: Option<f64>,
    pub compile_ms: Option<f64>,
}

impl SampleResult {
    pub fn speedup(&self) -> Option<f64> {
        ratio(self.eager_ms, self.time_ms)
    }
    pub fn speedup_compile(&self) -> Option<f64> {
        ratio(self.compile_ms, self.time_ms)
    }
}

fn ratio(reference: Option<f64>, candidate: Option<f64>) -> Option<f64> {
    match (reference, candidate) {
        (Some(r), Some(c)) if c > 0.0 && r > 0.0 => Some(r / c),
        _ => None,
    }
}

/// One task: a line of `results.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    pub task: String,
    /// The ops of the program (for per-op success).
    pub ops: Vec<String>,
    pub samples: Vec<SampleResult>,
    /// A task that could not be run at all (load or prompt error).
    pub error: Option<String>,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Sum of request latencies (requests not answered from the cache).
    pub request_ms: f64,
    pub wall_ms: f64,
    /// Every candidate of the task (code dropped).
    #[serde(default)]
    pub candidates: Vec<serde_json::Value>,
}

impl TaskResult {
    pub fn correct(&self) -> usize {
        self.samples.iter().filter(|s| s.verified).count()
    }
    pub fn solved(&self) -> bool {
        self.correct() > 0
    }
    /// The best speedup of a verified, timed sample.
    fn best(&self, f: fn(&SampleResult) -> Option<f64>) -> Option<f64> {
        self.samples
            .iter()
            .filter(|s| s.verified)
            .filter_map(f)
            .fold(None, |acc: Option<f64>, x| {
                Some(acc.map_or(x, |a| a.max(x)))
            })
    }
}

/// pass@k = 1 - C(n - c, k) / C(n, k), computed as a stable product.
pub fn pass_at_k(n: usize, c: usize, k: usize) -> f64 {
    if k == 0 || n == 0 || k > n {
        return f64::NAN;
    }
    if n - c < k {
        return 1.0;
    }
    let mut miss = 1.0;
    for i in (n - c + 1)..=n {
        miss *= 1.0 - k as f64 / i as f64;
    }
    1.0 - miss
}

/// Summary over tasks.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub tasks: usize,
    pub errors: usize,
    pub samples_per_task: usize,
    /// Mean pass@1.
    pub accuracy: f64,
    pub pass_at_k: BTreeMap<usize, f64>,
    /// `None` when speed was not measured (CPU).
    pub fast_p: Option<BTreeMap<String, f64>>,
    pub fast_p_compile: Option<BTreeMap<String, f64>>,
    pub geomean_speedup: Option<f64>,
    pub geomean_speedup_compile: Option<f64>,
    /// op -> (tasks containing it, tasks solved).
    pub per_op: BTreeMap<String, (usize, usize)>,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub request_ms: f64,
    pub wall_ms: f64,
}

fn fast(
    results: &[TaskResult],
    f: fn(&SampleResult) -> Option<f64>,
) -> Option<(BTreeMap<String, f64>, f64)> {
    let any_timed = results
        .iter()
        .flat_map(|r| &r.samples)
        .any(|s| f(s).is_some());
    if !any_timed || results.is_empty() {
        return None;
    }
    let n = results.len() as f64;
    let map = FAST_P
        .iter()
        .map(|&p| {
            let k = results
                .iter()
                .filter(|r| r.best(f).is_some_and(|s| s > p))
                .count();
            (format!("fast_{p}"), k as f64 / n)
        })
        .collect();
    let log_sum: f64 = results.iter().map(|r| r.best(f).unwrap_or(1.0).ln()).sum();
    Some((map, (log_sum / n).exp()))
}

pub fn summarize(results: &[TaskResult]) -> Summary {
    let n = results.iter().map(|r| r.samples.len()).max().unwrap_or(0);
    let scored: Vec<&TaskResult> = results.iter().collect();
    let mean = |k: usize| {
        let v: Vec<f64> = scored
            .iter()
            .map(|r| {
                if r.samples.is_empty() {
                    0.0
                } else {
                    pass_at_k(r.samples.len(), r.correct(), k.min(r.samples.len()))
                }
            })
            .collect();
        if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    let mut pass = BTreeMap::new();
    for k in [1usize, 2, 5, 10, 20, 50, 100].into_iter().chain([n]) {
        if k >= 1 && k <= n {
            pass.insert(k, mean(k));
        }
    }
    let mut per_op: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for r in results {
        let mut ops = r.ops.clone();
        ops.sort();
        ops.dedup();
        for op in ops {
            let e = per_op.entry(op).or_default();
            e.0 += 1;
            e.1 += usize::from(r.solved());
        }
    }
    let eager = fast(results, SampleResult::speedup);
    let compiled = fast(results, SampleResult::speedup_compile);
    Summary {
        tasks: results.len(),
        errors: results.iter().filter(|r| r.error.is_some()).count(),
        samples_per_task: n,
        accuracy: mean(1),
        pass_at_k: pass,
        fast_p: eager.as_ref().map(|e| e.0.clone()),
        fast_p_compile: compiled.as_ref().map(|e| e.0.clone()),
        geomean_speedup: eager.map(|e| e.1),
        geomean_speedup_compile: compiled.map(|e| e.1),
        per_op,
        prompt_tokens: results.iter().map(|r| r.prompt_tokens).sum(),
        completion_tokens: results.iter().map(|r| r.completion_tokens).sum(),
        request_ms: results.iter().map(|r| r.request_ms).sum(),
        wall_ms: results.iter().map(|r| r.wall_ms).sum(),
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// The summary as a markdown report.
pub fn markdown(s: &Summary, title: &str) -> String {
    let mut out = format!("# {title}\n\n| metric | value |\n|---|---|\n");
    let mut row = |k: &str, v: String| out.push_str(&format!("| {k} | {v} |\n"));
    row("tasks", format!("{} ({} could not run)", s.tasks, s.errors));
    row("samples per task", s.samples_per_task.to_string());
    row("accuracy (pass@1)", pct(s.accuracy));
    for (k, v) in &s.pass_at_k {
        row(&format!("pass@{k}"), pct(*v));
    }
    match &s.fast_p {
        Some(m) => {
            for (k, v) in m {
                row(&format!("{k} vs eager"), pct(*v));
            }
        }
        None => row("fast_p vs eager", "not measured (no GPU timing)".into()),
    }
    if let Some(m) = &s.fast_p_compile {
        for (k, v) in m {
            row(&format!("{k} vs torch.compile"), pct(*v));
        }
    }
    row(
        "geomean speedup vs eager",
        s.geomean_speedup
            .map_or("not measured".into(), |g| format!("{g:.3}x")),
    );
    if let Some(g) = s.geomean_speedup_compile {
        row("geomean speedup vs torch.compile", format!("{g:.3}x"));
    }
    row("prompt tokens", s.prompt_tokens.to_string());
    row("completion tokens", s.completion_tokens.to_string());
    row("request time", format!("{:.1} s", s.request_ms / 1e3));
    row("wall time", format!("{:.1} s", s.wall_ms / 1e3));
    out.push_str("\n## Per-op success (share of tasks containing the op that were solved)\n\n");
    out.push_str("| op | tasks | solved | rate |\n|---|---|---|---|\n");
    for (op, (n, k)) in &s.per_op {
        out.push_str(&format!(
            "| {op} | {n} | {k} | {} |\n",
            pct(*k as f64 / *n as f64)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(verified: bool, t: Option<f64>, eager: Option<f64>) -> SampleResult {
        SampleResult {
            sample: 0,
            verified,
            reason: None,
            time_ms: t,
            eager_ms: eager,
            compile_ms: None,
        }
    }

    fn task(name: &str, ops: &[&str], samples: Vec<SampleResult>) -> TaskResult {
        TaskResult {
            task: name.into(),
            ops: ops.iter().map(|s| s.to_string()).collect(),
            samples,
            error: None,
            prompt_tokens: 10,
            completion_tokens: 20,
            request_ms: 5.0,
            wall_ms: 7.0,
            candidates: vec![],
        }
    }

    #[test]
    fn pass_at_k_matches_the_combinatorial_formula() {
        // n=5, c=2, k=2: 1 - C(3,2)/C(5,2) = 1 - 3/10
        assert!((pass_at_k(5, 2, 2) - 0.7).abs() < 1e-12);
        assert_eq!(pass_at_k(5, 0, 3), 0.0);
        assert_eq!(pass_at_k(5, 4, 2), 1.0);
        assert!((pass_at_k(4, 1, 1) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn summary_counts_fast_p_geomean_and_ops() {
        let r = vec![
            task(
                "a",
                &["add", "relu"],
                vec![
                    sample(true, Some(1.0), Some(2.0)),
                    sample(false, None, None),
                ],
            ),
            task(
                "b",
                &["relu"],
                vec![sample(false, None, None), sample(false, None, None)],
            ),
        ];
        let s = summarize(&r);
        assert!((s.accuracy - 0.25).abs() < 1e-12);
        assert!((s.pass_at_k[&2] - 0.5).abs() < 1e-12);
        let f = s.fast_p.as_ref().unwrap();
        assert_eq!(f["fast_1"], 0.5);
        assert_eq!(f["fast_2"], 0.0);
        assert!((s.geomean_speedup.unwrap() - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(s.per_op["relu"], (2, 1));
        assert_eq!(s.per_op["add"], (1, 1));
        assert_eq!(s.prompt_tokens, 20);
        let md = markdown(&s, "t");
        assert!(md.contains("| accuracy (pass@1) | 25.0% |"), "{md}");
    }

    #[test]
    fn cpu_results_say_not_measured() {
        let r = vec![task("a", &["add"], vec![sample(true, None, None)])];
        let s = summarize(&r);
        assert!(s.fast_p.is_none() && s.geomean_speedup.is_none());
        assert!(markdown(&s, "t").contains("not measured"));
    }
}
