//! `drtc eval`: measures a kernel model over a benchmark (a KernelBench folder or a seed
//! `.jsonl`): pass@1, pass@k, fast_p and the geomean speedup against eager (and
//! torch.compile with `--baseline compile`), per-op success, tokens and time. Results go
//! to a JSON-lines file as each task finishes, so an interrupted run resumes (`--resume`).

use super::codegen_args::DeviceArg;
use super::error::{DriverError, DriverResult};
use super::files::read_file;
use super::files::write;
use super::llm_args::{program_dtype, LlmArgs};
use super::ray_arg::{print_summary, RayArgs};
use clap::{Args, ValueEnum};
use drtc::driver::compile::CompileOptions;
use drtc::driver::constants::apply_overrides;
use drtc::driver::constants::ConstantOverride;
use drtc::driver::llm::eval::{eval_program, eval_unlowered};
use drtc::driver::llm::metrics::{markdown, summarize, TaskResult};
use drtc::driver::llm::{parallel_map, LlmContext};
use drtc::driver::load::{load_programs, LoadedProgram};
use drtc::verifier::DeviceKind;
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BaselineArg {
    /// PyTorch eager.
    Eager,
    /// Eager and torch.compile (default mode), timed in the same run.
    Compile,
}

#[derive(Args, Debug)]
#[command(
    about = "Evaluate a kernel-writing language model over a benchmark (pass@k, fast_p)",
    long_about = concat!(
        "Asks the model for --samples candidates per task (in region \
mode: per region, stitched per sample), checks and verifies every candidate in the \
runtime's isolated workers and, on a GPU, times the verified ones against the eager \
reference (and torch.compile with --baseline compile). Writes one JSON line per task and \
prints accuracy (pass@1), pass@k (unbiased estimator), fast_p for p in 1, 1.2, 1.5, 2, the \
geomean speedup (unsolved tasks count 1.0), per-op success rates and token and time \
totals. On --device cpu candidates are verified under Triton's interpreter and speed is \
not measured.\n\nExample:\n  drtc eval ../shared/kernelbench/level1 --llm-url \
http://127.0.0.1:8000/v1 --llm-model my-model --samples 4 --mode whole -o results.jsonl \
--markdown table.md",
        exit_status_help!()
    )
)]
pub struct EvalArgs {
    /// A KernelBench folder (every `.py` file is a task) or a seed `.jsonl` file.
    pub bench: PathBuf,
    /// Results, one JSON line per task.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Also write the summary as a markdown table here.
    #[arg(long)]
    pub markdown: Option<PathBuf>,
    /// Skip tasks already in the output file (and append to it).
    #[arg(long)]
    pub resume: bool,
    /// Where to verify (and time); default: cuda when a GPU is present, else cpu.
    #[arg(long, value_enum)]
    pub device: Option<DeviceArg>,
    /// The speed references.
    #[arg(long, value_enum, default_value = "eager")]
    pub baseline: BaselineArg,
    /// Only the first N tasks.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Override a module-level constant of every program (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<ConstantOverride>,
    /// Cap size constants by name, for quick runs on the CPU interpreter.
    #[arg(long)]
    pub shrink: bool,
    #[command(flatten)]
    pub llm: LlmArgs,
    #[command(flatten)]
    pub ray: RayArgs,
}

/// The tasks of a benchmark: every `.py` of a folder (sorted), or every `.jsonl` line.
/// A task drtc's frontend could not lower: its name, the reason, and (for a `.py` file)
/// the source with the overrides applied, which whole mode can still evaluate.
struct Unlowered {
    name: String,
    message: String,
    source: Option<String>,
}

fn load_tasks(args: &EvalArgs) -> DriverResult<Vec<Result<LoadedProgram, Unlowered>>> {
    let files: Vec<PathBuf> = if args.bench.is_dir() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&args.bench)
            .map_err(|source| DriverError::Read {
                path: args.bench.display().to_string(),
                source,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "py"))
            .collect();
        v.sort();
        v
    } else {
        vec![args.bench.clone()]
    };
    let mut out = vec![];
    for f in files {
        let contents = read_file(&f)?;
        let mut ov = vec![];
        if args.shrink && f.extension().is_some_and(|e| e == "py") {
            ov = drtc::driver::shrink::shrink_overrides(&contents);
        }
        for o in &args.set {
            ov.retain(|a: &ConstantOverride| a.name != o.name);
            ov.push(o.clone());
        }
        let loaded = load_programs(&f, &contents, &ov, None).map_err(DriverError::Reported)?;
        let source = f
            .extension()
            .is_some_and(|e| e == "py")
            .then(|| apply_overrides(&contents, &ov).ok())
            .flatten();
        out.extend(loaded.into_iter().map(|p| {
            p.map_err(|e| Unlowered {
                name: e.name,
                message: e.message,
                source: source.clone(),
            })
        }));
    }
    Ok(out)
}

fn read_results(path: &Path) -> Vec<TaskResult> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// A task not yet judged (taken once by a thread).
type Pending = Mutex<Option<Result<LoadedProgram, Unlowered>>>;

/// Where finished tasks go: the results file, in the order tasks finish.
struct Sink {
    file: std::fs::File,
    solved: usize,
    /// The first write that failed (the run stops with it once the tasks in flight end).
    error: Option<std::io::Error>,
}

fn task_name(t: &Result<LoadedProgram, Unlowered>) -> &str {
    match t {
        Ok(p) => &p.name,
        Err(u) => &u.name,
    }
}

/// Tasks judged at once: enough that `workers` verification workers are busy when each
/// task brings `samples` answers, and one more with several workers, whose answers take
/// the workers that a task's quicker answers free while its slowest one is still checked
/// (reward_breakdown tables: a task's answers are timed one after another).
fn tasks_at_once(workers: usize, samples: usize) -> usize {
    workers.div_ceil(samples.max(1)).max(1) + usize::from(workers > 1)
}

pub fn run(args: EvalArgs) -> DriverResult<ExitCode> {
    let device = match args.device {
        Some(DeviceArg::Cpu) => DeviceKind::Cpu,
        Some(DeviceArg::Cuda) => DeviceKind::Cuda,
        None => DeviceKind::detect(),
    };
    args.llm.preflight()?;
    let mut tasks = load_tasks(&args)?;
    if let Some(n) = args.limit {
        tasks.truncate(n);
    }
    let done: BTreeSet<String> = if args.resume {
        read_results(&args.output)
            .into_iter()
            .map(|r| r.task)
            .collect()
    } else {
        BTreeSet::new()
    };
    let dtype = tasks
        .iter()
        .find_map(|t| t.as_ref().ok())
        .map_or("float32".to_string(), |p| program_dtype(&p.graph));
    let mut setup = args
        .llm
        .setup(device, &dtype, args.ray.config(), args.ray.actors())?;
    setup.settings.compile_baseline = args.baseline == BaselineArg::Compile;
    // whole tasks at once, so that every worker has an answer to verify when --jobs
    // exceeds a task's samples (each task still asks for its samples at once)
    let skipped = tasks.iter().filter(|t| done.contains(task_name(t))).count();
    let at_once = tasks_at_once(setup.pool.size(), setup.settings.samples)
        .min((tasks.len() - skipped).max(1));
    eprintln!(
        "verifying up to {} answer(s) at once on {} (--jobs), each in its own sandboxed \
         process; {} task(s) at a time",
        setup.pool.size(),
        device.name(),
        at_once
    );
    let cx = LlmContext::new(
        &setup.client,
        &setup.checker,
        &setup.pool,
        &setup.settings,
        setup.work.clone(),
    );
    let opts = CompileOptions {
        interpret: device == DeviceKind::Cpu,
        ..Default::default()
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(args.resume)
        .write(true)
        .truncate(!args.resume)
        .open(&args.output)
        .map_err(|source| DriverError::Write {
            path: args.output.display().to_string(),
            source,
        })?;
    // an interrupted run may have left half a line: start on a fresh one
    if args.resume
        && std::fs::read(&args.output).is_ok_and(|b| !b.is_empty() && !b.ends_with(b"\n"))
    {
        writeln!(file).map_err(|source| DriverError::Write {
            path: args.output.display().to_string(),
            source,
        })?;
    }
    let bar = ProgressBar::new(tasks.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} tasks {msg} [{elapsed}<{eta}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.inc(skipped as u64);
    let pending: Vec<Pending> = tasks
        .into_iter()
        .filter(|t| !done.contains(task_name(t)))
        .map(|t| Mutex::new(Some(t)))
        .collect();
    let sink = Mutex::new(Sink {
        file,
        solved: 0,
        error: None,
    });
    parallel_map(at_once, &pending, |slot| {
        let Some(t) = slot.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            return;
        };
        let result = match t {
            Ok(mut prog) => {
                bar.set_message(prog.name.clone());
                eval_program(&cx, &mut prog, &opts, &bar)
            }
            Err(u) => match (&u.source, setup.settings.mode) {
                // the model is judged against PyTorch running the source itself
                (Some(src), drtc_llm::PromptMode::Whole) => {
                    bar.set_message(u.name.clone());
                    let note = format!("drtc's frontend could not lower it: {}", u.message);
                    eval_unlowered(&cx, &u.name, src, &note)
                }
                _ => TaskResult {
                    task: u.name,
                    ops: vec![],
                    samples: vec![],
                    error: Some(u.message),
                    prompt_tokens: 0,
                    completion_tokens: 0,
                    request_ms: 0.0,
                    wall_ms: 0.0,
                    candidates: vec![],
                },
            },
        };
        let mut sink = sink.lock().unwrap_or_else(|p| p.into_inner());
        sink.solved += usize::from(result.solved());
        let line = serde_json::to_string(&result).unwrap_or_default();
        if let Err(e) = writeln!(sink.file, "{line}").and_then(|_| sink.file.flush()) {
            sink.error.get_or_insert(e);
        }
        bar.inc(1);
        bar.set_message(format!("({} solved)", sink.solved));
    });
    if let Some(source) = sink.into_inner().unwrap_or_else(|p| p.into_inner()).error {
        return Err(DriverError::Write {
            path: args.output.display().to_string(),
            source,
        });
    }
    bar.finish_and_clear();
    let all = read_results(&args.output);
    let summary = summarize(&all);
    let title = format!(
        "{} on {} ({} mode, {} samples, {})",
        setup.client.options().model,
        args.bench.display(),
        match setup.settings.mode {
            drtc_llm::PromptMode::Regions => "regions",
            drtc_llm::PromptMode::Whole => "whole",
        },
        setup.settings.samples,
        device.name()
    );
    let md = markdown(&summary, &title);
    print!("{md}");
    print_summary(&setup.pool);
    if skipped > 0 {
        eprintln!(
            "resumed: {skipped} task(s) already in {}",
            args.output.display()
        );
    }
    if let Some(path) = &args.markdown {
        write(path, &md)?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::tasks_at_once;

    #[test]
    fn tasks_at_once_fills_the_workers() {
        assert_eq!(tasks_at_once(4, 4), 2);
        assert_eq!(tasks_at_once(8, 4), 3);
        assert_eq!(tasks_at_once(5, 4), 3);
        assert_eq!(tasks_at_once(4, 1), 5);
        assert_eq!(tasks_at_once(1, 8), 1);
        assert_eq!(tasks_at_once(1, 1), 1);
        assert_eq!(tasks_at_once(3, 0), 4);
    }
}
