//! The verification service: one long-lived [`crate::verifier::WorkerPool`] per drtc build,
//! Python environment, device, working directory and worker environment, reached over a
//! Unix socket under drtc's home, so that a second `drtc compile` finds its workers
//! started (Python, torch and CUDA imported, the Triton driver built) instead of paying
//! that again. Untrusted answers keep their own sandboxed process per answer; only the
//! checker processes are shared. The CLI uses it unless `DRTC_SERVICE=off`; it exits after
//! `DRTC_SERVICE_IDLE_S` seconds without a request (default 600), on `drtc service stop`,
//! or when its drtc home is deleted.

pub mod client;
pub mod key;
pub mod launch;
pub mod messages;
pub mod server;

pub use client::ServiceClient;
pub use launch::ServiceLaunch;
pub use messages::{ServiceReply, ServiceRequest, ServiceStatus};
