//! The verifier's error type: problems with the environment or the machinery, never a
//! candidate's failure (those are findings in a [`crate::verifier::VerifyReport`]).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// No Python environment, or one that cannot be probed (`drtc-env`).
    #[error(transparent)]
    Env(#[from] drtc_env::EnvError),
    #[error("the Python at `{python}` lacks {missing}.\n  fix: {fix}")]
    MissingPackages {
        python: String,
        missing: String,
        fix: String,
    },
    #[error("cannot start `{python}`: {source}")]
    Spawn {
        python: String,
        source: std::io::Error,
    },
    #[error("the Python worker did not start: {message}")]
    WorkerStart { message: String },
    #[error("cannot access `{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("worker protocol error: {0}")]
    Protocol(String),
    #[error(
        "no CUDA GPU: {reason}; use `--device cpu` (correctness only, under Triton's interpreter)"
    )]
    NoGpu { reason: String },
    #[error("{path}: {message}")]
    Program { path: PathBuf, message: String },
    /// The verification service could not be reached or started, or an error it
    /// returned (already rendered).
    #[error("{0}")]
    Service(String),
    #[error("setup failed: {0}")]
    Setup(String),
    /// The Ray cluster cannot be reached, or the bridge to it failed.
    #[error("{0}")]
    Ray(String),
}

pub type RuntimeResult<T> = Result<T, RuntimeError>;

impl RuntimeError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        RuntimeError::Io {
            path: path.into(),
            source,
        }
    }
}
