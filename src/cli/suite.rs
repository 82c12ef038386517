//! `drtc suite DIR`: compile, verify and (on a GPU) time every program of a benchmark
//! directory (KernelBench level folders), writing one JSON row per task as it finishes,
//! and print a table with the summary metrics.

use super::baseline_arg::BaselineArg;
use super::baseline_arg::TorchPrecisionArg;
use super::codegen_args::PrecisionArg;
use super::error::{DriverError, DriverResult};
use super::pool::runtime_error;
use super::suite_memory::MemoryBudget;
use super::suite_results::ResultsFile;
use super::suite_table::{detail, render, VERIFIED};
use super::suite_task::{run_task, TaskContext};
use clap::Args;
use drtc::driver::compile::CompileOptions;
use drtc::verifier::devices::DeviceScan;
use drtc::verifier::{DeviceKind, DrtcHome, PoolOptions, PythonEnv};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Exit status when `--stop-after` left tasks to run (resume with `--resume`).
const EXIT_UNFINISHED: u8 = super::exit::UNFINISHED;

#[derive(Args, Debug)]
#[command(
    about = "Compile, verify and time every program of a benchmark directory",
    long_about = concat!(
        "Compiles every `.py` program of DIR (sorted by their numeric prefix), \
verifies each generated module against its reference and, on a GPU, times it against eager \
PyTorch (and, with --baseline compile, torch.compile of the reference) with the runtime's \
protocol: CUDA events, L2 flushed, interleaved on the same inputs, medians. Each task's JSON \
row is written to --json and flushed as soon as the task finishes; --resume skips the tasks \
already there, and `drtc suite-report` rebuilds the table from that file.\n\nWith --jobs N, N \
tasks compile and verify at once (CPU workers, or N workers per GPU); on a GPU their timing \
phases still run one at a time, when no other worker runs anything on that GPU.\n\nPrints a \
table (task, status, kernels, compile ms, eager ms, torch.compile ms, drtc ms, speedups) and \
the summary: accuracy, fast_1 and geometric-mean speedup against each baseline (failed tasks \
count as 1.0), compile-time median and maximum, peak verification memory over the \
reference's.\n\nExit status: 0 when every task ran (whatever its result: the table says which failed), \
4 when --stop-after left tasks to run (run again with --resume); 2 and 3 as below.\n\nExamples:\n  drtc suite ../shared/kernelbench/level2 \
--device cpu --shrink --json out.jsonl\n  drtc suite level2 --device cuda --baseline compile \
--torch-precision highest --jobs 4 --json r.jsonl --markdown r.md --resume",
        exit_status_help!()
    )
)]
pub struct SuiteArgs {
    /// A directory of programs (KernelBench `.py` files or seed programs).
    pub dir: PathBuf,
    /// cpu (interpreter, correctness only) or cuda (correctness and timing).
    #[arg(long, value_enum)]
    pub device: Option<super::codegen_args::DeviceArg>,
    /// Cap size constants by name (batch, spatial, channel, matrix dims) for the interpreter.
    #[arg(long)]
    pub shrink: bool,
    /// Run drtc's e-graph rewrites (canonicalize, simplify) before fusion: the default.
    /// A rewrite is kept only where the fusion plan of the result costs less (memory
    /// traffic, arithmetic and kernel launches of its fused regions).
    #[arg(long, conflicts_with = "no_simplify")]
    pub simplify: bool,
    /// Skip the e-graph rewrites: the program is fused as written.
    #[arg(long)]
    pub no_simplify: bool,
    /// On a GPU: test-time search per task, as `drtc compile --search` does. `quick`
    /// (default): GEMM implementations of large regions, small-reduction convolutions
    /// (cuDNN, NCHW cuDNN, drtc's fused template), cooperative rows for reductions of rows
    /// longer than one tile (2^24 elements and more) and CUDA-graph replay against the
    /// eager forward; `full` (also bare `--search`): every kernel's launch configurations
    /// too; `off`. The fastest verified candidate is kept and cached under the drtc home.
    /// On --device cpu nothing is timed: `full` says so, `quick` does nothing.
    #[arg(long, value_enum, default_value = "quick", num_args = 0..=1,
          require_equals = true, default_missing_value = "full")]
    pub search: super::search_arg::SearchArg,
    /// Which frontend reads each program (as `drtc compile --frontend`): native, export
    /// (torch.export), or auto: native when it accepts the program, export otherwise.
    #[arg(long, value_enum, default_value = "auto")]
    pub frontend: drtc::driver::frontend::Frontend,
    /// Precision policy of fp32 matrix products (also the verifier's value rule).
    #[arg(long, value_enum, default_value = "fp32")]
    pub precision: PrecisionArg,
    /// Memory layout of convolutions (a channels-last module that fails verification is
    /// verified again in NCHW; the row says so).
    #[arg(long, value_enum, default_value = "auto")]
    pub layout: super::layout_arg::LayoutArg,
    /// torch.compile of the reference to time too, interleaved with eager and drtc on the
    /// same inputs (GPU only): `compile` (default mode), `max-autotune`,
    /// `max-autotune-no-cudagraphs`, `reduce-overhead` or `all-modes` (repeat the option or
    /// separate values with commas). The table compares drtc with each and with the best
    /// mode per task, and reports each mode's compile time.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub baseline: Vec<BaselineArg>,
    /// Seconds each torch.compile mode may spend on its first call, which compiles (GPU
    /// only; default: unbounded). A mode still compiling then is reported over budget and
    /// not timed, and the task goes on with the other modes: max-autotune's autotuning of a
    /// large model can outlast --timeout and take the whole task with it. The table counts
    /// the tasks where each mode ran over.
    #[arg(long, value_name = "SECONDS")]
    pub compile_budget: Option<u64>,
    /// `torch.set_float32_matmul_precision` for the eager reference and torch.compile while
    /// they are timed (default: PyTorch's own). Verification always uses PyTorch's default.
    #[arg(long, value_enum)]
    pub torch_precision: Option<TorchPrecisionArg>,
    /// CUDA graphs in the generated modules (as `drtc compile --cuda-graphs`).
    #[arg(long, value_enum, default_value = "auto")]
    pub cuda_graphs: super::codegen_args::CudaGraphsArg,
    /// Only programs whose file name contains this text (repeatable).
    #[arg(long)]
    pub filter: Vec<String>,
    /// Write one JSON row per program here, each as soon as its task finishes.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Skip the tasks already in the --json file (made with the same settings and, on a GPU,
    /// the same GPU model).
    #[arg(long)]
    pub resume: bool,
    /// Write the table as Markdown here (with the command that made it), rewritten as
    /// tasks finish.
    #[arg(long)]
    pub markdown: Option<PathBuf>,
    /// Tasks in flight at once: CPU workers, or workers per GPU (timing stays exclusive; a
    /// task's search and checks wait for their share of the GPU's memory, about three times
    /// the bytes its program moves, all of it for a task estimated at more than half).
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    /// Seconds allowed per worker request (a verification, or a timing phase).
    #[arg(long, default_value_t = 600)]
    pub timeout: u64,
    /// Seconds allowed per task: load, compile, verify and time (waiting for the GPU's
    /// timing turn or its memory is not counted; a task that ran out of memory beside
    /// others is checked again alone with this limit anew). A task past it is recorded as
    /// `timeout`.
    #[arg(long, default_value_t = 900)]
    pub task_timeout: u64,
    /// Start no new task after this many seconds (finished rows are kept: rerun with
    /// --resume); exit status 4 when tasks are left.
    #[arg(long)]
    pub stop_after: Option<u64>,
    #[command(flatten)]
    pub ray: super::ray_arg::RayArgs,
}

fn numeric_prefix(name: &str) -> (u64, String) {
    let n = name
        .split('_')
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(u64::MAX);
    (n, name.to_string())
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string()
}

/// The one progress line of a finished task.
fn progress_line(done: usize, total: usize, row: &Value) -> String {
    let task = row["task"].as_str().unwrap_or("");
    let mut what = detail(row);
    if row["status"] == VERIFIED {
        if let Some(d) = row["drtc_ms"].as_f64() {
            what.push_str(&format!(" (drtc {d:.4} ms"));
            if let Some(s) = row["speedup_vs_eager"].as_f64() {
                what.push_str(&format!(", {s:.2}x eager"));
            }
            if let Some(s) = row["speedup_vs_compile"].as_f64() {
                what.push_str(&format!(", {s:.2}x torch.compile"));
            }
            what.push(')');
        }
        if let Some(e) = row["torch_compile_error"].as_str() {
            what.push_str(&format!(" [torch.compile not timed: {e}]"));
        }
    }
    let line = format!("[{done}/{total}] {task}: {what}");
    if line.chars().count() > 240 {
        line.chars().take(237).collect::<String>() + "..."
    } else {
        line
    }
}

fn write_markdown(path: &Path, rows: &[Value]) -> DriverResult<()> {
    let (table, summary) = render(rows);
    let cmd: Vec<String> = std::env::args().collect();
    let md = format!("Command: `{}`\n\n{table}\n{summary}\n", cmd.join(" "));
    std::fs::write(path, md).map_err(|source| DriverError::Write {
        path: path.display().to_string(),
        source,
    })
}

pub fn run(args: SuiteArgs) -> DriverResult<ExitCode> {
    let device = match args.device {
        Some(super::codegen_args::DeviceArg::Cpu) => DeviceKind::Cpu,
        Some(super::codegen_args::DeviceArg::Cuda) => DeviceKind::Cuda,
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
    if files.is_empty() {
        return Err(DriverError::Reported(if args.filter.is_empty() {
            format!("`{}` has no `.py` programs", args.dir.display())
        } else {
            format!(
                "no `.py` program of `{}` has a name containing {}",
                args.dir.display(),
                args.filter
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            )
        }));
    }
    files.sort_by_key(|p| numeric_prefix(&stem(p)));
    let opts = CompileOptions {
        precision: args.precision.precision(),
        interpret: device == DeviceKind::Cpu,
        simplify: !args.no_simplify,
        layout: args.layout.choice(),
        graphs: args.cuda_graphs.mode(),
        ..Default::default()
    };
    let compile_modes = super::baseline_arg::compile_modes(&args.baseline);
    let search = args.search.scope().filter(|_| device == DeviceKind::Cuda);
    // the GPU model: rows timed on another one never mix into a resumed file
    let gpu = match (device, drtc::verifier::devices::scan()) {
        (DeviceKind::Cuda, DeviceScan::Gpus(gpus)) => gpus.first().map(|g| g.name.clone()),
        _ => None,
    };
    let settings = json!({
        "device": device.name(),
        "gpu": gpu,
        "precision": format!("{:?}", opts.precision).to_lowercase(),
        "torch_precision": args.torch_precision.map_or("default", |p| p.name()),
        "baseline": super::baseline_arg::describe(&compile_modes),
        "compile_budget_s": args.compile_budget,
        "shrink": args.shrink,
        "layout": args.layout.choice().name(),
        "simplify": !args.no_simplify,
        "search": search.map(|s| s.name()).unwrap_or("off"),
        "cuda_graphs": opts.graphs.name(),
        "frontend": args.frontend.name(),
        "jobs": args.jobs.max(1),
    });
    let (mut results, mut rows) = ResultsFile::open(args.json.as_deref(), args.resume, &settings)?;
    let done: HashSet<String> = rows
        .iter()
        .filter_map(|r| r["task"].as_str().map(str::to_string))
        .collect();
    let todo: Vec<PathBuf> = files
        .into_iter()
        .filter(|f| !done.contains(&stem(f)))
        .collect();
    if !done.is_empty() {
        eprintln!(
            "resuming: {} task(s) already in the results, {} to run",
            done.len(),
            todo.len()
        );
    }
    if device == DeviceKind::Cpu
        && (!compile_modes.is_empty()
            || args.torch_precision.is_some()
            || args.search == super::search_arg::SearchArg::Full)
    {
        eprintln!(
            "note: --device cpu: timing, baselines and search need a GPU; the suite verifies \
             only (--baseline, --torch-precision and --search apply on cuda)"
        );
    }
    let home = DrtcHome::from_env();
    let work = home.dir("suite").map_err(runtime_error)?;
    let python = PythonEnv::locate(&home).map_err(runtime_error)?;
    let mut options = PoolOptions::new(device);
    match device {
        DeviceKind::Cpu => options.workers = Some(args.jobs.max(1)),
        DeviceKind::Cuda => options.workers_per_gpu = args.jobs.max(1),
    }
    options.request_timeout = Duration::from_secs(args.timeout);
    options.bench_timeout = Duration::from_secs(args.timeout);
    options.ray = args.ray.config();
    if let Some(n) = args.ray.actors() {
        options.workers = Some(n);
    }
    let pool = super::pool::worker_pool(python, &home, options)?;
    // local GPUs: each task's search and checks reserve their estimate of the memory
    // (`suite_memory.rs`); one budget for all of them (the smallest one's share times their
    // count)
    let budget = match (device, args.ray.actors(), drtc::verifier::devices::scan()) {
        (DeviceKind::Cuda, None, DeviceScan::Gpus(gpus)) if !gpus.is_empty() => {
            let least = gpus.iter().map(|g| g.total_memory_bytes).min().unwrap_or(0);
            Some(MemoryBudget::for_device(
                least.saturating_mul(gpus.len() as u64),
            ))
        }
        _ => None,
    };
    let cx = TaskContext {
        pool: &pool,
        device,
        opts,
        shrink: args.shrink,
        frontend: args.frontend,
        work,
        request_timeout: Duration::from_secs(args.timeout),
        task_timeout: Duration::from_secs(args.task_timeout),
        compile_modes,
        torch_precision: args.torch_precision.map(|p| p.name().to_string()),
        compile_budget: args.compile_budget.map(Duration::from_secs),
        search: search.map(|s| (&home, s)),
        settings,
        memory: budget.as_ref(),
    };
    let bar = ProgressBar::new(todo.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} tasks {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let started = Instant::now();
    let stop_after = args.stop_after.map(Duration::from_secs);
    let next = AtomicUsize::new(0);
    let mut write_error: Option<DriverError> = None;
    let mut finished = 0usize;
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<Value>();
        for _ in 0..pool.size().min(todo.len()) {
            let (tx, next, todo, cx) = (tx.clone(), &next, &todo, &cx);
            scope.spawn(move || loop {
                if stop_after.is_some_and(|s| started.elapsed() >= s) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(file) = todo.get(i) else { break };
                if tx.send(run_task(file, cx)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for row in rx {
            finished += 1;
            if write_error.is_none() {
                if let Err(e) = results.append(&row) {
                    write_error = Some(e);
                }
            }
            let line = progress_line(finished, todo.len(), &row);
            rows.push(row);
            if bar.is_hidden() {
                eprintln!("{line}");
            } else {
                bar.println(line);
            }
            bar.inc(1);
            if let (Some(md), None) = (&args.markdown, &write_error) {
                let mut sorted = rows.clone();
                sorted.sort_by_key(|r| numeric_prefix(r["task"].as_str().unwrap_or("")));
                if let Err(e) = write_markdown(md, &sorted) {
                    write_error = Some(e);
                }
            }
        }
    });
    bar.finish_and_clear();
    if let Some(e) = write_error {
        return Err(e);
    }
    rows.sort_by_key(|r| numeric_prefix(r["task"].as_str().unwrap_or("")));
    let (table, summary) = render(&rows);
    println!("{table}\n{summary}");
    super::ray_arg::print_summary(&pool);
    if let Some(md) = &args.markdown {
        write_markdown(md, &rows)?;
    }
    let left = todo.len() - finished;
    if left > 0 {
        eprintln!(
            "stopped after {:.0} s (--stop-after): {left} task(s) not run; run the same command \
             with --resume to continue",
            started.elapsed().as_secs_f64()
        );
        return Ok(ExitCode::from(EXIT_UNFINISHED));
    }
    Ok(ExitCode::SUCCESS)
}
