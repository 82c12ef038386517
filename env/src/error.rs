//! What can go wrong finding or probing drtc's Python environment.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    #[error(
        "no Python environment for drtc: `{venv}` does not exist.\n  fix: run `drtc setup` \
         (or set DRTC_PYTHON to a Python that has torch, triton and numpy)"
    )]
    NoPython { venv: PathBuf },
    #[error("cannot access `{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start `{python}`: {source}")]
    Spawn {
        python: String,
        source: std::io::Error,
    },
    #[error("the package probe of `{python}` failed: {message}")]
    Probe { python: String, message: String },
}
