//! The export server's client: the export frontend's helper run by a warm Python process
//! (`drtc_frontends::export::SERVER`) instead of a new one per program, so a program pays
//! neither Python's and torch's start-up nor torch.export's first-use initialization.
//!
//! One server runs per helper, server program, Python environment, working directory and
//! the environment variables a worker reads (the verification service's rule,
//! `service/key.rs`), on a Unix socket under `$DRTC_HOME/service` (`export-KEY.xsock`); the
//! first export starts it (detached, in its own session, logging beside the socket), later
//! ones connect. Each export runs in a forked child of the server, so nothing a program
//! does outlives it. The server exits after `DRTC_SERVICE_IDLE_S` seconds without a
//! request (default 600), on `drtc service stop`, or when its socket is removed;
//! `DRTC_SERVICE=off` turns it off with the verification service.

use crate::driver::export_script::install_script;
use crate::verifier::env::{DrtcHome, PythonEnv};
use crate::verifier::service::client::{service_dir, spawn_detached, Lock, MAX_SOCKET_PATH};
use crate::verifier::service::key::keyed_env;
use crate::verifier::service::launch::idle_limit;
use crate::verifier::worker::fnv1a;
use drtc_frontends::export::{HELPER, SERVER};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a new server may take to listen (Python, torch's import and the warm-up
/// export).
const LISTEN_TIMEOUT: Duration = Duration::from_secs(60);

/// The file extension of export servers' sockets.
pub const SOCKET_EXTENSION: &str = "xsock";

/// One export through the server: `program` exported to `out` as the helper would write
/// it (its stderr to `out` + `.stderr`), with `types` (the helper's `--input-types` JSON)
/// when given. `Ok` once the server has taken the request, with how the export ended
/// (`it exited with status 3`), whatever its outcome (the caller reads `out`); `Err`: why
/// no server could take it (the caller runs the helper itself instead).
pub fn export_with_server(
    home: &DrtcHome,
    python: &PythonEnv,
    helper: &Path,
    program: &Path,
    out: &Path,
    types: Option<&str>,
    timeout: Duration,
) -> Result<String, String> {
    let socket = connect_or_start(home, python, helper)?;
    let types: Option<Value> = match types {
        Some(t) => Some(serde_json::from_str(t).map_err(|e| e.to_string())?),
        None => None,
    };
    let req = json!({
        "op": "export",
        "program": program,
        "out": out,
        "input_types": types,
        "timeout_s": timeout.as_secs_f64().ceil(),
    });
    let mut conn = UnixStream::connect(&socket).map_err(|e| e.to_string())?;
    send(&mut conn, &req)?;
    // the supervising child answers when the helper is done or killed; the export has run
    // (or is given up) whatever the answer
    Ok(
        match receive(&conn, Some(timeout + Duration::from_secs(5))) {
            Ok(r) if r["reply"] == "refused" => {
                return Err(format!("the export server refused it: {}", r["message"]))
            }
            Ok(r) if r["timed_out"] == true => format!("no result after {} s", timeout.as_secs()),
            Ok(r) if r["exit"].is_u64() => format!("it exited with status {}", r["exit"]),
            Ok(r) if r["signal"].is_u64() => format!("it was killed by signal {}", r["signal"]),
            Ok(r) => format!("the export server answered {r}"),
            Err(e) => format!("the export server gave no answer ({e})"),
        },
    )
}

/// The socket of this process's server, started when none answers.
fn connect_or_start(home: &DrtcHome, python: &PythonEnv, helper: &Path) -> Result<PathBuf, String> {
    let dir = service_dir(home).map_err(|e| e.to_string())?;
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let key = fnv1a(
        format!(
            "{HELPER}\0{SERVER}\0{}\0{}\0{:?}",
            python.python.display(),
            cwd.display(),
            keyed_env()
        )
        .as_bytes(),
    );
    let socket = dir.join(format!("export-{key:016x}.{SOCKET_EXTENSION}"));
    if socket.as_os_str().len() > MAX_SOCKET_PATH {
        return Err(format!("socket path {} too long", socket.display()));
    }
    if status_at(&socket).is_ok() {
        return Ok(socket);
    }
    // one starter at a time per key: the others wait here and then find it listening
    let _lock =
        Lock::exclusive(&dir.join(format!("export-{key:016x}.lock"))).map_err(|e| e.to_string())?;
    if status_at(&socket).is_ok() {
        return Ok(socket);
    }
    let _ = std::fs::remove_file(&socket); // a dead server's
    let server = install_script(home, "server", SERVER)?;
    let log = dir.join(format!("export-{key:016x}.log"));
    spawn(python, &server, helper, &socket, &log)?;
    let deadline = Instant::now() + LISTEN_TIMEOUT;
    while Instant::now() < deadline {
        if status_at(&socket).is_ok() {
            return Ok(socket);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(format!(
        "the export server did not listen within {} s (log: {})",
        LISTEN_TIMEOUT.as_secs(),
        log.display()
    ))
}

fn spawn(
    python: &PythonEnv,
    server: &Path,
    helper: &Path,
    socket: &Path,
    log: &Path,
) -> Result<(), String> {
    let mut cmd = python.command();
    cmd.arg("-W")
        .arg("ignore")
        .arg(server)
        .arg("--socket")
        .arg(socket)
        .arg("--helper")
        .arg(helper)
        .arg("--idle")
        .arg(format!("{}", idle_limit().as_secs_f64()));
    spawn_detached(cmd, log).map_err(|e| e.to_string())
}

/// What the server at `socket` says of itself.
pub fn status_at(socket: &Path) -> Result<Value, String> {
    let v = call(
        socket,
        &json!({"op": "status"}),
        Some(Duration::from_secs(5)),
    )?;
    if v["reply"] == "status" {
        Ok(v)
    } else {
        Err(format!("unexpected reply {v}"))
    }
}

/// Asks the server at `socket` to stop.
pub fn stop_at(socket: &Path) -> Result<(), String> {
    call(socket, &json!({"op": "stop"}), Some(Duration::from_secs(5))).map(|_| ())
}

/// One JSON line to the server and its one-line answer.
fn call(socket: &Path, req: &Value, timeout: Option<Duration>) -> Result<Value, String> {
    let mut conn = UnixStream::connect(socket).map_err(|e| e.to_string())?;
    send(&mut conn, req)?;
    receive(&conn, timeout)
}

fn send(conn: &mut UnixStream, req: &Value) -> Result<(), String> {
    let mut text = req.to_string();
    text.push('\n');
    conn.write_all(text.as_bytes())
        .and_then(|_| conn.flush())
        .map_err(|e| e.to_string())
}

fn receive(conn: &UnixStream, timeout: Option<Duration>) -> Result<Value, String> {
    conn.set_read_timeout(timeout).map_err(|e| e.to_string())?;
    let mut line = String::new();
    BufReader::new(conn)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    if line.trim().is_empty() {
        return Err("the export server closed the connection without an answer".into());
    }
    serde_json::from_str(&line).map_err(|e| e.to_string())
}
