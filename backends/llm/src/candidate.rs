//! What the report says about each candidate.

use serde::{Deserialize, Serialize};

/// A candidate's fate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Passed the static checks and the runtime's verification.
    Verified,
    /// Failed a static check or verification.
    Rejected,
    /// The answer had no python code block.
    NoCode,
    /// No answer (the server failed) or the checks could not run.
    Error,
}

/// Where a candidate came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// drtc's template backend.
    Template,
    /// The language model.
    Llm,
}

/// One line of the report: one candidate for one region (or the whole program).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CandidateRecord {
    /// `region N` or `whole`.
    pub region: String,
    pub origin: Origin,
    /// Sample index (LLM candidates).
    pub sample: Option<usize>,
    /// 0 for the first answer, then one per feedback round.
    pub turn: u32,
    pub status: Status,
    pub reason: Option<String>,
    /// The candidate's median time on the GPU; `None` when not timed (CPU).
    pub time_ms: Option<f64>,
    /// The reference's median time in the same run.
    pub reference_ms: Option<f64>,
    /// torch.compile's median time in the same run (when asked).
    pub compile_ms: Option<f64>,
    /// Request latency (LLM candidates).
    pub latency_ms: Option<f64>,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// The answer came from the response cache.
    pub cached: bool,
    pub chosen: bool,
    /// Where the check's time went (a candidate that reached the verifier).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_s: Option<CheckSeconds>,
    /// The first attempt's reasons when the check ran out of GPU memory beside other
    /// workers and was run again alone (the verdict is the second attempt's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retried_alone: Option<Vec<String>>,
    /// The candidate's code, when there was any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// Where one candidate's check spent its time, in seconds: the whole request as the
/// caller waited for it (queueing for a worker and for the GPU's exclusive timing pass
/// included) and, from the worker's verification report, loading (an untrusted answer's
/// import in its own sandboxed process), the trials (the float64 truth included) and the
/// truth alone, the re-drawn-parameters trial's setup (its new state drawn and sent), and
/// the compile of its kernels ahead of the trials.
/// `wall_s` minus `verify_s` is the timing pass and the waits around it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckSeconds {
    pub wall_s: f64,
    pub verify_s: f64,
    pub load_s: f64,
    pub trials_s: f64,
    pub truth_s: f64,
    #[serde(default)]
    pub redrawn_s: f64,
    /// The answer's kernels compiled ahead of its first trial, in its own process (0 when
    /// it was not done: too few compiles, the interpreter, `DRTC_PARALLEL_JIT=off`).
    #[serde(default)]
    pub jit_s: f64,
    /// The first trial alone (where an answer's kernels compile unless compiled ahead).
    #[serde(default)]
    pub first_trial_s: f64,
    /// The timing session built after verification (inputs made and staged).
    #[serde(default)]
    pub prepare_s: f64,
    /// Waiting for a shared pass on the GPU before verification began.
    #[serde(default)]
    pub verify_queue_s: f64,
    /// Waiting for one of the pool's workers before that.
    #[serde(default)]
    pub worker_queue_s: f64,
    /// The timing pass (0 when not timed): waiting for the GPU's exclusive pass, the timed
    /// loops in it, the report after (the timed outputs checked).
    #[serde(default)]
    pub timing_queue_s: f64,
    #[serde(default)]
    pub timing_s: f64,
    #[serde(default)]
    pub timing_report_s: f64,
}

impl CandidateRecord {
    pub fn new(region: impl Into<String>, origin: Origin) -> Self {
        CandidateRecord {
            region: region.into(),
            origin,
            sample: None,
            turn: 0,
            status: Status::Error,
            reason: None,
            time_ms: None,
            reference_ms: None,
            compile_ms: None,
            latency_ms: None,
            prompt_tokens: 0,
            completion_tokens: 0,
            cached: false,
            chosen: false,
            check_s: None,
            retried_alone: None,
            code: None,
        }
    }
}
