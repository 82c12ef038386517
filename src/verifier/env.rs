//! Where drtc keeps its files, which packages it pins and which Python it runs: all of it
//! lives in the `drtc-env` crate (below the frontends and backends, which launch Python
//! too), so every launch finds the same interpreter; the verifier uses it from here.

pub use drtc_env::{
    pinned_python, pins, DrtcHome, EnvError, Pin, PythonEnv, PythonSource, REQUIREMENTS,
    WORKER_PACKAGES,
};
