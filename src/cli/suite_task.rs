//! One task of `drtc suite`: load and compile it (within the task's time limit), write the
//! module, verify it and, on a GPU, time it against eager PyTorch (and torch.compile). The
//! result is one JSON row, whatever happened.

use super::suite_memory::MemoryBudget;
use drtc::driver::compile::{compile_graph, CompileOptions, Compiled};
use drtc::driver::frontend::Frontend;
use drtc::driver::load::load_programs_with_types;
use drtc::driver::retry_ladder::{climb, Checks, Verdict};
use drtc::driver::roofline::Work;
use drtc::driver::search::{search_compiled, SearchContext, SearchScope};
use drtc::driver::shrink::shrink_overrides;
use drtc::verifier::{
    BenchReport, BenchRequest, Check, CompileMode, DeviceKind, DrtcHome, RuntimeError,
    VerifyRequest, WorkerPool,
};
use drtc_backends::stitch::{GeneratedModule, ModuleForm};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What every task of one run shares.
pub struct TaskContext<'a> {
    pub pool: &'a WorkerPool,
    pub device: DeviceKind,
    pub opts: CompileOptions,
    pub shrink: bool,
    /// Which frontend reads the programs.
    pub frontend: Frontend,
    /// Scratch directory for the written modules.
    pub work: PathBuf,
    /// Deadline of one worker request (`--timeout`).
    pub request_timeout: Duration,
    /// Deadline of the whole task (`--task-timeout`), waiting for the timing turn excluded.
    pub task_timeout: Duration,
    /// The torch.compile modes timed beside eager PyTorch.
    pub compile_modes: Vec<CompileMode>,
    pub torch_precision: Option<String>,
    /// Seconds each torch.compile mode's compile may take (`--compile-budget`).
    pub compile_budget: Option<Duration>,
    /// Test-time search on the GPU (`--search`): the home of its cache, and its scope.
    pub search: Option<(&'a DrtcHome, SearchScope)>,
    /// The run's settings, copied into every row.
    pub settings: Value,
    /// GPU memory admission (`suite_memory.rs`), on a local GPU.
    pub memory: Option<&'a MemoryBudget>,
}

/// The compiled module of a task, or why there is none.
enum Front {
    Built {
        compiled: Box<Compiled>,
        form: ModuleForm,
        reference: String,
        compile_ms: f64,
        /// The frontend that read it, its library calls and notes.
        frontend: Value,
        /// The constant overrides it was compiled with (`--shrink` may widen spatial caps).
        overrides: Vec<String>,
        /// The work its IR says must be done (bytes, FLOPs), for speed of light.
        work: Work,
    },
    Rejected {
        status: &'static str,
        error: String,
        error_full: Option<String>,
    },
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

/// Frontend and compile pipeline (the part that runs in drtc itself).
fn build(
    path: PathBuf,
    text: String,
    task: String,
    overrides: Vec<drtc::driver::constants::ConstantOverride>,
    shrink: bool,
    opts: CompileOptions,
    frontend: Frontend,
) -> Front {
    let t0 = Instant::now();
    // a program shrunk too far for its own downsampling (wider spatial caps) or whose
    // shapes no longer match (coupled sizes): the shrink's fallbacks
    let load =
        |overrides: &[drtc::driver::constants::ConstantOverride]| match load_programs_with_types(
            &path, &text, overrides, None, None, frontend,
        ) {
            Ok(mut v) if v.len() == 1 => v.remove(0),
            Ok(_) => Err(drtc::driver::load::LoadError {
                name: task.clone(),
                line: None,
                message: "not one program".into(),
            }),
            Err(m) => Err(drtc::driver::load::LoadError {
                name: task.clone(),
                line: None,
                message: m,
            }),
        };
    let (loaded, used) =
        drtc::driver::shrink::load_with_fallbacks(&text, &overrides, &[], shrink, &load);
    let p = match loaded {
        Ok(p) => p,
        Err(e) if shrink && load(&[]).is_ok() => {
            // the program is fine at its own sizes: shrinking broke a shape coincidence
            return Front::Rejected {
                status: "unshrinkable",
                error: first_line(&e.message),
                error_full: None,
            };
        }
        Err(e) => {
            return Front::Rejected {
                status: "frontend",
                error: first_line(&e.message),
                error_full: Some(e.message),
            }
        }
    };
    let frontend = p.frontend_json();
    let work = Work::of(&p.graph);
    match compile_graph(p.graph, &p.form, &opts) {
        Err(e) => Front::Rejected {
            status: "compile",
            error: e,
            error_full: None,
        },
        Ok(c) => Front::Built {
            compiled: Box::new(c),
            form: p.form,
            reference: p.reference_source.unwrap_or_default(),
            frontend,
            work,
            overrides: used
                .iter()
                .map(|o| format!("{}={}", o.name, o.value))
                .collect(),
            // parse to written module: loading (frontend) plus the compile pipeline
            compile_ms: t0.elapsed().as_secs_f64() * 1e3,
        },
    }
}

/// The row's fields that describe the generated module.
fn module_fields(row: &mut Value, m: &GeneratedModule) {
    row["gemm"] = json!(m
        .regions
        .iter()
        .filter_map(|r| r.gemm.as_ref().map(|g| json!({
            "region": r.index,
            "implementation": g.imp.describe(),
            "mnk": [g.shape.m, g.shape.n, g.shape.k],
            "batch": g.shape.batch,
            "reason": g.reason,
        })))
        .collect::<Vec<_>>());
    row["kernels"] = json!(m.kernel_count());
    row["regions"] = json!(m.regions.len());
    row["fallback_ops"] = json!(m.fallback_ops());
    if !m.layout.is_empty() {
        row["conv_layouts"] = json!(m.layout);
    }
    // whether the module uses CUDA graphs, and why (the compile-time decision)
    row["graphs"] = m.graphs_json();
}

/// The search's context for one task: its reference, the cache under `home`, the policy's
/// value rule.
fn search_context<'a>(
    refp: &'a Path,
    (home, scope): (&DrtcHome, SearchScope),
    cx: &TaskContext<'a>,
) -> Result<SearchContext<'a>, String> {
    SearchContext::in_home(cx.pool, home, refp, cx.opts.precision.rule(), scope)
}

/// Test-time search of the compiled task on the GPU; the module is regenerated with the
/// fastest verified choices and the row records what was tried.
fn search_task(
    row: &mut Value,
    compiled: &mut Compiled,
    form: &ModuleForm,
    refp: &Path,
    (home, scope): (&DrtcHome, SearchScope),
    cx: &TaskContext,
) {
    let t0 = Instant::now();
    match search_context(refp, (home, scope), cx) {
        Ok(scx) => {
            let outcome = search_compiled(compiled, form, &cx.opts, &scx);
            row["search"] = json!({
                "log": outcome.log,
                "timed": outcome.timed,
                "cache_hits": outcome.cache_hits,
                "ms": t0.elapsed().as_secs_f64() * 1e3,
            });
        }
        Err(e) => row["search"] = json!({ "error": e }),
    }
}

/// `drtc suite`'s way to write and check a module, for the retry ladder: each check
/// writes the row's module and verification fields.
struct SuiteChecks<'r, 'c> {
    row: &'r mut Value,
    req: &'r VerifyRequest,
    cx: &'r TaskContext<'c>,
    started: Instant,
    cand: &'r Path,
}

impl Checks for SuiteChecks<'_, '_> {
    /// Whether the check ran out of GPU memory (the typed reports' verdict).
    type Report = OutOfMemory;
    fn check(&mut self, module: &GeneratedModule) -> Result<(Verdict, OutOfMemory), String> {
        module_fields(self.row, module);
        std::fs::write(self.cand, &module.source)
            .map_err(|e| format!("cannot write the module {}: {e}", self.cand.display()))?;
        Ok(check(self.row, self.req, self.cx, self.started, false))
    }
}

/// Whether a check ran out of GPU memory (`VerifyReport::ran_out_of_memory`,
/// `BenchReport::ran_out_of_memory`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfMemory(pub bool);

/// Runs one task; the row says what happened (never an error: a task's failure is data).
pub fn run_task(path: &Path, cx: &TaskContext) -> Value {
    let started = Instant::now();
    let task = path
        .file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    let mut row = cx.settings.clone();
    row["task"] = json!(task);
    finish(&mut row, path, &task, cx, started);
    row["task_ms"] = json!(started.elapsed().as_secs_f64() * 1e3);
    row
}

fn finish(row: &mut Value, path: &Path, task: &str, cx: &TaskContext, started: Instant) {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            row["status"] = json!("frontend");
            row["error"] = json!(format!("cannot read {}: {e}", path.display()));
            return;
        }
    };
    let overrides = if cx.shrink {
        shrink_overrides(&text)
    } else {
        vec![]
    };
    row["overrides"] = json!(overrides
        .iter()
        .map(|o| format!("{}={}", o.name, o.value))
        .collect::<Vec<_>>());
    // The frontend and compiler run in a thread of their own, so a pathological program
    // cannot hold the run past the task's limit (the thread is left to finish alone).
    let (tx, rx) = mpsc::channel();
    {
        let (path, task, opts, shrink, frontend) = (
            path.to_path_buf(),
            task.to_string(),
            cx.opts.clone(),
            cx.shrink,
            cx.frontend,
        );
        std::thread::spawn(move || {
            let _ = tx.send(build(path, text, task, overrides, shrink, opts, frontend));
        });
    }
    let front = match rx.recv_timeout(cx.task_timeout) {
        Ok(f) => f,
        Err(_) => {
            row["status"] = json!("timeout");
            row["reasons"] = json!([format!(
                "timeout: loading and compiling did not finish within the task's limit \
                 (--task-timeout {} s)",
                cx.task_timeout.as_secs()
            )]);
            return;
        }
    };
    let (mut compiled, form, reference, bytes_moved) = match front {
        Front::Rejected {
            status,
            error,
            error_full,
        } => {
            row["status"] = json!(status);
            row["error"] = json!(error);
            if let Some(full) = error_full {
                row["error_full"] = json!(full);
            }
            return;
        }
        Front::Built {
            compiled,
            form,
            reference,
            compile_ms,
            frontend,
            overrides,
            work,
        } => {
            row["overrides"] = json!(overrides);
            row["work"] = json!(work);
            row["frontend_used"] = frontend;
            row["compile_ms"] = json!(compile_ms);
            (compiled, form, reference, work.bytes)
        }
    };
    // the GPU memory of the search's candidate checks and the task's own, waited for
    // outside the task's time limit
    let reserved = cx
        .memory
        .map(|m| m.reserve(MemoryBudget::estimate(bytes_moved)));
    let started = match &reserved {
        Some(r) if r.waited > Duration::from_millis(100) => {
            row["memory_wait_s"] = json!(r.waited.as_secs_f64());
            started + r.waited
        }
        _ => started,
    };
    let cand = cx.work.join(format!("{task}_drtc.py"));
    let refp = cx.work.join(format!("{task}_ref.py"));
    let written = std::fs::write(&refp, reference).and_then(|_| {
        if let Some((home, scope)) = cx.search {
            search_task(row, &mut compiled, &form, &refp, (home, scope), cx);
        }
        module_fields(row, &compiled.module);
        std::fs::write(&cand, &compiled.module.source)
    });
    if let Err(e) = written {
        row["status"] = json!("failed");
        row["reasons"] = json!([format!(
            "cannot write the module under {}: {e}",
            cx.work.display()
        )]);
        return;
    }
    let mut req = VerifyRequest::generated(&refp, &cand);
    req.rule = Some(cx.opts.precision.rule().to_string());
    let mut first = check(row, &req, cx, started, false);
    // out of memory beside other jobs is not the module's failure: the same module once
    // more with the device to itself before any rung changes it (level-1 25 and 30 ran out
    // beside five 6 GiB tasks and climbed to the module without the e-graph rewrites)
    let mut retried = false;
    if cx.pool.size() > 1 && first.1 == OutOfMemory(true) {
        first = retry_alone(row, &req, cx);
        retried = true;
    }
    // a failed module climbs the retry ladder (the one `drtc compile` climbs)
    // the rungs' search context (a device scan and a Python query) only when they run
    let scx = cx
        .search
        .filter(|_| first.0.failed())
        .and_then(|hs| search_context(&refp, hs, cx).ok());
    let mut opts = cx.opts.clone();
    let mut checks = SuiteChecks {
        row,
        req: &req,
        cx,
        started,
        cand: &cand,
    };
    let climbed = climb(
        &mut compiled,
        &form,
        &mut opts,
        first,
        &mut checks,
        scx.as_ref(),
    );
    let oom = match climbed {
        Ok(c) => {
            if !c.retries.is_empty() {
                row["retries"] = json!(c.retries);
            }
            c.report
        }
        Err(e) => {
            row["status"] = json!("failed");
            row["reasons"] = json!([e]);
            return;
        }
    };
    // Out of memory beside other jobs may be theirs as much as this candidate's: try once
    // more with the device to itself, and keep both answers (the pool's own retry,
    // `WorkerPool::verify` and `bench`, keeps only the second; the suite's rows keep both
    // and the retry gets the task's limit anew)
    if cx.pool.size() > 1 && oom == OutOfMemory(true) && !retried {
        retry_alone(row, &req, cx);
    }
}

/// Checks `req` again with the device to itself after running out of memory beside other
/// jobs, with the task's limit anew (running out beside others is not the module's doing:
/// level-1 38 and 39 had 0 s left for the retry after their first attempt); the row keeps
/// the first attempt's reasons under `oom_retried_alone`.
fn retry_alone(row: &mut Value, req: &VerifyRequest, cx: &TaskContext) -> (Verdict, OutOfMemory) {
    let started = Instant::now();
    let first = row["reasons"].clone();
    if let Some(o) = row.as_object_mut() {
        o.remove("timing_error");
    }
    let again = check(row, req, cx, started, true);
    row["oom_retried_alone"] = json!({"first_attempt": first});
    again
}

/// Verifies (on CPU) or verifies and times (on CUDA), alone on the device or not: the
/// row's fields, the verdict the retry ladder reads, and whether it ran out of memory.
fn check(
    row: &mut Value,
    req: &VerifyRequest,
    cx: &TaskContext,
    started: Instant,
    alone: bool,
) -> (Verdict, OutOfMemory) {
    let left = cx.task_timeout.saturating_sub(started.elapsed());
    let limited = left < cx.request_timeout;
    let unanswered = |row: &mut Value, e: RuntimeError| {
        row["status"] = json!("failed");
        row["reasons"] = json!([e.to_string()]);
        let v = Verdict {
            verified: false,
            reasons: vec![e.to_string()],
            retryable: false,
        };
        (v, OutOfMemory(false))
    };
    match cx.device {
        DeviceKind::Cpu => {
            let timeout = left.min(cx.request_timeout);
            let r = if alone {
                cx.pool.verify_alone(req, timeout)
            } else {
                cx.pool.verify_within(req, timeout)
            };
            match r {
                Ok(rep) => {
                    row["status"] = json!(if rep.verified { "verified" } else { "failed" });
                    row["reasons"] = json!(rep.reasons());
                    row["verification_phases"] = json!(rep.phases);
                    memory_fields(row, &rep.memory);
                    let timeout = rep.failed_checks().contains(&Check::Timeout);
                    if timeout {
                        timed_out(row, cx, limited);
                    }
                    let v = Verdict {
                        verified: rep.verified,
                        reasons: rep.reasons(),
                        retryable: !timeout,
                    };
                    (v, OutOfMemory(rep.ran_out_of_memory()))
                }
                Err(e) => unanswered(row, e),
            }
        }
        DeviceKind::Cuda => {
            let bench = BenchRequest {
                verify: req.clone(),
                compile_modes: cx.compile_modes.clone(),
                torch_precision: cx.torch_precision.clone(),
                compile_budget_s: cx.compile_budget.map(|d| d.as_secs_f64()),
            };
            let r = if alone {
                cx.pool.bench_alone(&bench, Some(left))
            } else {
                cx.pool.bench_within(&bench, Some(left))
            };
            match r {
                Ok(b) => (
                    bench_fields(row, &b, cx, limited),
                    OutOfMemory(b.ran_out_of_memory()),
                ),
                Err(e) => unanswered(row, e),
            }
        }
    }
}

fn timed_out(row: &mut Value, cx: &TaskContext, limited: bool) {
    row["status"] = json!("timeout");
    if limited {
        if let Some(a) = row["reasons"].as_array_mut() {
            a.push(json!(format!(
                "the task's limit (--task-timeout {} s) was reached",
                cx.task_timeout.as_secs()
            )));
        }
    }
}

fn memory_fields(row: &mut Value, memory: &Option<drtc::verifier::MemoryReport>) {
    if let Some(m) = memory {
        if m.reference_peak_bytes.is_some() {
            row["ref_peak_bytes"] = json!(m.reference_peak_bytes);
            row["verify_peak_bytes"] = json!(m.verify_peak_bytes);
            row["memory_ratio"] = json!(m.ratio);
        }
    }
}

/// `graphs` of the row: what the module's CUDA graphs did: in verification (`verified`: used, and why not) and
/// in the timed calls (`timed`: captures, replays), beside the compile-time decision.
fn graph_fields(row: &mut Value, b: &BenchReport) {
    if !row["graphs"].is_object() {
        return;
    }
    if let Some(v) = &b.verify.cuda_graphs {
        row["graphs"]["verified"] = v.clone();
    }
    if let Some(t) = b.timing.as_ref().and_then(|t| t.cuda_graphs.as_ref()) {
        row["graphs"]["timed"] = t.clone();
    }
}

fn bench_fields(row: &mut Value, b: &BenchReport, cx: &TaskContext, limited: bool) -> Verdict {
    let mut reasons = b.verify.reasons();
    if let (n @ 1.., worst) = b.verify.accepted_by_truth() {
        row["reference_accuracy"] = json!({"outputs": n, "worst_ratio": worst});
    }
    let mut ok = b.verify.verified;
    // where the verification's time went (load, trials, the float64 truth)
    row["verification_phases"] = json!(b.verify.phases);
    memory_fields(row, &b.verify.memory);
    graph_fields(row, b);
    if let Some(t) = &b.timing {
        row["eager_ms"] = json!(t.reference.median_ms);
        row["drtc_ms"] = json!(t.candidate.median_ms);
        row["speedup_vs_eager"] = json!(t.speedup());
        if let Some(c) = &t.compiled {
            row["torch_compile_ms"] = json!(c.median_ms);
            row["speedup_vs_compile"] = json!(c.median_ms / t.candidate.median_ms);
        }
        baseline_fields(row, t);
        speed_of_light_fields(row, t, cx);
        if let Some(e) = &t.compiled_error {
            row["torch_compile_error"] = json!(e);
        }
        if let Some(w) = t.compile_warmup_ms {
            row["torch_compile_warmup_ms"] = json!(w);
        }
        if let Some(p) = &t.torch_precision {
            row["torch_precision_used"] = json!(p);
        }
        row["timed_outputs_ok"] = json!(t.timed_outputs_ok);
        if let Some(ok) = t.compiled_outputs_ok {
            // torch.compile held to drtc's rule, so a table can say whether it meets it
            row["torch_compile_outputs"] = json!({
                "ok": ok,
                "ok_without_truth": t.compiled_outputs_ok_without_truth,
                "failures": t.compiled_outputs_failures,
            });
        }
        if !t.timed_outputs_ok {
            ok = false;
            reasons.push(format!(
                "timed outputs failed the checks: {}",
                t.timed_outputs_failures.join("; ")
            ));
        }
    }
    // this attempt's: one before it (a rung's, the first beside other jobs) is not kept
    match &b.timing_error {
        Some(e) => row["timing_error"] = json!(e),
        None => {
            if let Some(o) = row.as_object_mut() {
                o.remove("timing_error");
            }
        }
    }
    let timing_timed_out = b.timing_error.as_deref().filter(|e| e.contains("timeout:"));
    if let Some(e) = timing_timed_out {
        reasons.push(e.to_string());
    }
    row["status"] = json!(if ok { "verified" } else { "failed" });
    row["reasons"] = json!(reasons);
    let timeout = b.verify.failed_checks().contains(&Check::Timeout) || timing_timed_out.is_some();
    if timeout {
        timed_out(row, cx, limited);
    }
    Verdict {
        verified: ok,
        reasons,
        retryable: !timeout,
    }
}

/// Every torch.compile mode timed (its median, compile time, whether its outputs met
/// drtc's rule, why it failed) and the best of them, with drtc's speedup over it.
fn baseline_fields(row: &mut Value, t: &drtc::verifier::TimingReport) {
    if t.compiled_modes.is_empty() {
        return;
    }
    row["torch_compile_modes"] = t
        .compiled_modes
        .iter()
        .map(|(mode, m)| {
            let entry = json!({
                "ms": m.stats.as_ref().map(|s| s.median_ms),
                "compile_ms": m.compile_ms,
                "outputs_ok": m.outputs_ok,
                "error": m.error,
                "over_budget": m.over_budget,
            });
            (mode.clone(), entry)
        })
        .collect::<serde_json::Map<_, _>>()
        .into();
    if let Some((mode, ms)) = t.best_compiled() {
        row["best_compile"] = json!({"mode": mode, "ms": ms});
        row["speedup_vs_best_compile"] = json!(ms / t.candidate.median_ms);
    }
}

/// The task's speed of light on the device's measured limits, and the fraction of it that
/// drtc, eager PyTorch and the best torch.compile mode reach.
fn speed_of_light_fields(row: &mut Value, t: &drtc::verifier::TimingReport, cx: &TaskContext) {
    let (Some(peaks), Ok(work)) = (
        &t.device_peaks,
        serde_json::from_value::<Work>(row["work"].clone()),
    ) else {
        return;
    };
    let sol = work.speed_of_light(peaks, cx.opts.precision);
    let mut fields = json!(sol);
    fields["fraction_drtc"] = json!(sol.fraction(t.candidate.median_ms));
    fields["fraction_eager"] = json!(sol.fraction(t.reference.median_ms));
    if let Some((_, ms)) = t.best_compiled() {
        fields["fraction_best_compile"] = json!(sol.fraction(ms));
    }
    fields["peaks"] = json!(peaks);
    row["speed_of_light"] = fields;
}
