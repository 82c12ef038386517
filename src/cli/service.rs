//! `drtc service`: the verification service that keeps workers warm between commands
//! (`run` serves, started by the commands that verify; `status` and `stop` manage them).

use super::error::{DriverError, DriverResult};
use super::pool::runtime_error;
use clap::{Args, Subcommand, ValueEnum};
use drtc::driver::export_server;
use drtc::verifier::service::client::{call_at, service_dir, status_at};
use drtc::verifier::service::{server, ServiceRequest};
use drtc::verifier::{DeviceKind, DrtcHome, PoolOptions, PythonEnv, WorkerPool};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
#[command(
    about = "Show or stop the verification services that keep workers warm",
    long_about = concat!(
        "The commands that verify (compile, verify, suite, eval, bench-pair) hand their checks to a verification service: a drtc process that keeps the Python workers started (Python, torch and CUDA imported, the Triton driver built) between commands, so that the second command does not pay that start-up again. One service runs per drtc build, Python environment, device, working directory and worker environment (DRTC_*, TRITON_*, CUDA_* and the like); it is started on first use, listens on a Unix socket under $DRTC_HOME/service (this user only), logs there, and exits after DRTC_SERVICE_IDLE_S seconds without a request (default 600), when stopped, or when its drtc home is deleted. Untrusted answers still run in a sandboxed process of their own, one per answer. DRTC_SERVICE=off makes every command use workers of its own process instead.\n\nThe export frontend (torch.export, for programs the native parser does not read) has a server of its own, started by its first export: a Python process with torch imported whose forked children export one program each; it follows the same rules (per Python environment, working directory and environment, idle limit, DRTC_SERVICE=off) and is listed and stopped here too.\n\nExamples:\n  drtc service status\n  drtc service stop",
        exit_status_help!()
    )
)]
pub struct ServiceArgs {
    #[command(subcommand)]
    pub action: ServiceAction,
}

#[derive(Subcommand, Debug)]
pub enum ServiceAction {
    /// List the running services (device, workers, requests, idle time) and export servers.
    Status(StatusArgs),
    /// Stop every running service and export server (requests in flight finish first).
    Stop,
    /// Serve on a socket (the commands that verify start this themselves).
    #[command(hide = true)]
    Run(RunArgs),
}

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ServiceDevice {
    Cpu,
    Cuda,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The Unix socket to listen on (must not exist).
    #[arg(long)]
    pub socket: PathBuf,
    #[arg(long, value_enum)]
    pub device: ServiceDevice,
    /// Exit after this many seconds without a request.
    #[arg(long, default_value_t = 600.0)]
    pub idle: f64,
    #[arg(long)]
    pub workers: Option<usize>,
    #[arg(long, default_value_t = 1)]
    pub workers_per_gpu: usize,
    #[arg(long, default_value_t = 180.0)]
    pub startup_timeout: f64,
}

pub fn run(args: ServiceArgs) -> DriverResult<ExitCode> {
    let home = DrtcHome::from_env();
    match args.action {
        ServiceAction::Run(run) => serve(run, &home),
        ServiceAction::Status(s) => status(&home, s.json),
        ServiceAction::Stop => stop(&home),
    }
}

fn serve(args: RunArgs, home: &DrtcHome) -> DriverResult<ExitCode> {
    let device = match args.device {
        ServiceDevice::Cpu => DeviceKind::Cpu,
        ServiceDevice::Cuda => DeviceKind::Cuda,
    };
    let secs = |s: f64, what: &str| {
        (s.is_finite() && s > 0.0)
            .then(|| Duration::from_secs_f64(s))
            .ok_or_else(|| DriverError::Reported(format!("--{what} must be a positive number")))
    };
    let mut options = PoolOptions::new(device);
    options.workers = args.workers;
    options.workers_per_gpu = args.workers_per_gpu.max(1);
    options.startup_timeout = secs(args.startup_timeout, "startup-timeout")?;
    let python = PythonEnv::locate(home).map_err(runtime_error)?;
    let pool = WorkerPool::new(python, home, options).map_err(runtime_error)?;
    server::serve(pool, &args.socket, secs(args.idle, "idle")?).map_err(runtime_error)?;
    Ok(ExitCode::SUCCESS)
}

/// The sockets of services that answer, with what they say.
fn running(
    home: &DrtcHome,
) -> DriverResult<Vec<(PathBuf, drtc::verifier::service::ServiceStatus)>> {
    let dir = service_dir(home).map_err(runtime_error)?;
    let mut found = vec![];
    let entries = std::fs::read_dir(&dir).map_err(|source| DriverError::Read {
        path: dir.display().to_string(),
        source,
    })?;
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_some_and(|x| x == "sock") {
            match status_at(&path) {
                Ok(s) => found.push((path, s)),
                // a dead service's socket
                Err(_) => drop(std::fs::remove_file(&path)),
            }
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found)
}

/// The sockets of export servers that answer, with what they say.
fn export_servers(home: &DrtcHome) -> DriverResult<Vec<(PathBuf, serde_json::Value)>> {
    let dir = service_dir(home).map_err(runtime_error)?;
    let mut found = vec![];
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let path = e.path();
        if path
            .extension()
            .is_some_and(|x| x == export_server::SOCKET_EXTENSION)
        {
            match export_server::status_at(&path) {
                Ok(s) => found.push((path, s)),
                Err(_) => drop(std::fs::remove_file(&path)),
            }
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found)
}

fn status(home: &DrtcHome, json: bool) -> DriverResult<ExitCode> {
    let found = running(home)?;
    let exporters = export_servers(home)?;
    if json {
        let list: Vec<_> = found
            .iter()
            .map(|(socket, s)| serde_json::json!({"socket": socket, "status": s}))
            .chain(
                exporters
                    .iter()
                    .map(|(socket, s)| serde_json::json!({"socket": socket, "export_server": s})),
            )
            .collect();
        let text = serde_json::to_string_pretty(&list)
            .map_err(|e| DriverError::Reported(e.to_string()))?;
        println!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    if found.is_empty() {
        println!("no verification service is running");
    }
    for (socket, s) in &exporters {
        println!(
            "export server {} (torch.export for the export frontend): {} exports, {} running, \
             up {:.0} s, idle {:.0} s of {:.0} s; socket {}",
            s["pid"],
            s["exports"],
            s["running"],
            s["uptime_s"].as_f64().unwrap_or(0.0),
            s["idle_s"].as_f64().unwrap_or(0.0),
            s["idle_limit_s"].as_f64().unwrap_or(0.0),
            socket.display()
        );
    }
    for (socket, s) in &found {
        println!(
            "service {} ({}): {} of {} workers running, {} requests, {} restarts, up {:.0} s, \
             idle {:.0} s of {:.0} s; in {}; socket {}",
            s.pid,
            s.device,
            s.worker_pids.len(),
            s.workers,
            s.requests,
            s.restarts,
            s.uptime_s,
            s.idle_s,
            s.idle_limit_s,
            s.cwd.display(),
            socket.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn stop(home: &DrtcHome) -> DriverResult<ExitCode> {
    let found = running(home)?;
    for (socket, s) in &found {
        call_at(socket, &ServiceRequest::Stop).map_err(runtime_error)?;
        println!("stopped service {} ({})", s.pid, s.device);
    }
    for (socket, s) in export_servers(home)? {
        export_server::stop_at(&socket).map_err(DriverError::Reported)?;
        println!("stopped export server {}", s["pid"]);
    }
    if found.is_empty() {
        println!("no verification service is running");
    }
    Ok(ExitCode::SUCCESS)
}
