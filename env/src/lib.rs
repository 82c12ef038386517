//! drtc's Python environment, below every crate that launches Python: where drtc keeps
//! its files ([`DrtcHome`]: `DRTC_HOME`, else `$XDG_CACHE_HOME/drtc`, else
//! `~/.cache/drtc`), the packages `drtc setup` pins ([`REQUIREMENTS`]), and the one locator
//! of the interpreter ([`PythonEnv::locate`]: `DRTC_PYTHON`, else the venv `drtc setup`
//! makes under the home), and the one way a Python process is started
//! ([`python_command`]). The runtime's workers, synthesized-program validation, the
//! CP-SAT library search and the tests all find Python here.

mod error;
mod home;
mod pins;
mod python;

pub use error::EnvError;
pub use home::DrtcHome;
pub use pins::{pinned_python, pins, Pin, REQUIREMENTS, WORKER_PACKAGES};
pub use python::{python_command, PythonEnv, PythonSource};
