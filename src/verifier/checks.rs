//! Verification requests and reports. The checks themselves run in the worker (see
//! `worker/worker.py` and semantics.md); this file names them, carries their findings and
//! renders one line per failed check.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// semantics.md: at least five trials.
pub const MIN_TRIALS: u32 = 5;

/// Verify one candidate against one reference.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VerifyRequest {
    /// A KernelBench `Model` file or a seed program (`fused_operator`), as a `.py` file.
    pub reference: PathBuf,
    /// Defines `ModelNew` (KernelBench) or `triton_fused_operator` (seed).
    pub candidate: PathBuf,
    /// Trials on fresh inputs (at least [`MIN_TRIALS`]).
    pub trials: u32,
    /// Base seed: parameters come from it, trial inputs from seeds derived from it.
    pub seed: u64,
    /// Strict mode: the candidate may call PyTorch only for allocation, views and the
    /// declared library ops.
    pub strict: bool,
    /// The library ops strict mode allows (default: conv and matmul families).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub library_ops: Option<Vec<String>>,
    /// The value rule for floats: `allclose_1e-4` (the default: `allclose(atol=rtol=1e-4)`
    /// on top of the relative norm, against the reference run with full-fp32 matmuls: the
    /// fp32 precision policy, KernelBench's current rule) or `rel_norm` (the relative-norm
    /// rule alone, 1e-3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// What the checker adds to every trial's seed for an untrusted candidate; `None`: a
    /// fresh random draw per request. drtc's own callers set it where a rerun must see the
    /// same figures (the LLM backend's feedback, replayed from its answer cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_salt: Option<u64>,
    /// The candidate is a module drtc generated itself: it may run inside the checker's
    /// process. Every other candidate (a model's answer, a file given to `drtc verify`)
    /// runs in a sandboxed process of its own that never holds the reference, the
    /// comparison or the reply channel, and never serves a later answer.
    #[serde(default)]
    pub trusted: bool,
}

impl VerifyRequest {
    /// A request for an untrusted candidate (isolated; see [`VerifyRequest::trusted`]).
    pub fn new(reference: impl Into<PathBuf>, candidate: impl Into<PathBuf>) -> Self {
        VerifyRequest {
            reference: reference.into(),
            candidate: candidate.into(),
            trials: MIN_TRIALS,
            seed: 0,
            strict: false,
            library_ops: None,
            rule: None,
            seed_salt: None,
            trusted: false,
        }
    }

    /// A request for a module drtc generated itself (it may run in the checker's process).
    pub fn generated(reference: impl Into<PathBuf>, candidate: impl Into<PathBuf>) -> Self {
        VerifyRequest {
            trusted: true,
            ..VerifyRequest::new(reference, candidate)
        }
    }
}

/// The checks a candidate can fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// Number of outputs.
    Count,
    /// Tensor versus non-tensor, or Python type.
    Type,
    Device,
    Shape,
    Dtype,
    /// NaN or Inf where the reference is finite (unwritten poisoned memory shows here).
    NanInf,
    /// Relative-norm rule for floats, exact equality for integers and booleans.
    Values,
    /// An output shares memory with an input or a reference output.
    Alias,
    /// The candidate changed an input.
    InputsModified,
    /// Outputs complete only after a device-wide synchronize.
    SideStream,
    /// Module parameters or buffers after the call differ (e.g. BatchNorm statistics).
    State,
    /// Strict mode: forbidden PyTorch calls.
    Strict,
    /// Strict mode's reading of the source: a way to compute its recorders cannot see
    /// (threads, numpy or ctypes, torch.compile, private API, computed imports).
    StrictSource,
    /// The candidate replaced functions the checker relies on.
    Tampering,
    /// The candidate raised an exception.
    Crash,
    /// The GPU faulted (illegal address, device assert); the worker was replaced.
    GpuFault,
    /// Host or GPU memory ran out (in the candidate, the reference or the checks); the
    /// worker was replaced.
    OutOfMemory,
    /// No answer before the deadline; the worker was killed.
    Timeout,
    /// The worker process died (abort, segfault); it was replaced.
    WorkerDied,
    /// The candidate module failed to import or lacks its entry point.
    Import,
    /// `ModelNew(*get_init_inputs())` failed.
    Init,
    /// `ModelNew.load_state_dict(Model.state_dict(), strict=True)` failed.
    StateDict,
    /// The reference itself failed (not the candidate's fault, but nothing was verified).
    Reference,
    /// A module that uses CUDA graphs was not verified on its graphs: no trial replayed
    /// one with new values in the same buffers, or none followed a capture with new buffers.
    CudaGraphs,
    /// The worker answered with something this drtc does not know.
    #[serde(other)]
    Other,
}

impl Check {
    pub fn name(self) -> &'static str {
        match self {
            Check::Count => "count",
            Check::Type => "type",
            Check::Device => "device",
            Check::Shape => "shape",
            Check::Dtype => "dtype",
            Check::NanInf => "nan_inf",
            Check::Values => "values",
            Check::Alias => "alias",
            Check::InputsModified => "inputs_modified",
            Check::SideStream => "side_stream",
            Check::State => "state",
            Check::Strict => "strict",
            Check::StrictSource => "strict_source",
            Check::Tampering => "tampering",
            Check::Crash => "crash",
            Check::GpuFault => "gpu_fault",
            Check::OutOfMemory => "out_of_memory",
            Check::Timeout => "timeout",
            Check::WorkerDied => "worker_died",
            Check::Import => "import",
            Check::Init => "init",
            Check::StateDict => "state_dict",
            Check::Reference => "reference",
            Check::CudaGraphs => "cuda_graphs",
            Check::Other => "other",
        }
    }
}

/// One failed check, in one trial (or before trials started).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckFailure {
    pub check: Check,
    pub trial: Option<u32>,
    pub output: Option<u32>,
    /// "fresh" (new buffers) or "refill" (same buffers, new values).
    pub inputs: Option<String>,
    pub message: String,
}

/// Figures for one output in one trial.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OutputMetrics {
    pub index: u32,
    /// `norm(ref - out) / (1e-6 + norm(ref))`, the gating figure for floats.
    #[serde(default)]
    pub rel_err: Option<f64>,
    /// The same with the denominator at least 1e-4 per element (the fp32 rule's atol): an
    /// untrusted answer's fp32 outputs must keep it below 1e-4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rel_err_floored: Option<f64>,
    #[serde(default)]
    pub max_abs_err: Option<f64>,
    /// KernelBench's `allclose(atol=rtol=1e-2)`, reported only.
    #[serde(default, rename = "allclose_1e-2")]
    pub allclose_1e2: Option<bool>,
    /// `allclose(atol=rtol=1e-4)`, reported only.
    #[serde(default, rename = "allclose_1e-4")]
    pub allclose_1e4: Option<bool>,
    /// Integers and booleans: exact equality.
    #[serde(default)]
    pub exact: Option<bool>,
    /// Present when a value rule failed and the output was judged against the float64
    /// truth (the reference-accuracy rule of the worker's `truth.py`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_accuracy: Option<ReferenceAccuracy>,
}

/// An output judged against the reference run in float64: the candidate is accepted when
/// it is as accurate as the reference itself (each error at most `factor` times the
/// reference's, or allclose(1e-4) to the truth) and the truth is meaningful.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ReferenceAccuracy {
    pub reference_rel_err: f64,
    pub reference_max_abs_err: f64,
    pub candidate_rel_err: f64,
    pub candidate_max_abs_err: f64,
    #[serde(rename = "candidate_allclose_1e-4")]
    pub candidate_allclose_1e4: bool,
    pub factor: f64,
    pub accepted: bool,
}

/// One parameter or buffer of the candidate module after a call.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StateEntry {
    pub name: String,
    pub rel_err: Option<f64>,
    pub ok: bool,
}

/// One trial.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialReport {
    pub index: u32,
    pub seed: u64,
    /// "fresh", "refill" (same buffers, new values) or "moved" (also the module's state
    /// in new storage; modules with CUDA graphs).
    pub inputs: String,
    pub passed: bool,
    #[serde(default)]
    pub outputs: Vec<OutputMetrics>,
    #[serde(default)]
    pub state: Vec<StateEntry>,
    /// Modules with CUDA graphs: what this trial's call did ("capture", "replay", "eager",
    /// "guard").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph: Option<String>,
    /// Seconds the trial took (the reference, the candidate, the checks, the truth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// Seconds of those spent on the float64 truth (only where a value rule failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truth_seconds: Option<f64>,
}

/// Where one verification's time went, as the worker measured it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Phases {
    /// Loading reference and candidate (an untrusted one's import in its own process).
    #[serde(default)]
    pub load_s: f64,
    /// drtc's own kernels compiled concurrently before the first trial (0 when nothing
    /// was compiled ahead: an untrusted answer, the interpreter, a single kernel).
    #[serde(default)]
    pub jit_s: f64,
    /// Every trial, the float64 truth included.
    #[serde(default)]
    pub trials_s: f64,
    /// The float64 truth alone.
    #[serde(default)]
    pub truth_s: f64,
    /// The first trial alone (an answer's kernels compiled in it unless compiled ahead).
    #[serde(default)]
    pub first_trial_s: f64,
    /// After verification, the timing session built (its inputs made, an untrusted
    /// answer's two buffers staged in its process, torch.compile compiled when asked); 0
    /// when not timed.
    #[serde(default)]
    pub prepare_s: f64,
    /// An untrusted candidate's trial with re-drawn parameters, outside the trial itself:
    /// the new state drawn, the reference probed with it, and both states sent to the
    /// candidate's process (0 when it did not run).
    #[serde(default)]
    pub redrawn_s: f64,
    /// The whole request in the worker.
    #[serde(default)]
    pub total_s: f64,
}

impl Phases {
    /// One line: `load 0.41 s, 5 trials 2.10 s (float64 truth 0.30 s), 2.55 s in the worker`
    /// (with `kernels compiled ahead 1.20 s` after the load when they were).
    pub fn line(&self, trials: usize) -> String {
        let truth = if self.truth_s > 0.0 {
            format!(" (float64 truth {:.2} s)", self.truth_s)
        } else {
            String::new()
        };
        let jit = if self.jit_s > 0.0 {
            format!(", kernels compiled ahead {:.2} s", self.jit_s)
        } else {
            String::new()
        };
        let redrawn = if self.redrawn_s > 0.0 {
            format!(", re-drawn parameters' setup {:.2} s", self.redrawn_s)
        } else {
            String::new()
        };
        format!(
            "load {:.2} s{jit}, {trials} trial{} {:.2} s{truth}{redrawn}, {:.2} s in the worker",
            self.load_s,
            if trials == 1 { "" } else { "s" },
            self.trials_s,
            self.total_s
        )
    }
}

/// Where a worker's start went (its `ready` line's `start`): the whole wait from spawn to
/// `ready` and, within it, the imports (numpy, torch, Triton, the worker's package), the
/// device's context and the checker's own state (the tamper baseline); the rest is the
/// interpreter's own start.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct StartPhases {
    #[serde(default)]
    pub wall_s: f64,
    #[serde(default)]
    pub imports_s: f64,
    #[serde(default)]
    pub device_s: f64,
    #[serde(default)]
    pub checker_s: f64,
}

impl StartPhases {
    /// From a worker's `ready` info (`None` when it carries no `start`).
    pub fn of_ready(info: &serde_json::Value) -> Option<StartPhases> {
        serde_json::from_value(info.get("start")?.clone()).ok()
    }

    /// `interpreter 0.02 s, imports 2.31 s, device 0.70 s, checker 0.10 s`
    pub fn line(&self) -> String {
        let own = self.imports_s + self.device_s + self.checker_s;
        format!(
            "interpreter {:.2} s, imports {:.2} s, device {:.2} s, checker {:.2} s",
            (self.wall_s - own).max(0.0),
            self.imports_s,
            self.device_s,
            self.checker_s
        )
    }
}

/// Peak GPU memory of one verification (CUDA only; `None` fields elsewhere).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MemoryReport {
    #[serde(default)]
    pub device: Option<String>,
    /// The reference alone: its parameters, its inputs and what it allocates while it
    /// runs (`torch.cuda.max_memory_allocated`), the largest over the trials.
    #[serde(default)]
    pub reference_peak_bytes: Option<u64>,
    /// The whole verification: both models, one trial's inputs, copies and outputs.
    #[serde(default)]
    pub verify_peak_bytes: Option<u64>,
    /// verification / reference.
    #[serde(default)]
    pub ratio: Option<f64>,
    #[serde(default)]
    pub note: Option<String>,
}

impl MemoryReport {
    /// "peak GPU memory: reference 12.9 GB, verification 32.2 GB (2.50x)", when measured.
    pub fn line(&self) -> Option<String> {
        let (r, v) = (self.reference_peak_bytes?, self.verify_peak_bytes?);
        let gb = |b: u64| b as f64 / 1e9;
        Some(format!(
            "peak GPU memory: reference {:.3} GB, verification {:.3} GB ({})",
            gb(r),
            gb(v),
            self.ratio
                .map_or("ratio n/a".to_string(), |x| format!("{x:.2}x"))
        ))
    }
}

/// Everything one verification found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VerifyReport {
    pub verified: bool,
    /// "kernelbench" or "seed".
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub failures: Vec<CheckFailure>,
    #[serde(default)]
    pub trials: Vec<TrialReport>,
    /// What poisoning of uninitialized memory was done on this device.
    #[serde(default)]
    pub poison: Option<String>,
    #[serde(default)]
    pub strict: bool,
    /// Peak memory of the reference and of the verification.
    #[serde(default)]
    pub memory: Option<MemoryReport>,
    /// Whether the module used CUDA graphs while it was verified, and why not when not
    /// (`used`, `reason`, captures, replays; absent for modules without graphs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_graphs: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceback: Option<String>,
    /// The end of the worker's stderr when it died or hung.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_stderr: Option<String>,
    /// Where the candidate ran: `process` "checker" (drtc's own module) or "own" with
    /// `sandbox`, one line per mechanism (`mechanism`, `held`, `detail`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<serde_json::Value>,
    /// The per-request draw added to every trial's seed (0 for drtc's own modules).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_salt: Option<u64>,
    /// KernelBench pairs: "checked" when a trial with re-drawn parameters ran, "failed",
    /// or why it was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redrawn_parameters: Option<String>,
    /// The value rule the floats were held to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Where the time went (absent from workers that do not measure it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<Phases>,
    /// Set when a first attempt ran out of GPU memory beside other verifications on the
    /// device and this report is the attempt made alone there: the first one's reasons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retried_alone: Option<Vec<String>>,
}

impl VerifyReport {
    /// One line on where the candidate ran, what its sandbox holds and how tensors cross
    /// (none for drtc's own modules): "isolated: namespaces, network, ...; not held: ...;
    /// tensors cross by shared memory, 2048 MiB each way".
    pub fn isolation_line(&self) -> Option<String> {
        let iso = self.isolation.as_ref()?;
        if iso["process"] != "own" {
            return None;
        }
        let lines = iso["sandbox"].as_array()?;
        let name = |l: &serde_json::Value| l["mechanism"].as_str().unwrap_or("?").to_string();
        let held: Vec<String> = lines
            .iter()
            .filter(|l| l["held"] == true)
            .map(name)
            .collect();
        let missing: Vec<String> = lines
            .iter()
            .filter(|l| l["held"] != true)
            .map(|l| format!("{} ({})", name(l), l["detail"].as_str().unwrap_or("")))
            .collect();
        let mut s = format!("isolated in its own process: {}", held.join(", "));
        if !missing.is_empty() {
            s.push_str(&format!("; NOT held: {}", missing.join("; ")));
        }
        if let Some(channel) = iso["channel"].as_str() {
            s.push_str(&format!("; tensors cross by {channel}"));
        }
        Some(s)
    }

    /// A report for a candidate whose worker hung or died.
    pub fn worker_failure(check: Check, message: String, stderr: String) -> Self {
        VerifyReport {
            verified: false,
            kind: None,
            device: None,
            failures: vec![CheckFailure {
                check,
                trial: None,
                output: None,
                inputs: None,
                message,
            }],
            trials: Vec::new(),
            poison: None,
            strict: false,
            memory: None,
            cuda_graphs: None,
            traceback: None,
            worker_stderr: (!stderr.is_empty()).then_some(stderr),
            isolation: None,
            seed_salt: None,
            redrawn_parameters: None,
            rule: None,
            phases: None,
            retried_alone: None,
        }
    }

    /// Whether a check failed for want of GPU memory (which, beside other verifications on
    /// the device, may be theirs as much as this candidate's).
    pub fn ran_out_of_memory(&self) -> bool {
        self.failures.iter().any(|f| f.check == Check::OutOfMemory)
    }

    /// The distinct checks that failed, in order of first failure.
    pub fn failed_checks(&self) -> Vec<Check> {
        let mut seen = Vec::new();
        for f in &self.failures {
            if !seen.contains(&f.check) {
                seen.push(f.check);
            }
        }
        seen
    }

    /// One line per failed check: its first occurrence, and in how many trials it failed.
    pub fn reasons(&self) -> Vec<String> {
        self.failed_checks()
            .into_iter()
            .map(|check| {
                let all: Vec<&CheckFailure> =
                    self.failures.iter().filter(|f| f.check == check).collect();
                let first = all[0];
                let mut trials: Vec<u32> = all.iter().filter_map(|f| f.trial).collect();
                trials.dedup();
                let place = match (first.trial, &first.inputs) {
                    (Some(t), Some(kind)) => format!(" (trial {t}, {kind} inputs"),
                    (Some(t), None) => format!(" (trial {t}"),
                    _ => String::new(),
                };
                let place = if place.is_empty() {
                    place
                } else if trials.len() > 1 {
                    format!("{place}; failed in {} trials)", trials.len())
                } else {
                    format!("{place})")
                };
                format!("{}: {}{place}", check.name(), first.message)
            })
            .collect()
    }

    /// Largest relative-norm error over all trials and outputs, and whether every output
    /// met the two allclose bars.
    pub fn worst(&self) -> (Option<f64>, bool, bool) {
        let mut worst: Option<f64> = None;
        let (mut a2, mut a4) = (true, true);
        for t in &self.trials {
            for o in &t.outputs {
                if let Some(e) = o.rel_err {
                    worst = Some(worst.map_or(e, |w| w.max(e)));
                }
                a2 &= o.allclose_1e2.unwrap_or(true);
                a4 &= o.allclose_1e4.unwrap_or(true);
            }
        }
        (worst, a2, a4)
    }

    /// The outputs (over all trials) that the value rule rejected against the reference
    /// and the reference-accuracy rule accepted against the float64 truth, with the
    /// largest ratio of the candidate's relative-norm error to the reference's.
    pub fn accepted_by_truth(&self) -> (usize, Option<f64>) {
        let mut n = 0;
        let mut worst: Option<f64> = None;
        for o in self.trials.iter().flat_map(|t| &t.outputs) {
            if let Some(a) = o.reference_accuracy.as_ref().filter(|a| a.accepted) {
                n += 1;
                let r = a.candidate_rel_err / a.reference_rel_err.max(f64::MIN_POSITIVE);
                worst = Some(worst.map_or(r, |w: f64| w.max(r)));
            }
        }
        (n, worst)
    }

    /// A one-line summary of a verified candidate (a second line, on CUDA, with the
    /// peak memory).
    pub fn summary(&self) -> String {
        let (worst, a2, a4) = self.worst();
        let yes = |b: bool| if b { "yes" } else { "no" };
        let mut s = format!(
            "verified: {} trials on {} ({}), max rel-norm error {}; allclose 1e-2: {}, 1e-4: {}",
            self.trials.len(),
            self.device.as_deref().unwrap_or("?"),
            self.kind.as_deref().unwrap_or("?"),
            worst.map_or("n/a".to_string(), |w| format!("{w:.2e}")),
            yes(a2),
            yes(a4),
        );
        if let (n @ 1.., worst) = self.accepted_by_truth() {
            s.push_str(&format!(
                "; {n} output check(s) accepted by the reference-accuracy rule (PyTorch's own \
                 result is outside the rule against float64; the candidate's error is at most \
                 {:.2}x the reference's)",
                worst.unwrap_or(0.0)
            ));
        }
        if let Some(m) = self.memory.as_ref().and_then(MemoryReport::line) {
            s.push('\n');
            s.push_str(&m);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phase_line_names_the_compile_ahead_only_when_it_ran() {
        let mut p: Phases = serde_json::from_value(serde_json::json!({
            "load_s": 0.36, "trials_s": 5.73, "truth_s": 0.34, "total_s": 12.53
        }))
        .unwrap();
        assert_eq!(
            p.line(6),
            "load 0.36 s, 6 trials 5.73 s (float64 truth 0.34 s), 12.53 s in the worker"
        );
        p.jit_s = 6.42;
        assert_eq!(
            p.line(6),
            "load 0.36 s, kernels compiled ahead 6.42 s, 6 trials 5.73 s (float64 truth 0.34 s), \
             12.53 s in the worker"
        );
        p.jit_s = 0.0;
        p.redrawn_s = 2.9;
        assert_eq!(
            p.line(6),
            "load 0.36 s, 6 trials 5.73 s (float64 truth 0.34 s), re-drawn parameters' setup \
             2.90 s, 12.53 s in the worker"
        );
    }

    #[test]
    fn memory_lines_say_both_peaks_and_their_ratio() {
        let m: MemoryReport = serde_json::from_value(serde_json::json!({
            "device": "cuda", "reference_peak_bytes": 12_800_000_000u64,
            "verify_peak_bytes": 32_000_000_000u64, "ratio": 2.5, "note": "x"
        }))
        .unwrap();
        assert_eq!(
            m.line().unwrap(),
            "peak GPU memory: reference 12.800 GB, verification 32.000 GB (2.50x)"
        );
        let cpu: MemoryReport = serde_json::from_value(serde_json::json!({
            "device": "cpu", "reference_peak_bytes": null, "verify_peak_bytes": null,
            "ratio": null, "note": "peak memory is measured on CUDA only"
        }))
        .unwrap();
        assert_eq!(cpu.line(), None);
    }

    #[test]
    fn reasons_are_one_line_per_check() {
        let f = |check, trial| CheckFailure {
            check,
            trial: Some(trial),
            output: Some(0),
            inputs: Some("fresh".into()),
            message: "output 0: bad".into(),
        };
        let mut r = VerifyReport::worker_failure(Check::Timeout, "x".into(), String::new());
        r.failures = vec![f(Check::Values, 1), f(Check::Values, 3), f(Check::Alias, 1)];
        let reasons = r.reasons();
        assert_eq!(reasons.len(), 2);
        assert_eq!(
            reasons[0],
            "values: output 0: bad (trial 1, fresh inputs; failed in 2 trials)"
        );
        assert!(reasons[1].starts_with("alias: "));
    }

    #[test]
    fn unknown_checks_deserialize_as_other() {
        let c: Check = serde_json::from_str("\"brand_new_check\"").unwrap();
        assert_eq!(c, Check::Other);
        let c: Check = serde_json::from_str("\"inputs_modified\"").unwrap();
        assert_eq!(c, Check::InputsModified);
        let c: Check = serde_json::from_str("\"out_of_memory\"").unwrap();
        assert_eq!(c, Check::OutOfMemory);
    }
}
