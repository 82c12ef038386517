//! The verifier's worker pool as the commands start it, and its errors as driver errors.

use super::error::{DriverError, DriverResult};
use drtc::verifier::{DrtcHome, PoolOptions, PythonEnv, WorkerPool};

/// A runtime error as a driver error: a program that cannot be resolved is the input's
/// fault (exit 2); anything else is drtc's runtime failing (exit 3).
pub fn runtime_error(e: impl Into<drtc::verifier::RuntimeError>) -> DriverError {
    let e = e.into();
    match e {
        drtc::verifier::RuntimeError::Program { .. } => DriverError::Reported(e.to_string()),
        _ => DriverError::Failed(e.to_string()),
    }
}

/// The pool a command verifies with: on the verification service unless `DRTC_SERVICE=off`
/// (a note on stderr when the service cannot start and this process's workers are used).
pub fn worker_pool(
    python: PythonEnv,
    home: &DrtcHome,
    options: PoolOptions,
) -> DriverResult<WorkerPool> {
    let (pool, note) =
        drtc::verifier::pool::shared_or_local(python, home, options).map_err(runtime_error)?;
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    Ok(pool)
}
