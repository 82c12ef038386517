//! Timing requests and reports (semantics.md's protocol, run in the worker on CUDA: CUDA
//! events, warm-up, median of at least 50 calls, 256 MB L2 flush before each call,
//! reference and candidate interleaved in one process on the same inputs).

use super::verify::{VerifyReport, VerifyRequest};
use serde::{Deserialize, Serialize};

/// Verify a candidate, then time it against its reference.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchRequest {
    #[serde(flatten)]
    pub verify: VerifyRequest,
    /// Also time `torch.compile` (default mode) of the reference, in the same run.
    pub compile_baseline: bool,
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
    pub rounds: u64,
    pub l2_flush_bytes: u64,
}

impl TimingReport {
    /// Reference median / candidate median.
    pub fn speedup(&self) -> f64 {
        self.reference.median_ms / self.candidate.median_ms
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
}
