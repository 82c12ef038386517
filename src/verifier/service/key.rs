//! Which service a client may use: one per drtc build, Python environment, device, pool
//! shape, working directory and the environment variables its workers read. Two clients
//! that differ in any of them get different services, so a client sees exactly what a
//! pool of its own would do.

use super::super::options::{DeviceKind, PoolOptions};
use super::super::worker::content_hash;
use crate::verifier::PythonEnv;
use std::path::{Path, PathBuf};

/// Environment variables that reach the workers' behavior: by prefix, and by name.
const ENV_PREFIXES: [&str; 10] = [
    "DRTC_", "TRITON_", "CUDA_", "TORCH", "PYTORCH_", "OMP_", "MKL_", "PYTHON", "LD_", "NVIDIA_",
];
const ENV_NAMES: [&str; 4] = ["HOME", "PATH", "XDG_CACHE_HOME", "TMPDIR"];

/// Variables that only choose how the client uses the service: not part of the key.
const CLIENT_ONLY: [&str; 2] = ["DRTC_SERVICE", "DRTC_SERVICE_IDLE_S"];

/// The environment variables of this process that reach a worker's behavior (and so name
/// its service), sorted.
pub fn keyed_env() -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| {
            (ENV_PREFIXES.iter().any(|p| k.starts_with(p)) || ENV_NAMES.contains(&k.as_str()))
                && !CLIENT_ONLY.contains(&k.as_str())
        })
        .collect();
    env.sort();
    env
}

/// The key of the service `options` would use from this process, as 16 hex digits.
pub fn service_key(
    exe: &Path,
    python: &PythonEnv,
    options: &PoolOptions,
    cwd: &Path,
) -> std::io::Result<String> {
    let meta = std::fs::metadata(exe)?;
    let built = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let env = keyed_env();
    // the pool's resolved size, so that "all" and "1" name the same service on one GPU
    let (device, workers) = match options.device {
        DeviceKind::Cpu => {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            ("cpu", options.workers.unwrap_or((cores / 2).max(1)).max(1))
        }
        DeviceKind::Cuda => {
            let gpus = match crate::verifier::devices::scan() {
                crate::verifier::DeviceScan::Gpus(g) => g.len(),
                crate::verifier::DeviceScan::None { .. } => 0,
            };
            (
                "cuda",
                options.workers.unwrap_or(gpus).clamp(1, gpus.max(1)),
            )
        }
    };
    let text = format!(
        "{}\n{}\n{built}\n{}\n{device}\n{workers}\n{}\n{}\n{env:?}",
        exe.display(),
        meta.len(),
        python.python.display(),
        options.workers_per_gpu,
        cwd.display(),
    );
    Ok(format!("{:016x}", content_hash(text.as_bytes())))
}

/// Where the service of `key` listens, under drtc's home.
pub fn socket_path(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.sock"))
}
