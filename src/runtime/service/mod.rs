//! The verification service: one long-lived [`crate::runtime::WorkerPool`] per drtc build,
//! Python environment, device, working directory and worker environment, reached over a
//! Unix socket under drtc's home, so that a second `drtc compile` finds its workers
//! started (Python, torch and CUDA imported, the Triton driver built) instead of paying
//! that again. Untrusted answers keep their own sandboxed process per answer; only the
//! checker processes are shared. The CLI uses it unless `DRTC_SERVICE=off`; it exits after
//! `DRTC_SERVICE_IDLE_S` seconds without a request (default 600), on `drtc service stop`,
//! or when its drtc home is deleted.

pub mod client;
pub mod key;
pub mod messages;
pub mod server;

pub use client::{ServiceClient, ServiceLaunch};
pub use messages::{ServiceReply, ServiceRequest, ServiceStatus};

use super::error::RuntimeResult;
use super::{DrtcHome, PoolOptions, PythonEnv, WorkerPool};

/// A pool on the verification service when `DRTC_SERVICE` allows it (`on`, the default;
/// `off`), else a pool of this process's own. When the service cannot be started the pool
/// is this process's own too, and the note says why.
pub fn pool(
    python: PythonEnv,
    home: &DrtcHome,
    options: PoolOptions,
) -> RuntimeResult<(WorkerPool, Option<String>)> {
    // A Ray pool's actors are the shared workers already.
    if !client::wanted() || options.ray.is_some() {
        return Ok((WorkerPool::new(python, home, options)?, None));
    }
    let launch = ServiceLaunch::this_exe()?;
    let mut shared = options.clone();
    shared.service = Some(launch);
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
