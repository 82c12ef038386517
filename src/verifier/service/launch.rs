//! How a client starts the verification service when none runs, and whether it is used
//! at all (`DRTC_SERVICE`).

use super::super::error::{RuntimeError, RuntimeResult};
use std::path::PathBuf;
use std::time::Duration;

/// How to start a service when none is running.
#[derive(Debug, Clone)]
pub struct ServiceLaunch {
    /// The drtc executable that serves (`drtc service run`).
    pub exe: PathBuf,
    /// It exits after this long without a request.
    pub idle: Duration,
}

/// Default idle limit of a service.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(600);

impl ServiceLaunch {
    /// This executable, with the idle limit of `DRTC_SERVICE_IDLE_S` (default 600 s).
    pub fn this_exe() -> RuntimeResult<ServiceLaunch> {
        let exe = std::env::current_exe().map_err(|e| RuntimeError::io("current executable", e))?;
        Ok(ServiceLaunch {
            exe,
            idle: idle_limit(),
        })
    }
}

/// How long a service (or the export server) waits idle before it exits:
/// `DRTC_SERVICE_IDLE_S` seconds, default [`DEFAULT_IDLE`].
pub fn idle_limit() -> Duration {
    std::env::var("DRTC_SERVICE_IDLE_S")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(DEFAULT_IDLE, Duration::from_secs_f64)
}

/// Whether the service should be used, from `DRTC_SERVICE` (`on`, the default, or `off`).
pub fn wanted() -> bool {
    !matches!(
        std::env::var("DRTC_SERVICE").as_deref(),
        Ok("off") | Ok("0") | Ok("false") | Ok("no")
    )
}
