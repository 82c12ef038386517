//! A client of the verification service: finds the service for this process's key, starts
//! it on first use (detached, in its own session, logging under drtc's home), and sends it
//! one request per connection.

use super::super::error::{RuntimeError, RuntimeResult};
use super::super::options::PoolOptions;
use super::key::{service_key, socket_path};
use super::launch::ServiceLaunch;
use super::messages::{ServiceReply, ServiceRequest, ServiceStatus};
use crate::verifier::{DrtcHome, PythonEnv};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest socket path the kernel accepts (`sun_path` holds 108 bytes with its NUL).
pub(crate) const MAX_SOCKET_PATH: usize = 107;

/// How long a new service may take to listen.
const LISTEN_TIMEOUT: Duration = Duration::from_secs(15);

/// A connection point to one running service.
#[derive(Debug, Clone)]
pub struct ServiceClient {
    socket: PathBuf,
    /// What the service said when this client found it.
    pub status: ServiceStatus,
    /// Whether this client started it.
    pub started: bool,
}

impl ServiceClient {
    /// The service for this process's key, started when none answers.
    pub fn connect_or_start(
        launch: &ServiceLaunch,
        home: &DrtcHome,
        python: &PythonEnv,
        options: &PoolOptions,
    ) -> RuntimeResult<ServiceClient> {
        let dir = service_dir(home)?;
        let cwd = std::env::current_dir().map_err(|e| RuntimeError::io("current directory", e))?;
        let key = service_key(&launch.exe, python, options, &cwd)
            .map_err(|e| RuntimeError::io(&launch.exe, e))?;
        let socket = socket_path(&dir, &key);
        if socket.as_os_str().len() > MAX_SOCKET_PATH {
            return Err(RuntimeError::Service(format!(
                "the service's socket path {} is longer than {MAX_SOCKET_PATH} bytes; set \
                 DRTC_HOME to a shorter directory or DRTC_SERVICE=off",
                socket.display()
            )));
        }
        if let Ok(status) = status_at(&socket) {
            return Ok(ServiceClient {
                socket,
                status,
                started: false,
            });
        }
        // One starter at a time per key: the others wait here and then find it running.
        let lock_path = dir.join(format!("{key}.lock"));
        let _lock = Lock::exclusive(&lock_path)?;
        if let Ok(status) = status_at(&socket) {
            return Ok(ServiceClient {
                socket,
                status,
                started: false,
            });
        }
        let _ = std::fs::remove_file(&socket); // a dead service's
        let log = dir.join(format!("{key}.log"));
        spawn(launch, options, &socket, &log, &cwd)?;
        let deadline = Instant::now() + LISTEN_TIMEOUT;
        loop {
            match status_at(&socket) {
                Ok(status) => {
                    return Ok(ServiceClient {
                        socket,
                        status,
                        started: true,
                    })
                }
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(e) => {
                    return Err(RuntimeError::Service(format!(
                        "the verification service did not start within {:.0} s ({e}); its log: \
                         {}\n{}",
                        LISTEN_TIMEOUT.as_secs_f64(),
                        log.display(),
                        tail(&log)
                    )))
                }
            }
        }
    }

    /// The socket this client talks to.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Sends one request and waits for its answer (the service applies the request's own
    /// deadlines; a service that dies ends the wait).
    pub fn call(&self, req: &ServiceRequest) -> RuntimeResult<ServiceReply> {
        call_at(&self.socket, req)
    }
}

/// The services' directory under drtc's home, readable by this user only.
pub fn service_dir(home: &DrtcHome) -> RuntimeResult<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let dir = home.dir("service")?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| RuntimeError::io(&dir, e))?;
    Ok(dir)
}

/// Asks the service at `socket` what it holds.
pub fn status_at(socket: &Path) -> RuntimeResult<ServiceStatus> {
    match call_at(socket, &ServiceRequest::Status)? {
        ServiceReply::Status { status } => Ok(status),
        other => Err(unexpected(&other)),
    }
}

/// One request over a new connection to `socket`.
pub fn call_at(socket: &Path, req: &ServiceRequest) -> RuntimeResult<ServiceReply> {
    let mut conn = UnixStream::connect(socket).map_err(|e| RuntimeError::io(socket, e))?;
    let mut text = serde_json::to_string(req).map_err(|e| RuntimeError::Protocol(e.to_string()))?;
    text.push('\n');
    conn.write_all(text.as_bytes())
        .and_then(|_| conn.flush())
        .map_err(|e| RuntimeError::io(socket, e))?;
    let mut line = String::new();
    BufReader::new(&conn)
        .read_line(&mut line)
        .map_err(|e| RuntimeError::io(socket, e))?;
    if line.trim().is_empty() {
        return Err(RuntimeError::Service(format!(
            "the verification service at {} closed the connection without an answer (it \
             stopped or died; its log is beside the socket)",
            socket.display()
        )));
    }
    let reply: ServiceReply = serde_json::from_str(&line)
        .map_err(|e| RuntimeError::Protocol(format!("service reply: {e}")))?;
    match reply {
        ServiceReply::Error { error } => Err(error.into()),
        other => Ok(other),
    }
}

/// The error for a reply of the wrong kind.
pub fn unexpected(reply: &ServiceReply) -> RuntimeError {
    RuntimeError::Protocol(format!("unexpected service reply: {reply:?}"))
}

fn spawn(
    launch: &ServiceLaunch,
    options: &PoolOptions,
    socket: &Path,
    log: &Path,
    cwd: &Path,
) -> RuntimeResult<()> {
    let mut cmd = Command::new(&launch.exe);
    cmd.args(["service", "run", "--socket"])
        .arg(socket)
        .args(["--device", options.device.name()])
        .arg("--idle")
        .arg(format!("{}", launch.idle.as_secs_f64()))
        .arg("--workers-per-gpu")
        .arg(options.workers_per_gpu.to_string())
        .arg("--startup-timeout")
        .arg(format!("{}", options.startup_timeout.as_secs_f64()))
        .current_dir(cwd);
    if let Some(n) = options.workers {
        cmd.arg("--workers").arg(n.to_string());
    }
    spawn_detached(cmd, log)
}

/// Starts `cmd` detached: in a session of its own (a Ctrl-C at the caller's terminal does
/// not reach it), stdin closed, stdout and stderr appended to `log`.
pub(crate) fn spawn_detached(mut cmd: Command, log: &Path) -> RuntimeResult<()> {
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| RuntimeError::io(log, e))?;
    let err = out.try_clone().map_err(|e| RuntimeError::io(log, e))?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err));
    // SAFETY: setsid is async-signal-safe; the child leaves the caller's session and
    // process group.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    cmd.spawn().map_err(|source| RuntimeError::Spawn {
        python: cmd.get_program().to_string_lossy().into_owned(),
        source,
    })?;
    Ok(())
}

/// The end of a service's log, for an error message.
fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// An exclusive `flock` on a file, released when dropped.
pub(crate) struct Lock {
    _file: std::fs::File,
}

impl Lock {
    pub(crate) fn exclusive(path: &Path) -> RuntimeResult<Lock> {
        use std::os::fd::AsRawFd;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| RuntimeError::io(path, e))?;
        // SAFETY: flock on a descriptor this function owns; released when it is closed.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        if rc != 0 {
            return Err(RuntimeError::io(path, std::io::Error::last_os_error()));
        }
        Ok(Lock { _file: file })
    }
}
