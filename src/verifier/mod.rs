//! The verifier: runs candidate kernels against their PyTorch reference in isolated Python
//! worker processes, to verify them (semantics.md's correctness rules) and time them (its
//! timing protocol), on CUDA GPUs or on CPU under Triton's interpreter.
//!
//! Python lives in one embedded program ([`worker::WORKER_FILES`]); Rust owns processes,
//! timeouts, restarts, environment discovery and reports. A candidate that hangs, crashes,
//! runs out of memory or faults the GPU fails alone: its worker is killed and replaced.
//!
//! Threat model: the checks target the known reward hacks of generated kernels (unwritten
//! outputs, aliasing, cached or replayed answers, mutated inputs, side-stream work,
//! PyTorch fallbacks in strict mode). A candidate runs inside the worker's Python process;
//! replacing functions the checker relies on is detected and fails the candidate, but the
//! worker is not a sandbox against code written to attack it.

pub mod checks;
pub mod devices;
pub mod env;
pub mod error;
pub mod gate;
pub mod options;
pub mod pool;
pub mod program_file;
pub mod ray;
pub mod service;
pub mod setup;
pub mod time;
pub mod worker;

pub use checks::{
    Check, CheckFailure, MemoryReport, Phases, StartPhases, VerifyReport, VerifyRequest, MIN_TRIALS,
};
pub use devices::{DeviceScan, GpuInfo};
pub use env::{DrtcHome, PythonEnv, PythonSource};
pub use error::RuntimeError;
pub use options::{DeviceKind, PoolOptions};
pub use pool::WorkerPool;
pub use ray::{RayConfig, RayTarget};
pub use time::{
    BenchReport, BenchRequest, CompileMode, CompiledMode, DevicePeaks, TimingReport, TimingSeconds,
    TimingStats,
};
pub use worker::content_hash;
