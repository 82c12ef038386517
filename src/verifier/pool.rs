//! A pool of Python workers: one or more per GPU (pinned with `CUDA_VISIBLE_DEVICES`), or
//! several on CPU. Each request gets an idle worker and a deadline; a worker that hangs,
//! dies, runs out of memory or faults the GPU is killed and replaced on next use, and only
//! its candidate fails.
//!
//! Workers sharing a GPU verify side by side, but timing is exclusive: a bench request
//! verifies and prepares (torch.compile included) in a shared pass of the GPU's
//! [`DeviceGate`], then times in an exclusive pass, when no other worker runs anything on
//! that GPU.
//!
//! With [`PoolOptions::ray`] the pool's slots are verification actors on a Ray cluster
//! (`super::ray`): the same requests, deadlines and reports, each actor with its own gate
//! (it owns its GPU, so its timing is exclusive by construction).

use super::checks::{Check, VerifyReport, VerifyRequest, MIN_TRIALS};
use super::devices::{self, DeviceScan};
use super::env::{DrtcHome, PythonEnv};
use super::error::{RuntimeError, RuntimeResult};
use super::gate::{DeviceGate, Pass};
pub use super::options::{DeviceKind, PoolOptions};
use super::ray::bridge::{Bridge, BridgeStart};
use super::ray::summary::RaySummary;
use super::service::launch::{self, ServiceLaunch};
use super::service::messages::{ServiceReply, ServiceRequest};
use super::service::{client, ServiceClient};
use super::time::{BenchReport, BenchRequest, CompileMode, TimingReport, TimingSeconds};
use super::worker::{self, Exchange, Worker, WorkerDevice, WorkerSpec};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Messages in a dead worker's stderr that mean the GPU faulted.
const GPU_FAULT_MARKERS: [&str; 5] = [
    "illegal memory access",
    "device-side assert",
    "unspecified launch failure",
    "CUDA_ERROR_ILLEGAL_ADDRESS",
    "misaligned address",
];

/// Where a slot's requests go.
enum Slot {
    /// A local worker process, started on first use.
    Local {
        spec: WorkerSpec,
        worker: Option<Worker>,
    },
    /// A verification actor on a Ray cluster, through the bridge.
    Ray { bridge: Arc<Bridge>, actor: usize },
}

/// What a worker said, or why it said nothing.
enum Outcome {
    Reply(Value),
    Failed(Box<VerifyReport>),
}

/// The worker pool.
pub struct WorkerPool {
    slots: Vec<Mutex<Slot>>,
    /// One gate per device, and each slot's gate.
    gates: Vec<DeviceGate>,
    gate_of: Vec<usize>,
    idle: Mutex<Vec<usize>>,
    available: Condvar,
    options: PoolOptions,
    restarts: AtomicUsize,
    requests: AtomicUsize,
    /// The verification service that runs this pool's requests, when it is used.
    remote: Option<ServiceClient>,
}

impl WorkerPool {
    /// Prepares a pool (workers start on first use). On CUDA, fails when no GPU is found.
    pub fn new(python: PythonEnv, home: &DrtcHome, options: PoolOptions) -> RuntimeResult<Self> {
        if let Some(launch) = &options.service {
            let remote = ServiceClient::connect_or_start(launch, home, &python, &options)?;
            return Ok(WorkerPool {
                slots: vec![],
                gates: vec![],
                gate_of: vec![],
                idle: Mutex::new(vec![]),
                available: Condvar::new(),
                options,
                restarts: AtomicUsize::new(0),
                requests: AtomicUsize::new(0),
                remote: Some(remote),
            });
        }
        let script = worker::install_script(home)?;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if let Some(config) = &options.ray {
            let worker_dir = script.parent().unwrap_or(&script).to_path_buf();
            let bridge = Arc::new(Bridge::start(
                &python,
                home,
                &BridgeStart {
                    config,
                    device: options.device,
                    actors: options.workers,
                    local_cpus: options.workers.unwrap_or(cores).max(1),
                    threads: (options.device == DeviceKind::Cpu).then_some(1),
                    worker_dir: &worker_dir,
                    startup_timeout: options.startup_timeout,
                },
            )?);
            let n = bridge.actors();
            let slots = (0..n)
                .map(|actor| {
                    Mutex::new(Slot::Ray {
                        bridge: Arc::clone(&bridge),
                        actor,
                    })
                })
                .collect();
            return Ok(Self::with_slots(slots, (0..n).collect(), options));
        }
        let devices: Vec<WorkerDevice> = match options.device {
            DeviceKind::Cpu => {
                let n = options.workers.unwrap_or((cores / 2).max(1)).max(1);
                vec![WorkerDevice::Cpu; n]
            }
            DeviceKind::Cuda => {
                let gpus = match devices::scan() {
                    DeviceScan::Gpus(g) if !g.is_empty() => g,
                    DeviceScan::Gpus(_) => {
                        return Err(RuntimeError::NoGpu {
                            reason: "the CUDA driver reports no device".into(),
                        })
                    }
                    DeviceScan::None { reason } => return Err(RuntimeError::NoGpu { reason }),
                };
                let n = options.workers.unwrap_or(gpus.len()).clamp(1, gpus.len());
                let per = options.workers_per_gpu.max(1);
                gpus.iter()
                    .take(n)
                    .flat_map(|g| std::iter::repeat_n(WorkerDevice::Gpu(g.ordinal), per))
                    .collect()
            }
        };
        let threads = match options.device {
            DeviceKind::Cpu => Some((cores / devices.len()).max(1)),
            DeviceKind::Cuda => None,
        };
        let slots = devices
            .iter()
            .map(|&device| {
                Mutex::new(Slot::Local {
                    spec: WorkerSpec {
                        python: python.clone(),
                        script: script.clone(),
                        device,
                        threads,
                        startup_timeout: options.startup_timeout,
                        spares: usize::from(!options.one_request),
                    },
                    worker: None,
                })
            })
            .collect::<Vec<_>>();
        let mut kinds: Vec<WorkerDevice> = vec![];
        let gate_of = devices
            .iter()
            .map(|d| match kinds.iter().position(|k| k == d) {
                Some(i) => i,
                None => {
                    kinds.push(*d);
                    kinds.len() - 1
                }
            })
            .collect();
        Ok(Self::with_slots(slots, gate_of, options))
    }

    /// A pool over `slots`, slot i behind gate `gate_of[i]`.
    fn with_slots(slots: Vec<Mutex<Slot>>, gate_of: Vec<usize>, options: PoolOptions) -> Self {
        let gates = gate_of.iter().max().map_or(0, |m| m + 1);
        WorkerPool {
            idle: Mutex::new((0..slots.len()).rev().collect()),
            slots,
            gates: (0..gates).map(|_| DeviceGate::default()).collect(),
            gate_of,
            available: Condvar::new(),
            options,
            restarts: AtomicUsize::new(0),
            requests: AtomicUsize::new(0),
            remote: None,
        }
    }

    /// The Ray bridge, when the pool runs on a Ray cluster.
    fn bridge(&self) -> Option<Arc<Bridge>> {
        let slot = self
            .slots
            .first()?
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        match &*slot {
            Slot::Ray { bridge, .. } => Some(Arc::clone(bridge)),
            Slot::Local { .. } => None,
        }
    }

    /// The Ray job's figures so far (requests and throughput per actor, actors replaced,
    /// failures by reason); `None` for a local pool.
    pub fn ray_summary(&self) -> Option<RuntimeResult<RaySummary>> {
        self.bridge().map(|b| b.summary())
    }

    /// The verification service this pool forwards to, when it uses one.
    pub fn service(&self) -> Option<&ServiceClient> {
        self.remote.as_ref()
    }

    /// Number of workers (running or not; the service's when it uses one).
    pub fn size(&self) -> usize {
        match &self.remote {
            Some(r) => r.status.workers.max(1),
            None => self.slots.len(),
        }
    }

    pub fn device(&self) -> DeviceKind {
        self.options.device
    }

    /// Workers replaced after a hang, a death or a GPU fault (by the service, for all its
    /// clients, when it uses one).
    pub fn restarts(&self) -> usize {
        match self.remote_status() {
            Some(s) => s.restarts,
            None => self.restarts.load(Ordering::Relaxed),
        }
    }

    fn remote_status(&self) -> Option<super::service::ServiceStatus> {
        let r = self.remote.as_ref()?;
        Some(client::status_at(r.socket()).unwrap_or_else(|_| r.status.clone()))
    }

    /// Requests answered or failed so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }

    /// Process ids of the running workers (the service's, when it uses one).
    pub fn worker_pids(&self) -> Vec<u32> {
        if let Some(s) = self.remote_status() {
            return s.worker_pids;
        }
        self.slots
            .iter()
            .filter_map(|s| {
                let s = s.lock().unwrap_or_else(|p| p.into_inner());
                match &*s {
                    Slot::Local { worker, .. } => {
                        worker.as_ref().filter(|w| w.is_alive()).map(Worker::pid)
                    }
                    Slot::Ray { .. } => None,
                }
            })
            .collect()
    }

    /// Starts the worker the next request takes (slot 0, the first the idle list gives),
    /// without waiting for the others: what a caller about to send one request needs.
    /// Through the service, its [`WorkerPool::warm_up`]. Returns that worker's `ready`
    /// info (its `start` phases: [`crate::verifier::StartPhases`]).
    pub fn warm_up_next(&self) -> RuntimeResult<Value> {
        if self.remote.is_some() {
            return self
                .warm_up()
                .map(|w| w.into_iter().next().unwrap_or(Value::Null));
        }
        let Some(slot) = self.slots.first() else {
            return Ok(Value::Null);
        };
        let mut s = slot.lock().unwrap_or_else(|p| p.into_inner());
        match &mut *s {
            Slot::Local { spec, worker } => {
                Self::ensure_started(spec, worker).map(|w| w.info.clone())
            }
            Slot::Ray { bridge, actor } => bridge.ready_info(*actor),
        }
    }

    /// Starts every worker now (instead of on first use) and returns their `ready` info.
    pub fn warm_up(&self) -> RuntimeResult<Vec<Value>> {
        if let Some(r) = &self.remote {
            return match r.call(&ServiceRequest::WarmUp)? {
                ServiceReply::Warm { workers } => Ok(workers),
                other => Err(client::unexpected(&other)),
            };
        }
        std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .slots
                .iter()
                .map(|slot| {
                    scope.spawn(move || {
                        let mut s = slot.lock().unwrap_or_else(|p| p.into_inner());
                        match &mut *s {
                            Slot::Local { spec, worker } => {
                                Self::ensure_started(spec, worker).map(|w| w.info.clone())
                            }
                            Slot::Ray { bridge, actor } => bridge.ready_info(*actor),
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("warm-up thread panicked"))
                .collect()
        })
    }

    /// Verifies one candidate. When it runs out of GPU memory while other workers may use
    /// the device, it is verified once more alone there (`retried_alone` keeps the first
    /// attempt's reasons): an answer is not rejected for memory its neighbours held.
    pub fn verify(&self, req: &VerifyRequest) -> RuntimeResult<VerifyReport> {
        let timeout = self.options.request_timeout;
        let first = self.verify_within(req, timeout)?;
        if !(first.ran_out_of_memory() && self.size() > 1) {
            return Ok(first);
        }
        let mut again = self.verify_alone(req, timeout)?;
        again.retried_alone = Some(first.reasons());
        Ok(again)
    }

    /// Verifies one candidate with its own deadline.
    pub fn verify_within(
        &self,
        req: &VerifyRequest,
        timeout: Duration,
    ) -> RuntimeResult<VerifyReport> {
        self.verify_in(req, timeout, false, None)
    }

    /// Verifies one candidate while no other worker on its device runs anything (a
    /// retry after running out of memory beside other jobs).
    pub fn verify_alone(
        &self,
        req: &VerifyRequest,
        timeout: Duration,
    ) -> RuntimeResult<VerifyReport> {
        self.verify_in(req, timeout, true, None)
    }

    /// Verifies one candidate; when `cancel` turns true (the verification service's client
    /// left) the worker running it is killed and replaced, and the report says so.
    pub fn verify_in(
        &self,
        req: &VerifyRequest,
        timeout: Duration,
        alone: bool,
        cancel: Option<&AtomicBool>,
    ) -> RuntimeResult<VerifyReport> {
        if let Some(r) = &self.remote {
            let req = ServiceRequest::Verify {
                req: absolute_paths(req)?,
                timeout_s: timeout.as_secs_f64(),
                alone,
            };
            self.requests.fetch_add(1, Ordering::Relaxed);
            return match r.call(&req)? {
                ServiceReply::Verified { report } => Ok(*report),
                other => Err(client::unexpected(&other)),
            };
        }
        let payload = verify_payload("verify", req)?;
        let i = self.acquire();
        let outcome = {
            let mut pass = self.gates[self.gate_of[i]].enter(alone);
            match &mut pass {
                Pass::Shared(shared) => {
                    let mut give_way = || shared.give_way();
                    self.call_giving_way(i, payload, timeout, cancel, Some(&mut give_way))
                }
                Pass::Exclusive(_) => self.call_on(i, payload, timeout, cancel),
            }
        };
        self.release(i);
        self.requests.fetch_add(1, Ordering::Relaxed);
        match outcome? {
            Outcome::Failed(r) => Ok(*r),
            Outcome::Reply(v) => parse_report(v),
        }
    }

    /// Verifies many candidates, concurrently over the pool's workers; results in order.
    pub fn verify_all(&self, reqs: &[VerifyRequest]) -> Vec<RuntimeResult<VerifyReport>> {
        let next = AtomicUsize::new(0);
        let results: Vec<Mutex<Option<RuntimeResult<VerifyReport>>>> =
            reqs.iter().map(|_| Mutex::new(None)).collect();
        std::thread::scope(|scope| {
            for _ in 0..self.size().min(reqs.len()) {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(req) = reqs.get(i) else { break };
                    let r = self.verify(req);
                    *results[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
                });
            }
        });
        results
            .into_iter()
            .map(|m| {
                m.into_inner()
                    .unwrap_or_else(|p| p.into_inner())
                    .expect("every request was run")
            })
            .collect()
    }

    /// Verifies, then (when verified, on CUDA) times one candidate; out of GPU memory
    /// beside other workers, once more alone on the device (as [`WorkerPool::verify`]).
    pub fn bench(&self, req: &BenchRequest) -> RuntimeResult<BenchReport> {
        let first = self.bench_within(req, None)?;
        if !(first.ran_out_of_memory() && self.size() > 1) {
            return Ok(first);
        }
        let mut again = self.bench_alone(req, None)?;
        let mut reasons = first.verify.reasons();
        reasons.extend(first.timing_error);
        again.verify.retried_alone = Some(reasons);
        Ok(again)
    }

    /// Verifies and prepares one candidate in a shared pass of its GPU, then times it in
    /// an exclusive pass. `budget` bounds the time spent verifying and timing (waiting for
    /// the exclusive pass does not count); each phase also has the pool's bench deadline.
    pub fn bench_within(
        &self,
        req: &BenchRequest,
        budget: Option<Duration>,
    ) -> RuntimeResult<BenchReport> {
        self.bench_in(req, budget, false)
    }

    /// [`WorkerPool::bench_within`] with the whole request (verification, preparation,
    /// timing) in one exclusive pass: nothing else runs on the GPU meanwhile.
    pub fn bench_alone(
        &self,
        req: &BenchRequest,
        budget: Option<Duration>,
    ) -> RuntimeResult<BenchReport> {
        self.bench_in(req, budget, true)
    }

    fn bench_in(
        &self,
        req: &BenchRequest,
        budget: Option<Duration>,
        alone: bool,
    ) -> RuntimeResult<BenchReport> {
        if let Some(r) = &self.remote {
            let mut req = req.clone();
            req.verify = absolute_paths(&req.verify)?;
            let req = ServiceRequest::Bench {
                req,
                budget_s: budget.map(|b| b.as_secs_f64()),
                phase_timeout_s: self.options.bench_timeout.as_secs_f64(),
                alone,
            };
            self.requests.fetch_add(1, Ordering::Relaxed);
            return match r.call(&req)? {
                ServiceReply::Benched { report } => Ok(*report),
                other => Err(client::unexpected(&other)),
            };
        }
        self.bench_with_limit(req, budget, self.options.bench_timeout, alone, None)
    }

    /// [`WorkerPool::bench_in`] on this process's workers with `phase_timeout` as the
    /// deadline of each phase (the verification service runs its clients' requests so).
    pub fn bench_with_limit(
        &self,
        req: &BenchRequest,
        budget: Option<Duration>,
        phase_timeout: Duration,
        alone: bool,
        cancel: Option<&AtomicBool>,
    ) -> RuntimeResult<BenchReport> {
        if self.remote.is_some() {
            return self.bench_in(req, budget, alone);
        }
        if self.options.device != DeviceKind::Cuda {
            return Err(RuntimeError::NoGpu {
                reason: "timing needs a CUDA GPU; the Triton interpreter on CPU has no \
                         meaningful speed"
                    .into(),
            });
        }
        let mut payload = verify_payload("prepare", &req.verify)?;
        payload["compile_modes"] = req.compile_modes.iter().map(|m| m.name()).collect();
        if let Some(p) = &req.torch_precision {
            payload["torch_precision"] = Value::from(p.as_str());
        }
        if let Some(s) = req.compile_budget_s {
            payload["compile_budget_s"] = Value::from(s);
        }
        let limit = |left: Option<Duration>| left.map_or(phase_timeout, |b| b.min(phase_timeout));
        let waited = Instant::now();
        let i = self.acquire();
        let worker_queue = waited.elapsed();
        let gate = &self.gates[self.gate_of[i]];
        let whole = alone.then(|| gate.alone());
        let asked = Instant::now();
        let (prepared, spent, prepare_queue, session) = {
            let mut pass = whole.is_none().then(|| gate.shared());
            // the clock starts once the pass is held: waiting for the gate is not spent,
            // nor is giving way to other workers' timing between trials
            let started = Instant::now();
            let mut gave_way = Duration::ZERO;
            let prepared = match pass.as_mut() {
                Some(shared) => {
                    let mut give_way = || {
                        let waited = shared.give_way();
                        gave_way += waited;
                        waited
                    };
                    self.call_giving_way(i, payload, limit(budget), cancel, Some(&mut give_way))
                }
                None => self.call_on(i, payload, limit(budget), cancel),
            };
            // counted before the shared pass ends: a request alone waits for its report
            let session = matches!(&prepared, Ok(Outcome::Reply(v))
                if v.get("prepared") == Some(&Value::Bool(true)))
            .then(|| gate.prepared());
            (
                prepared,
                started.elapsed().saturating_sub(gave_way),
                started - asked,
                session,
            )
        };
        let result = prepared.and_then(|outcome| {
            let mut v = match outcome {
                Outcome::Failed(mut r) => {
                    baselines_in_timeout(&mut r, &req.compile_modes, req.compile_budget_s);
                    return Ok(BenchReport {
                        verify: *r,
                        timing: None,
                        timing_error: Some(
                            "the worker failed during verification or preparation".into(),
                        ),
                        timing_seconds: None,
                    });
                }
                Outcome::Reply(v) => v,
            };
            let mut timing_error = v
                .get("timing_error")
                .and_then(Value::as_str)
                .map(str::to_string);
            let ready = v.get("prepared") == Some(&Value::Bool(true));
            v.as_object_mut().map(|o| o.remove("prepared"));
            let verify = parse_report(v)?;
            let mut timing = None;
            let mut timing_seconds = None;
            let left = budget.map(|b| b.saturating_sub(spent));
            if ready && left.is_some_and(|l| l.is_zero()) {
                let _ = self.call_on(i, serde_json::json!({"op": "release"}), limit(None), cancel);
                timing_error = Some("not timed: no time left within the task's limit".into());
            } else if ready {
                // the timed loops alone on the GPU; the timed outputs' check and the
                // figures after, in a shared pass
                let mut seconds = TimingSeconds {
                    worker_queue_s: worker_queue.as_secs_f64(),
                    prepare_queue_s: prepare_queue.as_secs_f64(),
                    ..TimingSeconds::default()
                };
                let timed = {
                    let asked = Instant::now();
                    let _pass = whole.is_none().then(|| gate.exclusive());
                    let held = Instant::now();
                    seconds.queue_s = (held - asked).as_secs_f64();
                    let t = self.call_on(i, serde_json::json!({"op": "time"}), limit(left), cancel);
                    seconds.exclusive_s = held.elapsed().as_secs_f64();
                    t?
                };
                let reported = match timed {
                    Outcome::Reply(t) if t.get("measured") == Some(&Value::Bool(true)) => {
                        let asked = Instant::now();
                        let _pass = whole.is_none().then(|| gate.report());
                        let op = serde_json::json!({"op": "timed_report"});
                        let r = self.call_on(i, op, limit(left), cancel);
                        seconds.report_s = asked.elapsed().as_secs_f64();
                        r?
                    }
                    other => other,
                };
                timing_seconds = Some(seconds);
                match reported {
                    Outcome::Failed(r) => {
                        timing_error = Some(format!(
                            "the worker failed while timing: {}",
                            r.reasons().join("; ")
                        ))
                    }
                    Outcome::Reply(mut t) => {
                        if let Some(e) = t.get("timing_error").and_then(Value::as_str) {
                            timing_error = Some(e.to_string());
                        }
                        if let Some(t) = t.get_mut("timing").map(Value::take) {
                            timing =
                                Some(serde_json::from_value::<TimingReport>(t).map_err(|e| {
                                    RuntimeError::Protocol(format!("timing report: {e}"))
                                })?);
                        }
                    }
                }
            }
            let timing_error = timing_error.or_else(|| {
                (timing.is_none() && !verify.verified)
                    .then(|| "not timed: the candidate failed verification".to_string())
            });
            Ok(BenchReport {
                verify,
                timing,
                timing_error,
                timing_seconds,
            })
        });
        drop(session);
        drop(whole);
        self.release(i);
        self.requests.fetch_add(1, Ordering::Relaxed);
        result
    }

    fn ensure_started<'w>(
        spec: &WorkerSpec,
        worker: &'w mut Option<Worker>,
    ) -> RuntimeResult<&'w mut Worker> {
        if worker.as_ref().is_some_and(Worker::is_alive) {
            return Ok(worker.as_mut().expect("checked above"));
        }
        *worker = None;
        let w = Worker::start(spec)?;
        Ok(worker.insert(w))
    }

    /// Sends one request to slot `slot`'s worker or actor: what came back, and the end
    /// of the worker's stderr.
    fn exchange(
        slot: &mut Slot,
        mut payload: Value,
        timeout: Duration,
        cancel: Option<&AtomicBool>,
        give_way: Option<&mut dyn FnMut() -> Duration>,
    ) -> RuntimeResult<(Exchange, String)> {
        payload["timeout_s"] = Value::from(checker_budget(timeout).as_secs_f64());
        match slot {
            Slot::Local { spec, worker } => {
                let was_running = worker.is_some();
                let w = Self::ensure_started(spec, worker)?;
                if was_running && w.info.is_null() {
                    return Err(RuntimeError::Protocol(
                        "worker without a ready message".into(),
                    ));
                }
                let exchange = w.request(payload, timeout, cancel, give_way);
                let stderr = w.stderr_tail();
                if !w.is_alive() {
                    *worker = None;
                }
                Ok((exchange, stderr))
            }
            // a Ray actor's worker runs its trials without stopping (no way to answer it)
            Slot::Ray { bridge, actor } => bridge.call(*actor, payload, timeout),
        }
    }

    fn acquire(&self) -> usize {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(i) = idle.pop() {
                return i;
            }
            idle = self.available.wait(idle).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn release(&self, i: usize) {
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).push(i);
        self.available.notify_one();
    }

    fn call_on(
        &self,
        i: usize,
        payload: Value,
        timeout: Duration,
        cancel: Option<&AtomicBool>,
    ) -> RuntimeResult<Outcome> {
        self.call_giving_way(i, payload, timeout, cancel, None)
    }

    /// [`WorkerPool::call_on`] where the worker gives way between its trials to timing
    /// that waits for the GPU (`give_way`: the shared pass it holds, see `Worker::request`).
    fn call_giving_way(
        &self,
        i: usize,
        payload: Value,
        timeout: Duration,
        cancel: Option<&AtomicBool>,
        give_way: Option<&mut dyn FnMut() -> Duration>,
    ) -> RuntimeResult<Outcome> {
        let mut slot = self.slots[i].lock().unwrap_or_else(|p| p.into_inner());
        let (exchange, stderr) = Self::exchange(&mut slot, payload, timeout, cancel, give_way)?;
        let outcome = match exchange {
            Exchange::Reply(v) => {
                if v.get("fatal") == Some(&Value::Bool(true)) {
                    self.restarts.fetch_add(1, Ordering::Relaxed);
                }
                if let Some(err) = v.get("error").and_then(Value::as_str) {
                    return Ok(Outcome::Failed(Box::new(VerifyReport::worker_failure(
                        Check::Other,
                        format!("worker error: {err}"),
                        stderr,
                    ))));
                }
                Outcome::Reply(v)
            }
            Exchange::Cancelled => {
                self.restarts.fetch_add(1, Ordering::Relaxed);
                Outcome::Failed(Box::new(VerifyReport::worker_failure(
                    Check::Other,
                    "cancelled: the client that asked for this verification left (worker \
                     killed and replaced)"
                        .to_string(),
                    String::new(),
                )))
            }
            Exchange::TimedOut => {
                self.restarts.fetch_add(1, Ordering::Relaxed);
                Outcome::Failed(Box::new(VerifyReport::worker_failure(
                    Check::Timeout,
                    format!(
                        "no answer within {:.0} s: the candidate hangs or needs more time than \
                         the limit (worker killed and replaced)",
                        timeout.as_secs_f64()
                    ),
                    stderr,
                )))
            }
            Exchange::Died { status, stderr } => {
                self.restarts.fetch_add(1, Ordering::Relaxed);
                let last = stderr
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("")
                    .trim()
                    .to_string();
                let detail = if last.is_empty() {
                    String::new()
                } else {
                    format!("; last stderr line: {last}")
                };
                // A GPU fault can take the process down before Python sees an exception.
                let check = if GPU_FAULT_MARKERS.iter().any(|m| stderr.contains(m)) {
                    Check::GpuFault
                } else {
                    Check::WorkerDied
                };
                Outcome::Failed(Box::new(VerifyReport::worker_failure(
                    check,
                    format!("the worker {status} while running the candidate{detail}"),
                    stderr,
                )))
            }
        };
        Ok(outcome)
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        for slot in &self.slots {
            let mut s = slot.lock().unwrap_or_else(|p| p.into_inner());
            match &mut *s {
                Slot::Local { worker, .. } => {
                    if let Some(w) = worker.take() {
                        w.shutdown(Duration::from_millis(500));
                    }
                }
                Slot::Ray { .. } => {} // the bridge stops its actors when dropped
            }
        }
    }
}

/// `req` with absolute paths: the service's workers do not share this process's idea of
/// the current directory.
fn absolute_paths(req: &VerifyRequest) -> RuntimeResult<VerifyRequest> {
    let mut req = req.clone();
    req.reference = worker::absolute(&req.reference)?;
    req.candidate = worker::absolute(&req.candidate)?;
    Ok(req)
}

/// The checker's own deadline for a request this side waits `timeout` for (the
/// request's `timeout_s`, counted from the checker's reading of it and moved by the same
/// give-way waits as this side's): by then it has killed a hung candidate's process and
/// answered with a timeout, keeping the checker; the rest is the margin after which this
/// side kills the checker (`Worker::request`).
///
/// The margin is a fifth of `timeout`, 2 to 30 s (at most half of it): room to kill a
/// candidate's processes (a keeper's 2 s grace, `isolated.py`) and answer on a busy machine.
fn checker_budget(timeout: Duration) -> Duration {
    let margin = (timeout / 5)
        .clamp(Duration::from_secs(2), Duration::from_secs(30))
        .min(timeout / 2);
    timeout - margin
}

/// The request a worker receives for `op` on `req` (the deadline is added per exchange).
fn verify_payload(op: &str, req: &VerifyRequest) -> RuntimeResult<Value> {
    let mut req = req.clone();
    req.reference = worker::absolute(&req.reference)?;
    req.candidate = worker::absolute(&req.candidate)?;
    req.trials = req.trials.max(MIN_TRIALS);
    let mut v = serde_json::to_value(&req).map_err(|e| RuntimeError::Protocol(e.to_string()))?;
    v["op"] = Value::from(op);
    Ok(v)
}

fn parse_report(v: Value) -> RuntimeResult<VerifyReport> {
    serde_json::from_value(v).map_err(|e| RuntimeError::Protocol(format!("verify report: {e}")))
}

/// A pool on the verification service when `DRTC_SERVICE` allows it (`on`, the default;
/// `off`), else a pool of this process's own. When the service cannot be started the pool
/// is this process's own too, and the note says why.
pub fn shared_or_local(
    python: PythonEnv,
    home: &DrtcHome,
    options: PoolOptions,
) -> RuntimeResult<(WorkerPool, Option<String>)> {
    // A Ray pool's actors are the shared workers already.
    if !launch::wanted() || options.ray.is_some() {
        return Ok((WorkerPool::new(python, home, options)?, None));
    }
    let launch = ServiceLaunch::this_exe()?;
    let mut shared = options.clone();
    shared.service = Some(launch);
    // the service's workers serve every client after this one
    shared.one_request = false;
    match WorkerPool::new(python.clone(), home, shared) {
        Ok(pool) => Ok((pool, None)),
        Err(e) => {
            let note = format!(
                "the verification service is not available ({e}); verifying with workers of \
                 this process (DRTC_SERVICE=off says so without trying)"
            );
            Ok((WorkerPool::new(python, home, options)?, Some(note)))
        }
    }
}

/// A preparation that timed out while the request asked for torch.compile baselines: its
/// reason says the baselines' compiles ran in that time too (the candidate is not the only
/// suspect) and how to bound them.
fn baselines_in_timeout(r: &mut VerifyReport, modes: &[CompileMode], budget: Option<f64>) {
    if modes.is_empty() {
        return;
    }
    let names: Vec<&str> = modes.iter().map(|m| m.name()).collect();
    for f in r.failures.iter_mut().filter(|f| f.check == Check::Timeout) {
        f.message.push_str(&format!(
            "; the time included compiling the torch.compile baselines ({}){}",
            names.join(", "),
            match budget {
                Some(s) => format!(", each bounded by --compile-budget {s:.0} s"),
                None => ": --compile-budget bounds each mode's compile".to_string(),
            }
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timed_out_preparation_names_the_baselines_it_compiled() {
        let timed_out = || {
            VerifyReport::worker_failure(Check::Timeout, "no answer within 376 s".into(), "".into())
        };
        let mut r = timed_out();
        let modes = [CompileMode::Default, CompileMode::MaxAutotune];
        baselines_in_timeout(&mut r, &modes, None);
        assert_eq!(
            r.failures[0].message,
            "no answer within 376 s; the time included compiling the torch.compile baselines \
             (default, max-autotune): --compile-budget bounds each mode's compile"
        );
        let mut r = timed_out();
        baselines_in_timeout(&mut r, &modes, Some(300.0));
        assert!(r.failures[0]
            .message
            .ends_with("each bounded by --compile-budget 300 s"));
        // no baselines asked: the reason stands as it was
        let mut r = timed_out();
        baselines_in_timeout(&mut r, &[], None);
        assert_eq!(r.failures[0].message, "no answer within 376 s");
    }
}
