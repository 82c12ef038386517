//! What a client and the verification service say to each other: one JSON line per
//! message over the service's Unix socket, one request per connection.

use super::super::checks::{VerifyReport, VerifyRequest};
use super::super::error::RuntimeError;
use super::super::time::{BenchReport, BenchRequest};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A client's request.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ServiceRequest {
    /// [`crate::verifier::WorkerPool::verify_within`] (or `verify_alone`) on the service's pool.
    Verify {
        req: VerifyRequest,
        timeout_s: f64,
        alone: bool,
    },
    /// [`crate::verifier::WorkerPool::bench_within`] (or `bench_alone`).
    Bench {
        req: BenchRequest,
        budget_s: Option<f64>,
        /// The client's deadline per bench phase.
        phase_timeout_s: f64,
        alone: bool,
    },
    /// Start every worker now.
    WarmUp,
    /// What the service holds.
    Status,
    /// Finish the requests in flight, then exit.
    Stop,
}

/// The service's answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum ServiceReply {
    Verified { report: Box<VerifyReport> },
    Benched { report: Box<BenchReport> },
    Warm { workers: Vec<serde_json::Value> },
    Status { status: ServiceStatus },
    Stopping,
    Error { error: WireError },
}

/// A running service, as `drtc service status` shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServiceStatus {
    pub pid: u32,
    /// `cpu` or `cuda`.
    pub device: String,
    /// Worker slots (running or not).
    pub workers: usize,
    /// Process ids of the running workers.
    pub worker_pids: Vec<u32>,
    /// Requests answered since the service started.
    pub requests: usize,
    /// Workers replaced after a hang, a death or a GPU fault.
    pub restarts: usize,
    /// Seconds since the service started.
    pub uptime_s: f64,
    /// Seconds since its last request ended.
    pub idle_s: f64,
    /// It exits after this many idle seconds.
    pub idle_limit_s: f64,
    /// The directory its workers run in (the clients' working directory).
    pub cwd: PathBuf,
}

/// A runtime error carried over the socket: a broken program stays a broken program (the
/// CLI's exit status 2); everything else is drtc's own failure, with its message.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WireError {
    Program { path: PathBuf, message: String },
    Other { message: String },
}

impl From<&RuntimeError> for WireError {
    fn from(e: &RuntimeError) -> Self {
        match e {
            RuntimeError::Program { path, message } => WireError::Program {
                path: path.clone(),
                message: message.clone(),
            },
            other => WireError::Other {
                message: other.to_string(),
            },
        }
    }
}

impl From<WireError> for RuntimeError {
    fn from(e: WireError) -> Self {
        match e {
            WireError::Program { path, message } => RuntimeError::Program { path, message },
            WireError::Other { message } => RuntimeError::Service(message),
        }
    }
}
