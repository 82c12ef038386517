//! Verification and timing through the verifier's worker pool: the same isolated Python
//! workers, checks and reports as `drtc verify` and `drtc bench-pair`. Sources are written
//! to files under the drtc home (`python/`) for the worker to import, and removed after.

use crate::errors;
use crate::json::to_py;
use drtc::driver::retry_ladder::{Checks, Verdict};
use drtc::verifier::{
    BenchReport, BenchRequest, CompileMode, DeviceKind, DeviceScan, DrtcHome, PoolOptions,
    PythonEnv, RayConfig, RayTarget, RuntimeError, VerifyReport, VerifyRequest, WorkerPool,
};
use drtc_backends::stitch::GeneratedModule;
use drtc_backends::triton::Precision;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;
use tempfile::NamedTempFile;

/// `"cpu"`, `"cuda"`, or `None` (cuda when a GPU is present, else cpu).
pub fn device_kind(device: Option<&str>) -> PyResult<DeviceKind> {
    match device {
        None | Some("auto") => Ok(DeviceKind::detect()),
        Some("cpu") => Ok(DeviceKind::Cpu),
        Some("cuda") => Ok(DeviceKind::Cuda),
        Some(other) => Err(PyValueError::new_err(format!(
            "device must be \"cpu\", \"cuda\" or None, not {other:?}"
        ))),
    }
}

/// How one candidate is checked.
#[derive(Clone, Debug)]
pub struct VerifySettings {
    pub trials: u32,
    pub seed: u64,
    pub strict: bool,
    pub library_ops: Option<Vec<String>>,
}

impl Default for VerifySettings {
    fn default() -> Self {
        VerifySettings {
            trials: drtc::verifier::checks::MIN_TRIALS,
            seed: 0,
            strict: false,
            library_ops: None,
        }
    }
}

/// A reference and a candidate written to files the worker can import.
struct PairFiles {
    reference: NamedTempFile,
    candidate: NamedTempFile,
}

fn source_file(dir: &PathBuf, prefix: &str, text: &str) -> Result<NamedTempFile, RuntimeError> {
    let io = |e| RuntimeError::Io {
        path: dir.clone(),
        source: e,
    };
    let mut f = tempfile::Builder::new()
        .prefix(prefix)
        .suffix(".py")
        .tempfile_in(dir)
        .map_err(io)?;
    f.write_all(text.as_bytes()).map_err(io)?;
    f.flush().map_err(io)?;
    Ok(f)
}

impl PairFiles {
    fn write(home: &DrtcHome, reference: &str, candidate: &str) -> Result<Self, RuntimeError> {
        let dir = home.dir("python")?;
        Ok(PairFiles {
            reference: source_file(&dir, "reference_", reference)?,
            candidate: source_file(&dir, "candidate_", candidate)?,
        })
    }

    fn request(&self, s: &VerifySettings) -> VerifyRequest {
        VerifyRequest {
            reference: self.reference.path().to_path_buf(),
            candidate: self.candidate.path().to_path_buf(),
            trials: s.trials,
            seed: s.seed,
            strict: s.strict,
            library_ops: s.library_ops.clone(),
            rule: None,
            seed_salt: None,
            trusted: false,
        }
    }
}

fn make_pool(
    device: DeviceKind,
    workers: Option<usize>,
    per_gpu: usize,
    timeout: f64,
    bench_timeout: Option<f64>,
    ray: Option<RayConfig>,
) -> PyResult<(WorkerPool, DrtcHome)> {
    if !(timeout.is_finite() && timeout > 0.0) {
        return Err(PyValueError::new_err(
            "timeout must be a positive number of seconds",
        ));
    }
    let home = DrtcHome::from_env();
    let python = PythonEnv::locate(&home).map_err(errors::runtime)?;
    let mut options = PoolOptions::new(device);
    options.workers = workers;
    options.workers_per_gpu = per_gpu.max(1);
    options.request_timeout = Duration::from_secs_f64(timeout);
    let bench = bench_timeout.unwrap_or((2.0 * timeout).max(timeout + 60.0));
    if !(bench.is_finite() && bench > 0.0) {
        return Err(PyValueError::new_err(
            "bench_timeout must be a positive number of seconds",
        ));
    }
    options.bench_timeout = Duration::from_secs_f64(bench);
    options.ray = ray;
    let pool = WorkerPool::new(python, &home, options).map_err(errors::runtime)?;
    Ok((pool, home))
}

/// drtc's own modules checked against one reference in one worker pool, as `drtc compile`
/// checks them (the generated-module request under the policy's value rule): the retry
/// ladder's checker for `drtc.compile(verify=True)`.
pub struct ModuleChecks {
    pool: WorkerPool,
    home: DrtcHome,
    reference: NamedTempFile,
    precision: Precision,
    /// The checker's own failure, when a request went unanswered.
    pub error: Option<RuntimeError>,
}

impl ModuleChecks {
    pub fn new(device: DeviceKind, reference: &str, precision: Precision) -> PyResult<Self> {
        let (pool, home) = make_pool(device, Some(1), 1, 300.0, None, None)?;
        let dir = home.dir("python").map_err(errors::runtime)?;
        let reference = source_file(&dir, "reference_", reference).map_err(errors::runtime)?;
        Ok(ModuleChecks {
            pool,
            home,
            reference,
            precision,
            error: None,
        })
    }

    fn verify(&self, module: &GeneratedModule) -> Result<VerifyReport, RuntimeError> {
        let dir = self.home.dir("python")?;
        let candidate = source_file(&dir, "candidate_", &module.source)?;
        let mut req = VerifyRequest::generated(self.reference.path(), candidate.path());
        req.rule = Some(self.precision.rule().to_string());
        self.pool.verify(&req)
    }
}

impl Checks for ModuleChecks {
    type Report = VerifyReport;
    fn check(&mut self, module: &GeneratedModule) -> Result<(Verdict, VerifyReport), String> {
        match self.verify(module) {
            Ok(r) => Ok((
                Verdict {
                    verified: r.verified,
                    reasons: r.reasons(),
                    retryable: true,
                },
                r,
            )),
            Err(e) => {
                let line = e.to_string();
                self.error = Some(e);
                Err(line)
            }
        }
    }
}

/// The report as a dict, plus `reasons`: one line per failed check (what `drtc verify`
/// prints).
fn report_json(r: &VerifyReport) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    v["reasons"] = serde_json::json!(r.reasons());
    v
}

fn bench_json(b: &BenchReport) -> serde_json::Value {
    let mut v = serde_json::to_value(b).unwrap_or_default();
    v["verify"] = report_json(&b.verify);
    v["speedup"] = match &b.timing {
        Some(t) => serde_json::json!(t.speedup()),
        None => serde_json::Value::Null,
    };
    v
}

/// Verifies a candidate against its PyTorch reference in an isolated worker (the checks of
/// `drtc verify`: fresh random inputs, aliasing, unwritten outputs, mutated inputs, ...).
/// Returns the runtime's full report as a dict (`verified`, `failures`, `trials`, ...).
#[pyfunction]
#[pyo3(signature = (reference_src, candidate_src, *, device = None, trials = 5, seed = 0, strict = false, library_ops = None, timeout = 300.0, set = None, shrink = false))]
#[allow(clippy::too_many_arguments)]
pub fn verify<'py>(
    py: Python<'py>,
    reference_src: &str,
    candidate_src: &str,
    device: Option<&str>,
    trials: u32,
    seed: u64,
    strict: bool,
    library_ops: Option<Vec<String>>,
    timeout: f64,
    set: Option<Bound<'py, PyDict>>,
    shrink: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let (reference, _) = crate::sizes::sized(reference_src, set.as_ref(), shrink)?;
    let reference_src = reference.as_str();
    let device = device_kind(device)?;
    let (pool, home) = make_pool(device, Some(1), 1, timeout, None, None)?;
    let settings = VerifySettings {
        trials,
        seed,
        strict,
        library_ops,
    };
    let report = py
        .detach(|| {
            let files = PairFiles::write(&home, reference_src, candidate_src)?;
            pool.verify(&files.request(&settings))
        })
        .map_err(errors::runtime)?;
    to_py(py, &report_json(&report))
}

/// Verifies, then times a candidate against its reference on a CUDA GPU (CUDA events, L2
/// flushed, as `drtc bench-pair`). Returns `{"verify", "timing", "timing_error", "speedup"}`.
#[pyfunction]
#[pyo3(signature = (reference_src, candidate_src, *, trials = 5, seed = 0, strict = false, compile_baseline = false, timeout = 300.0, set = None, shrink = false, compile_modes = None))]
#[allow(clippy::too_many_arguments)]
pub fn bench<'py>(
    py: Python<'py>,
    reference_src: &str,
    candidate_src: &str,
    trials: u32,
    seed: u64,
    strict: bool,
    compile_baseline: bool,
    timeout: f64,
    set: Option<Bound<'py, PyDict>>,
    shrink: bool,
    compile_modes: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (reference, _) = crate::sizes::sized(reference_src, set.as_ref(), shrink)?;
    let reference_src = reference.as_str();
    let mut modes = BenchRequest::default_mode_if(compile_baseline);
    for name in compile_modes.unwrap_or_default() {
        let mode = CompileMode::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "compile_modes: unknown torch.compile mode {name:?} (one of default, \
                     max-autotune, max-autotune-no-cudagraphs, reduce-overhead)"
                ))
            })?;
        if !modes.contains(&mode) {
            modes.push(mode);
        }
    }
    let (pool, home) = make_pool(DeviceKind::Cuda, Some(1), 1, timeout, None, None)?;
    let settings = VerifySettings {
        trials,
        seed,
        strict,
        library_ops: None,
    };
    let report = py
        .detach(|| {
            let files = PairFiles::write(&home, reference_src, candidate_src)?;
            pool.bench(&BenchRequest {
                verify: files.request(&settings),
                compile_modes: modes,
                torch_precision: None,
                compile_budget_s: None,
            })
        })
        .map_err(errors::runtime)?;
    to_py(py, &bench_json(&report))
}

/// The CUDA GPUs drtc sees (an empty list when none; then CPU mode applies).
#[pyfunction(name = "devices")]
pub fn list_devices(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let gpus = match drtc::verifier::devices::scan() {
        DeviceScan::Gpus(g) => g,
        DeviceScan::None { .. } => vec![],
    };
    to_py(py, &gpus)
}

/// Runs `f` on every item over `threads` threads; results in order.
fn run_all<T: Sync, R: Send>(threads: usize, items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads.min(items.len()).max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                *results[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
            });
        }
    });
    results
        .into_iter()
        .filter_map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner()))
        .collect()
}

/// A long-lived pool of verification workers (`workers_per_gpu` per GPU on CUDA, default
/// one: several verify answers at once, their timing passes one at a time per GPU;
/// `workers` on CPU).
/// A candidate that hangs past `timeout` seconds is killed with its worker, reported as a
/// `timeout` failure, and the worker is replaced: the pool keeps serving. With `ray`
/// (`"auto"`, `"local"` or a cluster address) the workers are verification actors on a
/// Ray cluster (one per GPU, `workers` bounding the GPUs taken; or CPU actors); with
/// `ray_shared` they are named, detached actors in the `drtc` namespace, found or started
/// on first use, which every process of a job shares.
#[pyclass(frozen, module = "drtc")]
pub struct Verifier {
    pool: WorkerPool,
    home: DrtcHome,
}

impl Verifier {
    fn one(&self, reference: &str, candidate: &str, s: &VerifySettings) -> serde_json::Value {
        let r = PairFiles::write(&self.home, reference, candidate)
            .and_then(|files| self.pool.verify(&files.request(s)));
        match r {
            Ok(report) => report_json(&report),
            Err(e) => machinery_failure(&e),
        }
    }

    fn one_bench(&self, reference: &str, candidate: &str, s: &VerifySettings) -> serde_json::Value {
        let r = PairFiles::write(&self.home, reference, candidate).and_then(|files| {
            self.pool.bench(&BenchRequest {
                verify: files.request(s),
                compile_modes: vec![],
                torch_precision: None,
                compile_budget_s: None,
            })
        });
        match r {
            Ok(report) => bench_json(&report),
            Err(e) => {
                serde_json::json!({"verify": machinery_failure(&e), "timing": null, "timing_error": e.to_string(), "speedup": null})
            }
        }
    }
}

/// A report for a request the runtime could not run (a worker that did not start, ...).
fn machinery_failure(e: &RuntimeError) -> serde_json::Value {
    let r = VerifyReport::worker_failure(
        drtc::verifier::Check::Other,
        format!("runtime error: {e}"),
        String::new(),
    );
    let mut v = report_json(&r);
    v["runtime_error"] = serde_json::json!(e.to_string());
    v
}

type Pair = (String, String);

#[pymethods]
impl Verifier {
    #[new]
    #[pyo3(signature = (*, device = None, workers = None, workers_per_gpu = 1, timeout = 300.0, bench_timeout = None, ray = None, ray_shared = false))]
    fn new(
        device: Option<&str>,
        workers: Option<usize>,
        workers_per_gpu: usize,
        timeout: f64,
        bench_timeout: Option<f64>,
        ray: Option<&str>,
        ray_shared: bool,
    ) -> PyResult<Self> {
        let device = device_kind(device)?;
        if workers_per_gpu == 0 {
            return Err(PyValueError::new_err(
                "workers_per_gpu must be at least 1 (answers verified at once per GPU)",
            ));
        }
        let ray = ray
            .map(|r| {
                r.parse::<RayTarget>().map(|target| RayConfig {
                    shared: ray_shared,
                    ..RayConfig::new(target)
                })
            })
            .transpose()
            .map_err(PyValueError::new_err)?;
        let (pool, home) = make_pool(
            device,
            workers,
            workers_per_gpu,
            timeout,
            bench_timeout,
            ray,
        )?;
        Ok(Verifier { pool, home })
    }

    /// "cpu" or "cuda".
    #[getter]
    fn device(&self) -> &'static str {
        self.pool.device().name()
    }

    /// Number of workers.
    #[getter]
    fn size(&self) -> usize {
        self.pool.size()
    }

    /// Workers replaced after a hang, a death or a GPU fault.
    #[getter]
    fn restarts(&self) -> usize {
        self.pool.restarts()
    }

    /// The Ray job's figures (requests and busy seconds per actor, actors replaced,
    /// failures by reason), or None for local workers.
    fn ray_summary<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match py.detach(|| self.pool.ray_summary()) {
            None => Ok(None),
            Some(Ok(s)) => to_py(py, &s).map(Some),
            Some(Err(e)) => Err(errors::runtime(e)),
        }
    }

    /// Starts every worker now instead of on first use.
    fn warm_up(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.pool.warm_up())
            .map(|_| ())
            .map_err(errors::runtime)
    }

    /// Verifies one candidate; returns the runtime's report (never raises on a bad
    /// candidate: its failures are in the report).
    #[pyo3(signature = (reference_src, candidate_src, *, trials = 5, seed = 0, strict = false))]
    fn verify<'py>(
        &self,
        py: Python<'py>,
        reference_src: &str,
        candidate_src: &str,
        trials: u32,
        seed: u64,
        strict: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let s = settings(trials, seed, strict);
        let v = py.detach(|| self.one(reference_src, candidate_src, &s));
        to_py(py, &v)
    }

    /// Verifies many `(reference_src, candidate_src)` pairs concurrently over the workers;
    /// reports in order.
    #[pyo3(signature = (pairs, *, trials = 5, seed = 0, strict = false))]
    fn verify_many<'py>(
        &self,
        py: Python<'py>,
        pairs: Vec<Pair>,
        trials: u32,
        seed: u64,
        strict: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let s = settings(trials, seed, strict);
        let v = py.detach(|| run_all(self.pool.size(), &pairs, |(r, c)| self.one(r, c, &s)));
        to_py(py, &v)
    }

    /// Verifies, then times one candidate (CUDA only): `{"verify", "timing", "speedup", ...}`.
    #[pyo3(signature = (reference_src, candidate_src, *, trials = 5, seed = 0, strict = false))]
    fn bench<'py>(
        &self,
        py: Python<'py>,
        reference_src: &str,
        candidate_src: &str,
        trials: u32,
        seed: u64,
        strict: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.need_cuda()?;
        let s = settings(trials, seed, strict);
        let v = py.detach(|| self.one_bench(reference_src, candidate_src, &s));
        to_py(py, &v)
    }

    /// `bench` over many pairs, spread over the GPUs (one worker each); results in order.
    #[pyo3(signature = (pairs, *, trials = 5, seed = 0, strict = false))]
    fn bench_many<'py>(
        &self,
        py: Python<'py>,
        pairs: Vec<Pair>,
        trials: u32,
        seed: u64,
        strict: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.need_cuda()?;
        let s = settings(trials, seed, strict);
        let v = py.detach(|| run_all(self.pool.size(), &pairs, |(r, c)| self.one_bench(r, c, &s)));
        to_py(py, &v)
    }

    fn __repr__(&self) -> String {
        format!(
            "<drtc.Verifier {} workers on {}>",
            self.pool.size(),
            self.pool.device().name()
        )
    }
}

impl Verifier {
    fn need_cuda(&self) -> PyResult<()> {
        if self.pool.device() == DeviceKind::Cuda {
            Ok(())
        } else {
            Err(errors::RuntimeEnvError::new_err(
                "timing needs a CUDA GPU; this Verifier runs on cpu (correctness only)",
            ))
        }
    }
}

fn settings(trials: u32, seed: u64, strict: bool) -> VerifySettings {
    VerifySettings {
        trials,
        seed,
        strict,
        library_ops: None,
    }
}
