//! The verification service: a [`WorkerPool`] behind a Unix socket, so that the workers'
//! Python, torch and CUDA start-up (and their warm Triton drivers) outlive one drtc
//! command. Each connection carries one request; connections are served concurrently and
//! the pool's rules hold across clients (one request per worker, exclusive timing per
//! GPU). It exits when idle for its limit, when asked, or when its socket is removed
//! (its drtc home deleted); its workers go with it.

use super::super::error::{RuntimeError, RuntimeResult};
use super::super::pool::WorkerPool;
use super::messages::{ServiceReply, ServiceRequest, ServiceStatus, WireError};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the service looks at its idle time and its socket.
const WATCH_PERIOD: Duration = Duration::from_millis(200);

struct State {
    pool: WorkerPool,
    socket: PathBuf,
    idle_limit: Duration,
    started: Instant,
    active: AtomicUsize,
    last: Mutex<Instant>,
    stop: AtomicBool,
}

impl State {
    fn status(&self) -> ServiceStatus {
        let last = *self.last.lock().unwrap_or_else(|p| p.into_inner());
        ServiceStatus {
            pid: std::process::id(),
            device: self.pool.device().name().to_string(),
            workers: self.pool.size(),
            worker_pids: self.pool.worker_pids(),
            requests: self.pool.requests(),
            restarts: self.pool.restarts(),
            uptime_s: self.started.elapsed().as_secs_f64(),
            // the status request itself is active
            idle_s: if self.active.load(Ordering::SeqCst) > 1 {
                0.0
            } else {
                last.elapsed().as_secs_f64()
            },
            idle_limit_s: self.idle_limit.as_secs_f64(),
            cwd: std::env::current_dir().unwrap_or_default(),
        }
    }

    /// Why the service should end now, if it should.
    fn exit_reason(&self) -> Option<String> {
        if self.stop.load(Ordering::SeqCst) {
            return Some("asked to stop".into());
        }
        if !self.socket.exists() {
            return Some(format!("its socket {} is gone", self.socket.display()));
        }
        let last = *self.last.lock().unwrap_or_else(|p| p.into_inner());
        (self.active.load(Ordering::SeqCst) == 0 && last.elapsed() >= self.idle_limit).then(|| {
            format!(
                "idle for {:.0} s (its limit)",
                self.idle_limit.as_secs_f64()
            )
        })
    }
}

/// Serves `pool` on `socket` (which must not exist) until idle for `idle_limit`.
pub fn serve(pool: WorkerPool, socket: &Path, idle_limit: Duration) -> RuntimeResult<()> {
    let listener = UnixListener::bind(socket).map_err(|e| RuntimeError::io(socket, e))?;
    restrict(socket)?;
    let state = State {
        pool,
        socket: socket.to_path_buf(),
        idle_limit,
        started: Instant::now(),
        active: AtomicUsize::new(0),
        last: Mutex::new(Instant::now()),
        stop: AtomicBool::new(false),
    };
    eprintln!(
        "drtc service {}: {} on {} ({} worker slots), exits after {:.0} s idle",
        std::process::id(),
        state.pool.device().name(),
        socket.display(),
        state.pool.size(),
        idle_limit.as_secs_f64()
    );
    let listening = listener.as_raw_fd();
    let reason = std::thread::scope(|scope| {
        let watcher = scope.spawn(|| loop {
            std::thread::sleep(WATCH_PERIOD);
            if let Some(reason) = state.exit_reason() {
                state.stop.store(true, Ordering::SeqCst);
                // Wake the accept loop: shutting the listening socket down makes a blocked
                // accept(2) return on Linux (a connection cannot, once the socket's path is
                // gone).
                // SAFETY: shutdown(2) on the listener's descriptor, which outlives this scope.
                unsafe {
                    libc::shutdown(listening, libc::SHUT_RDWR);
                }
                let _ = UnixStream::connect(&state.socket);
                return reason;
            }
        });
        for conn in listener.incoming() {
            if state.stop.load(Ordering::SeqCst) {
                break;
            }
            let Ok(conn) = conn else {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            };
            state.active.fetch_add(1, Ordering::SeqCst);
            let state = &state;
            scope.spawn(move || {
                handle(state, conn);
                *state.last.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
                state.active.fetch_sub(1, Ordering::SeqCst);
            });
        }
        watcher
            .join()
            .unwrap_or_else(|_| "its watcher panicked".into())
    });
    if state.socket.exists() {
        let _ = std::fs::remove_file(&state.socket);
    }
    eprintln!(
        "drtc service {}: exiting, {reason}; {} requests served",
        std::process::id(),
        state.pool.requests()
    );
    Ok(())
}

/// Only this user may connect: the socket's directory and the socket itself.
fn restrict(socket: &Path) -> RuntimeResult<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| RuntimeError::io(socket, e))
}

fn handle(state: &State, conn: UnixStream) {
    let mut line = String::new();
    let mut reader = BufReader::new(&conn);
    if reader.read_line(&mut line).is_err() || line.trim().is_empty() {
        return; // a wake-up or a client that left
    }
    let started = Instant::now();
    // The client sends nothing more: end of stream means it left (killed, Ctrl-C), and its
    // request's worker is killed rather than left to run to the deadline.
    let left = Arc::new(AtomicBool::new(false));
    if let Ok(mut watch) = conn.try_clone() {
        let left = Arc::clone(&left);
        std::thread::spawn(move || {
            let mut byte = [0u8; 1];
            if matches!(watch.read(&mut byte), Ok(0) | Err(_)) {
                left.store(true, Ordering::SeqCst);
            }
        });
    }
    let reply = match serde_json::from_str::<ServiceRequest>(&line) {
        Err(e) => ServiceReply::Error {
            error: WireError::Other {
                message: format!("service protocol error: {e}"),
            },
        },
        Ok(req) => answer(state, req, &left),
    };
    let what = match &reply {
        ServiceReply::Verified { report } => format!("verify: verified={}", report.verified),
        ServiceReply::Benched { report } => format!("bench: verified={}", report.verify.verified),
        ServiceReply::Warm { workers } => format!("warm-up: {} workers", workers.len()),
        ServiceReply::Status { .. } => "status".into(),
        ServiceReply::Stopping => "stop".into(),
        ServiceReply::Error { error } => format!("error: {error:?}"),
    };
    eprintln!("  {what} in {:.2} s", started.elapsed().as_secs_f64());
    let Ok(mut text) = serde_json::to_string(&reply) else {
        return;
    };
    text.push('\n');
    let mut conn = conn;
    // a client that left (killed, Ctrl-C) gets nothing; its worker is free again
    let _ = conn.write_all(text.as_bytes()).and_then(|_| conn.flush());
}

fn answer(state: &State, req: ServiceRequest, left: &AtomicBool) -> ServiceReply {
    let secs = |s: f64| Duration::from_secs_f64(s.max(0.0));
    let result = match req {
        ServiceRequest::Verify {
            req,
            timeout_s,
            alone,
        } => state
            .pool
            .verify_in(&req, secs(timeout_s), alone, Some(left))
            .map(|report| ServiceReply::Verified {
                report: Box::new(report),
            }),
        ServiceRequest::Bench {
            req,
            budget_s,
            phase_timeout_s,
            alone,
        } => state
            .pool
            .bench_with_limit(
                &req,
                budget_s.map(secs),
                secs(phase_timeout_s),
                alone,
                Some(left),
            )
            .map(|report| ServiceReply::Benched {
                report: Box::new(report),
            }),
        ServiceRequest::WarmUp => state
            .pool
            .warm_up()
            .map(|workers| ServiceReply::Warm { workers }),
        ServiceRequest::Status => Ok(ServiceReply::Status {
            status: state.status(),
        }),
        ServiceRequest::Stop => {
            state.stop.store(true, Ordering::SeqCst);
            Ok(ServiceReply::Stopping)
        }
    };
    result.unwrap_or_else(|e| ServiceReply::Error {
        error: WireError::from(&e),
    })
}
