//! `drtc suite DIR`: compile, verify and (on a GPU) time every program of a benchmark
//! directory (KernelBench level folders), and print a table with the summary metrics.

use super::verify::runtime_error;
use super::{read_file, DriverError, DriverResult};
use clap::Args;
use drtc::driver::compile::{compile_graph, CompileOptions};
use drtc::driver::program::load_programs;
use drtc::driver::shrink::shrink_overrides;
use drtc::runtime::{
    BenchRequest, DeviceKind, DrtcHome, PoolOptions, PythonEnv, VerifyRequest, WorkerPool,
};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Compile, verify and time a whole benchmark directory.
#[derive(Args, Debug)]
#[command(
    long_about = "Compiles every `.py` program of DIR (sorted by their numeric prefix), \
verifies each generated module against its reference and, on a GPU, times it against eager \
PyTorch with the runtime's protocol. Prints a table (task, status, kernels, compile ms, eager \
ms, drtc ms, speedup) and the summary metrics: accuracy, fast_1, geometric-mean speedup \
(failed tasks count as 1.0), compile-time median and maximum.\n\nExample (CPU, shrunk sizes):\n  \
drtc suite ../shared/kernelbench/level2 --device cpu --shrink --json out.jsonl"
)]
pub struct SuiteArgs {
    /// A directory of programs (KernelBench `.py` files or seed programs).
    pub dir: PathBuf,
    /// cpu (interpreter, correctness only) or cuda (correctness and timing).
    #[arg(long, value_enum)]
    pub device: Option<super::compile::DeviceArg>,
    /// Cap size constants by name (batch, spatial, channel, matrix dims) for the interpreter.
    #[arg(long)]
    pub shrink: bool,
    /// Run drtc's e-graph rewrites (canonicalize, simplify) before fusion.
    #[arg(long)]
    pub simplify: bool,
    /// Precision policy of fp32 matrix products (also the verifier's value rule).
    #[arg(long, value_enum, default_value = "fp32")]
    pub precision: super::compile::PrecisionArg,
    /// Only programs whose file name contains this text (repeatable).
    #[arg(long)]
    pub filter: Vec<String>,
    /// Write one JSON object per program here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the table as Markdown here (with the command that made it).
    #[arg(long)]
    pub markdown: Option<PathBuf>,
    /// Parallel workers on CPU.
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    /// Seconds allowed per verification.
    #[arg(long, default_value_t = 600)]
    pub timeout: u64,
}

fn numeric_prefix(p: &Path) -> (u64, String) {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let n = name
        .split('_')
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(u64::MAX);
    (n, name)
}

pub fn run(args: SuiteArgs) -> DriverResult<ExitCode> {
    let device = match args.device {
        Some(super::compile::DeviceArg::Cpu) => DeviceKind::Cpu,
        Some(super::compile::DeviceArg::Cuda) => DeviceKind::Cuda,
        None => DeviceKind::detect(),
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&args.dir)
        .map_err(|source| DriverError::Read {
            path: args.dir.display().to_string(),
            source,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .filter(|p| {
            let n = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            args.filter.is_empty() || args.filter.iter().any(|f| n.contains(f.as_str()))
        })
        .collect();
    files.sort_by_key(|p| numeric_prefix(p));
    let home = DrtcHome::from_env();
    let work = home.dir("suite").map_err(runtime_error)?;
    let opts = CompileOptions {
        interpret: device == DeviceKind::Cpu,
        simplify: args.simplify,
        precision: args.precision.policy(),
        ..Default::default()
    };
    // compile everything first (fast), then verify/time through the pool
    let mut rows: Vec<serde_json::Value> = vec![];
    let mut requests: Vec<(usize, VerifyRequest)> = vec![];
    for (i, f) in files.iter().enumerate() {
        let task = f
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let text = read_file(f)?;
        let overrides = if args.shrink {
            shrink_overrides(&text)
        } else {
            vec![]
        };
        let mut row = json!({"task": task});
        row["overrides"] = json!(overrides
            .iter()
            .map(|o| format!("{}={}", o.name, o.value))
            .collect::<Vec<_>>());
        let t0 = std::time::Instant::now();
        let loaded = match load_programs(f, &text, &overrides, None) {
            Ok(mut v) if v.len() == 1 => v.remove(0),
            Ok(_) => Err(drtc::driver::program::LoadError {
                name: task.clone(),
                line: None,
                message: "not one program".into(),
            }),
            Err(m) => Err(drtc::driver::program::LoadError {
                name: task.clone(),
                line: None,
                message: m,
            }),
        };
        match loaded {
            Err(e)
                if args.shrink
                    && load_programs(f, &text, &[], None)
                        .is_ok_and(|v| v.iter().all(|p| p.is_ok())) =>
            {
                // the program is fine at its own sizes: shrinking broke a shape coincidence
                row["status"] = json!("unshrinkable");
                row["error"] = json!(e.message.lines().next().unwrap_or("").to_string());
            }
            Err(e) => {
                row["status"] = json!("frontend");
                row["error"] = json!(e.message.lines().next().unwrap_or("").to_string());
                row["error_full"] = json!(e.message);
            }
            Ok(p) => match compile_graph(p.graph, &p.form, &opts) {
                Err(e) => {
                    row["status"] = json!("compile");
                    row["error"] = json!(e);
                }
                Ok(c) => {
                    let cand = work.join(format!("{task}_drtc.py"));
                    let _ = c.elapsed;
                    let refp = work.join(format!("{task}_ref.py"));
                    std::fs::write(&cand, &c.module.source).map_err(|source| {
                        DriverError::Write {
                            path: cand.display().to_string(),
                            source,
                        }
                    })?;
                    std::fs::write(&refp, p.reference_source.unwrap_or_default()).map_err(
                        |source| DriverError::Write {
                            path: refp.display().to_string(),
                            source,
                        },
                    )?;
                    row["kernels"] = json!(c.module.kernel_count());
                    row["regions"] = json!(c.module.regions.len());
                    row["fallback_ops"] = json!(c.module.fallback_ops());
                    row["precision"] = json!(opts.precision.name());
                    row["gemm"] = json!(c
                        .module
                        .regions
                        .iter()
                        .filter_map(|r| r.gemm.as_ref().map(|g| json!({
                            "region": r.index,
                            "implementation": g.imp.describe(),
                            "mnk": [g.shape.m, g.shape.n, g.shape.k],
                            "batch": g.shape.batch,
                            "reason": g.reason,
                        })))
                        .collect::<Vec<_>>());
                    // parse to written module: loading (frontend) plus the compile pipeline
                    row["compile_ms"] = json!(t0.elapsed().as_secs_f64() * 1e3);
                    row["status"] = json!("pending");
                    let mut req = VerifyRequest::new(refp, cand);
                    req.rule = Some(opts.precision.rule().to_string());
                    requests.push((i, req));
                }
            },
        }
        rows.push(row);
    }
    let python = PythonEnv::locate(&home).map_err(runtime_error)?;
    let mut options = PoolOptions::new(device);
    if device == DeviceKind::Cpu {
        options.workers = Some(args.jobs.max(1));
    }
    options.request_timeout = Duration::from_secs(args.timeout);
    options.bench_timeout = Duration::from_secs(args.timeout);
    let pool = WorkerPool::new(python, &home, options).map_err(runtime_error)?;
    let bar = ProgressBar::new(requests.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} verified {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    if device == DeviceKind::Cpu {
        let reqs: Vec<VerifyRequest> = requests.iter().map(|r| r.1.clone()).collect();
        // in chunks so the bar moves
        for (chunk_reqs, chunk_idx) in reqs
            .chunks(args.jobs.max(1) * 2)
            .zip(requests.chunks(args.jobs.max(1) * 2))
        {
            let results = pool.verify_all(chunk_reqs);
            for (r, (i, _)) in results.into_iter().zip(chunk_idx) {
                let row = &mut rows[*i];
                match r {
                    Ok(rep) => {
                        row["status"] = json!(if rep.verified { "verified" } else { "failed" });
                        row["reasons"] = json!(rep.reasons());
                    }
                    Err(e) => {
                        row["status"] = json!("failed");
                        row["reasons"] = json!([e.to_string()]);
                    }
                }
                bar.inc(1);
                if bar.is_hidden() {
                    eprintln!(
                        "[{}/{}] {}: {}",
                        bar.position(),
                        requests.len(),
                        row["task"].as_str().unwrap_or(""),
                        row["status"].as_str().unwrap_or("")
                    );
                }
            }
        }
    } else {
        for (i, req) in &requests {
            let row = &mut rows[*i];
            bar.set_message(row["task"].as_str().unwrap_or("").to_string());
            match pool.bench(&BenchRequest {
                verify: req.clone(),
                compile_baseline: false,
            }) {
                Ok(b) => {
                    row["status"] = json!(if b.verify.verified {
                        "verified"
                    } else {
                        "failed"
                    });
                    row["reasons"] = json!(b.verify.reasons());
                    if let Some(t) = &b.timing {
                        row["eager_ms"] = json!(t.reference.median_ms);
                        row["drtc_ms"] = json!(t.candidate.median_ms);
                        row["speedup"] = json!(t.speedup());
                    }
                    if let Some(e) = &b.timing_error {
                        row["timing_error"] = json!(e);
                    }
                }
                Err(e) => {
                    row["status"] = json!("failed");
                    row["reasons"] = json!([e.to_string()]);
                }
            }
            bar.inc(1);
            if bar.is_hidden() {
                eprintln!(
                    "[{}/{}] {}: {}",
                    bar.position(),
                    requests.len(),
                    row["task"].as_str().unwrap_or(""),
                    row["status"].as_str().unwrap_or("")
                );
            }
        }
    }
    bar.finish_and_clear();
    let (table, summary) = render(&rows, device, &args);
    println!("{table}\n{summary}");
    if let Some(p) = &args.json {
        let lines: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
        std::fs::write(p, lines.join("\n") + "\n").map_err(|source| DriverError::Write {
            path: p.display().to_string(),
            source,
        })?;
    }
    if let Some(p) = &args.markdown {
        let cmd: Vec<String> = std::env::args().collect();
        let md = format!("Command: `{}`\n\n{table}\n{summary}\n", cmd.join(" "));
        std::fs::write(p, md).map_err(|source| DriverError::Write {
            path: p.display().to_string(),
            source,
        })?;
    }
    Ok(ExitCode::SUCCESS)
}

fn render(rows: &[serde_json::Value], device: DeviceKind, _args: &SuiteArgs) -> (String, String) {
    let mut t = String::from("| task | status | kernels | pytorch ops | compile ms | eager ms | drtc ms | speedup |\n|---|---|---|---|---|---|---|---|\n");
    let f = |v: &serde_json::Value, d: usize| {
        v.as_f64()
            .map(|x| format!("{x:.d$}"))
            .unwrap_or_else(|| "-".into())
    };
    let mut verified = 0;
    let mut faster = 0;
    let mut log_sum = 0.0;
    let mut compile_ms: Vec<f64> = vec![];
    for r in rows {
        let status = r["status"].as_str().unwrap_or("?");
        let detail = match status {
            "frontend" | "compile" | "unshrinkable" => {
                format!("{status}: {}", r["error"].as_str().unwrap_or(""))
            }
            "failed" => format!(
                "failed: {}",
                r["reasons"]
                    .as_array()
                    .map(|a| a
                        .iter()
                        .filter_map(|x| x.as_str())
                        .collect::<Vec<_>>()
                        .join("; "))
                    .unwrap_or_default()
            ),
            s => s.to_string(),
        };
        let detail = detail.replace('|', "/");
        let detail: String = detail.chars().take(140).collect();
        let fb = r["fallback_ops"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        writeln!(
            t,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r["task"].as_str().unwrap_or(""),
            detail,
            r["kernels"]
                .as_u64()
                .map(|k| k.to_string())
                .unwrap_or("-".into()),
            if fb.is_empty() { "-".into() } else { fb },
            f(&r["compile_ms"], 2),
            f(&r["eager_ms"], 4),
            f(&r["drtc_ms"], 4),
            f(&r["speedup"], 2)
        )
        .unwrap();
        if status == "verified" {
            verified += 1;
            if let Some(s) = r["speedup"].as_f64() {
                log_sum += s.ln();
                if s > 1.0 {
                    faster += 1;
                }
            }
        }
        if let Some(c) = r["compile_ms"].as_f64() {
            compile_ms.push(c);
        }
    }
    compile_ms.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let n = rows.len().max(1);
    let mut s = format!(
        "{} programs on {}: {verified} verified (accuracy {:.1}%)",
        rows.len(),
        device.name(),
        100.0 * verified as f64 / n as f64
    );
    let by = |st: &str| rows.iter().filter(|r| r["status"] == st).count();
    write!(
        s,
        ", {} failed verification, {} rejected by the frontend, {} failed to compile, {} valid only at their own sizes (not shrinkable)",
        by("failed"),
        by("frontend"),
        by("compile"),
        by("unshrinkable")
    )
    .unwrap();
    if device == DeviceKind::Cuda {
        write!(
            s,
            "\nfast_1 (verified and faster than eager): {faster}/{} = {:.1}%; geometric-mean speedup over all programs (failures count 1.0): {:.3}x",
            rows.len(),
            100.0 * faster as f64 / n as f64,
            (log_sum / n as f64).exp()
        )
        .unwrap();
    }
    if !compile_ms.is_empty() {
        write!(
            s,
            "\ncompile time (parse to written module): median {:.2} ms, max {:.2} ms",
            compile_ms[compile_ms.len() / 2],
            compile_ms[compile_ms.len() - 1]
        )
        .unwrap();
    }
    (t, s)
}
