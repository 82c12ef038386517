//! Timing requests and reports (semantics.md's protocol, run in the worker on CUDA: CUDA
//! events, warm-up, median of at least 50 calls, 256 MB L2 flush before each call,
//! reference and candidate interleaved in one process on the same inputs).

use super::checks::{VerifyReport, VerifyRequest};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A `torch.compile` mode timed as a baseline of the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CompileMode {
    Default,
    MaxAutotune,
    MaxAutotuneNoCudagraphs,
    ReduceOverhead,
}

impl CompileMode {
    pub const ALL: [CompileMode; 4] = [
        CompileMode::Default,
        CompileMode::MaxAutotune,
        CompileMode::MaxAutotuneNoCudagraphs,
        CompileMode::ReduceOverhead,
    ];

    /// The `mode=` argument of `torch.compile`.
    pub fn name(self) -> &'static str {
        match self {
            CompileMode::Default => "default",
            CompileMode::MaxAutotune => "max-autotune",
            CompileMode::MaxAutotuneNoCudagraphs => "max-autotune-no-cudagraphs",
            CompileMode::ReduceOverhead => "reduce-overhead",
        }
    }
}

/// Verify a candidate, then time it against its reference.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchRequest {
    #[serde(flatten)]
    pub verify: VerifyRequest,
    /// Also time `torch.compile` of the reference in these modes, in the same run.
    #[serde(default)]
    pub compile_modes: Vec<CompileMode>,
    /// `torch.set_float32_matmul_precision` for the reference and torch.compile while
    /// they are timed ("highest", "high"); `None` leaves PyTorch's default. The candidate
    /// always runs with the process default; verification always compares against the
    /// reference at PyTorch's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torch_precision: Option<String>,
    /// Seconds each torch.compile mode's first call (its compile) may take; a mode still
    /// compiling then is reported over budget and not timed. `None`: unbounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compile_budget_s: Option<f64>,
}

impl BenchRequest {
    /// Eager reference only, PyTorch's default precision.
    pub fn new(verify: VerifyRequest) -> Self {
        BenchRequest {
            verify,
            compile_modes: vec![],
            torch_precision: None,
            compile_budget_s: None,
        }
    }

    /// torch.compile's default mode as the only second baseline when `compile` holds.
    pub fn default_mode_if(compile: bool) -> Vec<CompileMode> {
        if compile {
            vec![CompileMode::Default]
        } else {
            vec![]
        }
    }
}

/// One torch.compile mode in a timed run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CompiledMode {
    /// Its timed calls (None when it failed to compile).
    #[serde(default)]
    pub stats: Option<TimingStats>,
    /// Its first call, which compiles, in milliseconds.
    #[serde(default)]
    pub compile_ms: Option<f64>,
    /// Why it was not timed.
    #[serde(default)]
    pub error: Option<String>,
    /// Whether it was not timed because its compile ran past the request's budget.
    #[serde(default)]
    pub over_budget: bool,
    /// Its last timed outputs checked by the candidate's rules.
    #[serde(default)]
    pub outputs_ok: Option<bool>,
    #[serde(default)]
    pub outputs_ok_without_truth: Option<bool>,
    #[serde(default)]
    pub failures: Vec<String>,
}

/// The device's measured limits (`drtc_worker/peaks.py`), the anchor of speed-of-light
/// figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DevicePeaks {
    /// Bytes read plus written per second by a 1 GiB device copy, in GB/s.
    pub copy_gb_s: f64,
    /// cuBLAS on large square GEMMs: full fp32 (CUDA cores), TF32 and bf16 (tensor cores).
    pub fp32_tflops: f64,
    pub tf32_tflops: f64,
    pub bf16_tflops: f64,
    pub device: String,
    /// How the figures were obtained.
    pub source: String,
}

/// Statistics of one contender's timed calls, in milliseconds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimingStats {
    pub median_ms: f64,
    pub mean_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub p10_ms: f64,
    pub p90_ms: f64,
    pub stdev_ms: f64,
    pub samples: u64,
    /// Host wall clock per call including a device-wide synchronize (a cross-check on the
    /// events, which see only the current stream).
    pub wall_median_ms: f64,
}

/// The timed run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimingReport {
    pub reference: TimingStats,
    pub candidate: TimingStats,
    #[serde(default)]
    pub compiled: Option<TimingStats>,
    /// The outputs of the last timed calls passed the value checks too.
    pub timed_outputs_ok: bool,
    #[serde(default)]
    pub timed_outputs_failures: Vec<String>,
    /// The candidate's timed outputs passed the rule against the reference alone, without
    /// the float64 truth.
    #[serde(default)]
    pub timed_outputs_ok_without_truth: Option<bool>,
    /// torch.compile's last timed outputs checked by the same rules as the candidate's
    /// (None when torch.compile was not timed).
    #[serde(default)]
    pub compiled_outputs_ok: Option<bool>,
    #[serde(default)]
    pub compiled_outputs_ok_without_truth: Option<bool>,
    #[serde(default)]
    pub compiled_outputs_failures: Vec<String>,
    pub rounds: u64,
    pub l2_flush_bytes: u64,
    /// The float32 matmul precision the reference and torch.compile ran with.
    #[serde(default)]
    pub torch_precision: Option<String>,
    /// The process default, which the candidate ran with.
    #[serde(default)]
    pub candidate_precision: Option<String>,
    /// Why torch.compile was not timed, when it was asked for and failed.
    #[serde(default)]
    pub compiled_error: Option<String>,
    /// torch.compile's first call (compilation), done before the timing phase.
    #[serde(default)]
    pub compile_warmup_ms: Option<f64>,
    /// Every torch.compile mode asked for, by its name (`default` is also `compiled`).
    #[serde(default)]
    pub compiled_modes: BTreeMap<String, CompiledMode>,
    /// The device's measured limits, when they could be measured.
    #[serde(default)]
    pub device_peaks: Option<DevicePeaks>,
    /// Modules with CUDA graphs: what the timed calls did (captures, replays, eager calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_graphs: Option<serde_json::Value>,
    /// Why these figures may not be real: an implausible speedup (beyond 10x
    /// torch.compile, or 20x eager when torch.compile is not timed), or an isolated
    /// candidate whose loop took much longer on the checker's clock than its process
    /// reported. The reward and `drtc eval` give a flagged timing no speed credit.
    #[serde(default)]
    pub flags: Vec<String>,
    /// The candidate was timed in its own sandboxed process; every contender's time is
    /// the larger of its CUDA-event and wall-clock times.
    #[serde(default)]
    pub isolated: bool,
}

impl TimingReport {
    /// Reference median / candidate median.
    pub fn speedup(&self) -> f64 {
        self.reference.median_ms / self.candidate.median_ms
    }

    /// The lines `drtc bench-pair` prints: one per contender, then the speedups.
    pub fn render(&self) -> Vec<String> {
        let line = |name: &str, s: &TimingStats| {
            format!(
                "{name:<10} median {:>9.4} ms  (p10 {:.4}, p90 {:.4}, stdev {:.4}, n={}, wall {:.4} ms)",
                s.median_ms, s.p10_ms, s.p90_ms, s.stdev_ms, s.samples, s.wall_median_ms
            )
        };
        let mut out = vec![
            line("reference", &self.reference),
            line("candidate", &self.candidate),
        ];
        if let Some(c) = &self.compiled {
            out.push(line("compiled", c));
        }
        if let Some(e) = &self.compiled_error {
            out.push(format!("compiled   not timed: {e}"));
        }
        for (mode, m) in self.compiled_modes.iter().filter(|(m, _)| *m != "default") {
            match (&m.stats, &m.error) {
                (Some(s), _) => out.push(line(mode, s)),
                (None, e) => out.push(format!(
                    "{mode} not timed: {}",
                    e.as_deref().unwrap_or("no report")
                )),
            }
        }
        if let Some(p) = &self.torch_precision {
            out.push(format!(
                "float32 matmul precision: reference and torch.compile {p}, candidate {}",
                self.candidate_precision.as_deref().unwrap_or("?")
            ));
        }
        out.push(format!("speedup vs eager: {:.3}x", self.speedup()));
        if let Some(s) = self.speedup_vs_compiled() {
            out.push(format!("speedup vs torch.compile: {s:.3}x"));
        }
        if self.compiled_modes.len() > 1 {
            if let Some((mode, ms)) = self.best_compiled() {
                out.push(format!(
                    "speedup vs the best torch.compile mode ({mode}): {:.3}x",
                    ms / self.candidate.median_ms
                ));
            }
        }
        for f in &self.flags {
            out.push(format!("FLAGGED {f}"));
        }
        if !self.timed_outputs_ok {
            out.push(format!(
                "timed outputs FAILED the checks: {}",
                self.timed_outputs_failures.join("; ")
            ));
        }
        out
    }

    /// The fastest torch.compile mode timed, and its median.
    pub fn best_compiled(&self) -> Option<(&str, f64)> {
        let modes = self
            .compiled_modes
            .iter()
            .filter_map(|(mode, m)| m.stats.as_ref().map(|s| (mode.as_str(), s.median_ms)));
        let from_default = self.compiled.as_ref().map(|c| ("default", c.median_ms));
        modes.chain(from_default).min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// `torch.compile` median / candidate median, when measured.
    pub fn speedup_vs_compiled(&self) -> Option<f64> {
        self.compiled
            .as_ref()
            .map(|c| c.median_ms / self.candidate.median_ms)
    }
}

/// Verification plus, when it passed, timing.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchReport {
    pub verify: VerifyReport,
    pub timing: Option<TimingReport>,
    /// Why timing did not happen or failed, when it did not.
    pub timing_error: Option<String>,
    /// Where the timing pass's time went, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing_seconds: Option<TimingSeconds>,
}

/// The timing pass of one request, in seconds: waiting for the GPU's exclusive pass, the
/// timed loops in it, and the report after (the timed outputs checked, in a shared pass);
/// also the waits before verification began: for one of the pool's workers
/// (`worker_queue_s`), then for a shared pass (`prepare_queue_s`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TimingSeconds {
    #[serde(default)]
    pub worker_queue_s: f64,
    #[serde(default)]
    pub prepare_queue_s: f64,
    pub queue_s: f64,
    pub exclusive_s: f64,
    pub report_s: f64,
}

impl BenchReport {
    /// Whether verification or timing ran out of GPU memory.
    pub fn ran_out_of_memory(&self) -> bool {
        self.verify.ran_out_of_memory()
            || self
                .timing_error
                .as_deref()
                .is_some_and(|e| e.contains("out of memory"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(median_ms: f64) -> TimingStats {
        TimingStats {
            median_ms,
            mean_ms: median_ms,
            min_ms: median_ms * 0.9,
            max_ms: median_ms * 1.2,
            p10_ms: median_ms * 0.95,
            p90_ms: median_ms * 1.05,
            stdev_ms: 0.01,
            samples: 50,
            wall_median_ms: median_ms * 1.01,
        }
    }

    #[test]
    fn worker_timing_json_parses_and_renders_speedups() {
        let json = serde_json::json!({
            "reference": stats(3.0), "candidate": stats(1.5), "compiled": stats(2.25),
            "timed_outputs_ok": true, "timed_outputs": [], "timed_outputs_failures": [],
            "rounds": 50, "l2_flush_bytes": 268435456u64
        });
        let t: TimingReport = serde_json::from_value(json).unwrap();
        assert_eq!(t.speedup(), 2.0);
        assert_eq!(t.speedup_vs_compiled(), Some(1.5));
        let lines = t.render();
        assert_eq!(lines.len(), 5);
        assert!(
            lines[0].starts_with("reference  median    3.0000 ms"),
            "{}",
            lines[0]
        );
        assert_eq!(lines[3], "speedup vs eager: 2.000x");
        assert_eq!(lines[4], "speedup vs torch.compile: 1.500x");
    }
}
