//! `drtc compile`'s check of a written module: verification (and on CUDA timing) against
//! the reference, or the search's run of the same module, and the lines that report it.

use drtc::driver::retry_ladder::{Checks, Verdict};
use drtc::driver::roofline::Work;
use drtc::verifier::{
    BenchReport, BenchRequest, DeviceKind, DevicePeaks, RuntimeError, StartPhases, VerifyReport,
    VerifyRequest, WorkerPool,
};
use drtc_backends::stitch::GeneratedModule;
use drtc_backends::triton::Precision;
use serde_json::json;
use std::path::Path;
use std::time::Duration;

/// Verifies (and on CUDA times) one written module against its reference: the ladder's
/// verdict and the report's JSON.
pub(super) fn check(
    pool: &WorkerPool,
    device: DeviceKind,
    reference: &Path,
    candidate: &Path,
    precision: Precision,
) -> (Verdict, serde_json::Value) {
    let started = std::time::Instant::now();
    let (verdict, mut v) = check_once(pool, device, reference, candidate, precision);
    // the wall time of the request: the worker's start on a first call, the transfers
    v["wall_s"] = json!(started.elapsed().as_secs_f64());
    (verdict, v)
}

/// `drtc compile`'s way to write and check a module, for the retry ladder.
pub(super) struct CompileChecks<'a> {
    pub pool: &'a WorkerPool,
    pub device: DeviceKind,
    pub reference: &'a Path,
    pub candidate: &'a Path,
    pub precision: Precision,
}

impl Checks for CompileChecks<'_> {
    type Report = serde_json::Value;
    fn check(&mut self, module: &GeneratedModule) -> Result<(Verdict, serde_json::Value), String> {
        std::fs::write(self.candidate, &module.source)
            .map_err(|e| format!("cannot write {}: {e}", self.candidate.display()))?;
        Ok(check(
            self.pool,
            self.device,
            self.reference,
            self.candidate,
            self.precision,
        ))
    }
}

/// [`check`]'s answer from the search's own run of this exact module (same reference
/// text, value rule and request: `SearchContext::benched`) instead of a second run.
pub(super) fn searched_check(b: &BenchReport) -> (Verdict, serde_json::Value) {
    let mut v = bench_json(b);
    v["searched"] = json!(true);
    (verdict_of(&b.verify), v)
}

fn verdict_of(r: &VerifyReport) -> Verdict {
    Verdict {
        verified: r.verified,
        reasons: r.reasons(),
        retryable: true,
    }
}

/// The verdict of a request the checker could not answer: no module can do better.
fn unanswered(e: &RuntimeError) -> (Verdict, serde_json::Value) {
    let reasons = vec![e.to_string()];
    let v = json!({"verified": false, "reasons": reasons});
    let verdict = Verdict {
        verified: false,
        reasons,
        retryable: false,
    };
    (verdict, v)
}

/// A verification report as the compile report and `--timings` read it.
fn verify_json(r: &VerifyReport) -> serde_json::Value {
    json!({
        "verified": r.verified,
        "reasons": r.reasons(),
        "summary": r.summary(),
        "memory": r.memory,
        "cuda_graphs": r.cuda_graphs,
        "phases": r.phases,
        "trials": r.trials.len(),
    })
}

/// [`verify_json`] with the timing's figures.
fn bench_json(b: &BenchReport) -> serde_json::Value {
    let mut v = verify_json(&b.verify);
    let t = b.timing.as_ref();
    v["timed_cuda_graphs"] = json!(t.and_then(|t| t.cuda_graphs.clone()));
    v["eager_ms"] = json!(t.map(|t| t.reference.median_ms));
    v["drtc_ms"] = json!(t.map(|t| t.candidate.median_ms));
    v["speedup"] = json!(t.map(|t| t.speedup()));
    v["timing_error"] = json!(b.timing_error);
    if let Some(p) = t.and_then(|t| t.device_peaks.as_ref()) {
        v["device_peaks"] = json!(p);
    }
    v
}

/// The program's speed of light on the device's measured limits (in a verification's
/// timed JSON) and the fraction drtc's module reaches; None without a timing.
pub(super) fn speed_of_light(
    work: &Work,
    v: &serde_json::Value,
    precision: Precision,
) -> Option<serde_json::Value> {
    let peaks: DevicePeaks = serde_json::from_value(v["device_peaks"].clone()).ok()?;
    let drtc_ms = v["drtc_ms"].as_f64()?;
    let sol = work.speed_of_light(&peaks, precision);
    let mut out = json!(sol);
    out["fraction_drtc"] = json!(sol.fraction(drtc_ms));
    out["work"] = json!(work);
    out["peaks"] = json!(peaks);
    Some(out)
}

fn check_once(
    pool: &WorkerPool,
    device: DeviceKind,
    reference: &Path,
    candidate: &Path,
    precision: Precision,
) -> (Verdict, serde_json::Value) {
    let mut req = VerifyRequest::generated(reference, candidate);
    req.rule = Some(precision.rule().to_string());
    if device == DeviceKind::Cuda {
        match pool.bench(&BenchRequest::new(req)) {
            Ok(b) => (verdict_of(&b.verify), bench_json(&b)),
            Err(e) => unanswered(&e),
        }
    } else {
        match pool.verify(&req) {
            Ok(r) => (verdict_of(&r), verify_json(&r)),
            Err(e) => unanswered(&e),
        }
    }
}

/// Where one program's compile went before its check: the front end (all programs of the
/// file, torch.export included), the wait for the worker pool once the front end was done
/// (it starts meanwhile), drtc's own compile, and the search's races.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Stages {
    pub frontend: Duration,
    pub pool_wait: Duration,
    /// The start of the worker waited for (its `ready` line's phases), where one started.
    pub worker_start: Option<StartPhases>,
    pub compile: Duration,
    pub search: Option<Duration>,
}

impl Stages {
    /// The report's `timings` object.
    pub fn to_json(self) -> serde_json::Value {
        json!({
            "frontend_s": self.frontend.as_secs_f64(),
            "pool_wait_s": self.pool_wait.as_secs_f64(),
            "worker_start": self.worker_start,
            "compile_ms": self.compile.as_secs_f64() * 1e3,
            "search_s": self.search.map(|d| d.as_secs_f64()),
        })
    }
}

/// `--timings`: where the time went: front end, compiling, the search, verifying (the last
/// verification when a retry ran).
pub(super) fn timings_line(stages: &Stages, v: &serde_json::Value) -> String {
    let mut s = format!(
        "timings: front end {:.2} s; compile {:.1} ms",
        stages.frontend.as_secs_f64(),
        stages.compile.as_secs_f64() * 1e3
    );
    if stages.pool_wait >= Duration::from_millis(10) {
        s.push_str(&format!(
            "; waiting for the worker {:.2} s",
            stages.pool_wait.as_secs_f64()
        ));
        if let Some(p) = stages.worker_start {
            s.push_str(&format!(" (its start: {})", p.line()));
        }
    }
    if let Some(search) = stages.search {
        s.push_str(&format!("; search {:.2} s", search.as_secs_f64()));
    }
    let phases: Option<drtc::verifier::Phases> = serde_json::from_value(v["phases"].clone()).ok();
    let trials = v["trials"].as_u64().unwrap_or(0) as usize;
    if let Some(wall) = v["wall_s"].as_f64() {
        s.push_str(&format!("; verification {wall:.2} s"));
        if let Some(p) = phases {
            // on a GPU the request also timed the module: that pass is outside the phases
            let rest = if v["drtc_ms"].is_number() {
                "worker start, transfers and the timing pass"
            } else {
                "worker start and transfers"
            };
            s.push_str(&format!(
                " ({}; {rest} {:.2} s)",
                p.line(trials),
                (wall - p.total_s).max(0.0)
            ));
        }
    } else if v["searched"] == true {
        s.push_str("; verification: the search's run of this exact module");
        if let Some(p) = phases {
            s.push_str(&format!(" ({})", p.line(trials)));
        }
    }
    s
}

/// The line printed before verification starts, which can take far longer than compiling.
pub(super) fn verifying_line(device: DeviceKind) -> String {
    let trials = drtc::verifier::MIN_TRIALS;
    match device {
        DeviceKind::Cpu => format!(
            "verifying against the reference on cpu ({trials} trials under Triton's \
             interpreter; --no-verify skips it)..."
        ),
        _ => format!(
            "verifying against the reference on {} ({trials} trials, then timing)...",
            device.name()
        ),
    }
}

/// The peak-memory line of a verification, when it was measured (CUDA).
pub(super) fn memory_line(v: &serde_json::Value) -> Option<String> {
    let m: drtc::verifier::MemoryReport = serde_json::from_value(v["memory"].clone()).ok()?;
    m.line()
}

/// What the module's CUDA graphs did in verification and timing, when it has them.
pub(super) fn graphs_line(v: &serde_json::Value) -> Option<String> {
    let g = v.get("cuda_graphs").filter(|g| g.is_object())?;
    let mut line = if g["used"] == true {
        format!(
            "CUDA graphs used in verification: {} capture(s), {} replay(s)",
            g["captures"], g["replays"]
        )
    } else {
        format!(
            "CUDA graphs NOT used in verification: {}",
            g["reason"].as_str().unwrap_or("no reason given")
        )
    };
    if let Some(t) = v.get("timed_cuda_graphs").filter(|t| t.is_object()) {
        line.push_str(&format!("; timed calls: {} replay(s)", t["replays"]));
    }
    Some(line)
}
