//! Where a pool's candidates run and the pool's settings.

use super::devices::{self, DeviceScan};
use super::ray::RayConfig;
use super::service::launch::ServiceLaunch;
use std::time::Duration;

/// Where candidates run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKind {
    /// CPU tensors under Triton's interpreter: correctness only.
    Cpu,
    /// CUDA GPUs, one worker each.
    Cuda,
}

impl DeviceKind {
    /// CUDA when a GPU is present, else CPU.
    pub fn detect() -> DeviceKind {
        match devices::scan() {
            DeviceScan::Gpus(g) if !g.is_empty() => DeviceKind::Cuda,
            _ => DeviceKind::Cpu,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Cpu => "cpu",
            DeviceKind::Cuda => "cuda",
        }
    }
}

/// Pool settings.
#[derive(Debug, Clone)]
pub struct PoolOptions {
    pub device: DeviceKind,
    /// Workers on CPU (default: half the cores, at least one). On CUDA: at most this
    /// many GPUs when set (default: all).
    pub workers: Option<usize>,
    /// On CUDA: workers per GPU (default 1). Several verify and compile in parallel; their
    /// timing phases still run one at a time per GPU.
    pub workers_per_gpu: usize,
    /// Deadline for one verification (including the candidate's imports and compiles).
    pub request_timeout: Duration,
    /// Deadline for a bench request (verification plus timing).
    pub bench_timeout: Duration,
    /// Deadline for a worker to import torch and say it is ready.
    pub startup_timeout: Duration,
    /// Use (and start, when none runs) the verification service for these options
    /// instead of workers of this process ([`super::service`]).
    pub service: Option<ServiceLaunch>,
    /// Verify on a Ray cluster's actors instead of local workers. `workers` then bounds
    /// the actors (CPU) or the GPUs drtc takes (CUDA); default: the cluster's CPUs or GPUs.
    pub ray: Option<RayConfig>,
    /// The pool serves one request (`drtc verify` of a file): its workers start no spare
    /// candidate process ahead of need (a spare costs a torch import that request never
    /// uses; a pool that serves a stream keeps one ready, started while the answer before
    /// it is judged).
    pub one_request: bool,
}

impl PoolOptions {
    pub fn new(device: DeviceKind) -> Self {
        PoolOptions {
            device,
            workers: None,
            workers_per_gpu: 1,
            request_timeout: Duration::from_secs(300),
            bench_timeout: Duration::from_secs(600),
            startup_timeout: Duration::from_secs(180),
            service: None,
            ray: None,
            one_request: false,
        }
    }
}
