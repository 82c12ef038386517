//! `drtc compile`: a PyTorch program (or an IR file) to a verified module of Triton kernels.

use super::codegen_args::{
    BackendArg, CudaGraphsArg, DeviceArg, FallbackArg, GuardArg, PrecisionArg,
};
use super::compile_check::{
    check, graphs_line, memory_line, searched_check, speed_of_light, timings_line, verifying_line,
    CompileChecks, Stages,
};
use super::error::{DriverError, DriverResult};
use super::files::{read_file, write};
use super::pool::runtime_error;
use super::search_arg::SearchArg;
use clap::Args;
use drtc::driver::compile::{compile_graph, CompileOptions};
use drtc::driver::constants::ConstantOverride;
use drtc::driver::frontend::{Frontend, FrontendUsed};
use drtc::driver::input_types::{resampled_inputs_appendix, InputType};
use drtc::driver::load::load_programs_with_types;
use drtc::driver::retry_ladder::climb;
use drtc::driver::roofline::Work;
use drtc::driver::search::{search_compiled, SearchContext};
use drtc::verifier::{DeviceKind, DrtcHome, PoolOptions, PythonEnv, StartPhases, WorkerPool};
use drtc_backends::guard::GuardOptions;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

/// The drtc binary a generated module records for recompiling (this one, absolute).
pub fn this_drtc() -> Option<String> {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok())
        .map(|p| p.display().to_string())
}

#[derive(Args, Debug, Clone)]
#[command(
    about = "Compile a program into one module of fused Triton kernels, verified against PyTorch",
    long_about = concat!(
        "Reads a PyTorch program (a KernelBench file defining `Model`, a seed-format \
program or `.jsonl` of them, or a `.drt` IR file), fuses it into regions, generates a Triton \
kernel per region from drtc's templates (convolutions stay with cuDNN; ops without a template \
are computed with PyTorch and listed in the report), stitches them into one module and, \
unless --no-verify, verifies it against PyTorch on fresh random inputs (under Triton's \
interpreter on CPU, on the GPU when there is one).\n\nThe module checks every call's input \
shapes, dtypes and devices against what its kernels were compiled for (non-contiguous \
inputs are made contiguous); on a mismatch it acts as --guard says. On a GPU it captures its \
forward into CUDA graphs where --cuda-graphs says (default: where the cost rule says they pay) \
and replays one only when every input's and parameter's shape, dtype, strides and data \
pointer, the device and the stream are the ones it was captured with. To recompile it runs \
`drtc compile --input-type ...` with the binary named by $DRTC_BIN, else the absolute path of \
the drtc that wrote it, else `drtc` on PATH.\n\nWith --backend llm a language model \
behind an OpenAI-compatible server (--llm-url, --llm-model) writes --samples candidates per \
region (or for the whole program with --mode whole); each is checked statically, verified in \
an isolated worker and, on a GPU, timed; failed or slow ones get --turns feedback rounds; \
the template kernel is always a candidate and the fastest verified one per region is \
stitched and verified again. The report lists every candidate.\n\nExample:\n  drtc compile \
model.py -o model_triton.py --device cpu --set batch_size=2",
        exit_status_help!()
    )
)]
pub struct CompileArgs {
    /// The program: `model.py` (KernelBench or seed format), `programs.jsonl`, or `graph.drt`.
    pub file: PathBuf,
    /// Where to write the generated module (JSON lines for `.jsonl` input).
    #[arg(short, long)]
    pub output: PathBuf,
    /// The device to verify (and time) on; default: cuda when a GPU is present, else cpu.
    #[arg(long, value_enum)]
    pub device: Option<DeviceArg>,
    /// Write the module without verifying it.
    #[arg(long)]
    pub no_verify: bool,
    /// Print where the time went: compiling, and verifying (loading, the trials, the
    /// float64 truth, the worker's start and the transfers).
    #[arg(long)]
    pub timings: bool,
    /// Bypass the verified-module cache. By default a compile of a program that was
    /// verified before with the same options, device, drtc build and Python environment
    /// returns that module and its report without work (said on stderr, `cache` in the
    /// report), and a new verified module is kept (least recently used evicted).
    #[arg(long)]
    pub no_cache: bool,
    /// Write a JSON report (regions, kernels, fallbacks, verification, timing) here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Override a module-level constant of the program, e.g. `--set batch_size=2` (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<ConstantOverride>,
    /// Cap size constants by name (batch, spatial, channel, matrix dims) so the program runs
    /// quickly on the CPU interpreter; explicit --set values win. A program that no longer
    /// loads is tried with wider spatial caps, then with sizes that were equal kept equal.
    #[arg(long)]
    pub shrink: bool,
    /// For `.jsonl` input: compile only this line (1-based).
    #[arg(long)]
    pub line: Option<usize>,
    /// Which frontend reads a Python program: `native` (drtc's parser of straight-line
    /// programs), `export` (torch.export in drtc's Python environment: whole models with
    /// `if`/`for`, `nn.Sequential`, LSTM/GRU...; ops without an IR form run as reported
    /// PyTorch calls), or `auto`: native when it accepts the program, export otherwise.
    #[arg(long, value_enum, default_value = "auto")]
    pub frontend: Frontend,
    /// Precision policy of fp32 matrix products (also the verifier's value rule).
    #[arg(long, value_enum, default_value = "fp32")]
    pub precision: PrecisionArg,
    /// Most ops fused into one kernel (at least 1).
    #[arg(long, default_value_t = 64, value_parser = super::llm_args::at_least_one)]
    pub max_ops: usize,
    /// Run drtc's e-graph rewrites (canonicalize, simplify) before fusion: the default.
    /// A rewrite is kept only where the fusion plan of the result costs less (memory
    /// traffic, arithmetic and kernel launches of its fused regions).
    #[arg(long, conflicts_with = "no_simplify")]
    pub simplify: bool,
    /// Skip the e-graph rewrites: the program is fused as written.
    #[arg(long)]
    pub no_simplify: bool,
    /// Memory layout of convolutions and the kernels around them; a channels-last module
    /// that fails verification is retried in NCHW (reported).
    #[arg(long, value_enum, default_value = "auto")]
    pub layout: super::layout_arg::LayoutArg,
    /// Test-time search on a GPU: candidates are verified and timed, the fastest verified
    /// one kept and cached (by region, shapes, device, Triton version, precision) under the
    /// drtc home. `quick` (default): GEMM implementations of large regions, small-reduction
    /// convolutions (cuDNN, NCHW cuDNN, drtc's fused template), cooperative rows for
    /// reductions of rows longer than one tile (2^24 elements and more), and CUDA-graph
    /// replay against the eager forward; `full` (also bare `--search`): every kernel's
    /// launch configurations too; `off`. On CPU there is nothing to time: `full` says so,
    /// `quick` does nothing.
    #[arg(long, value_enum, default_value = "quick", num_args = 0..=1,
          require_equals = true, default_missing_value = "full")]
    pub search: super::search_arg::SearchArg,
    /// What the module does when called with inputs its kernels were not compiled for.
    #[arg(long, value_enum, default_value = "recompile")]
    pub guard: GuardArg,
    /// Capture the module's forward into CUDA graphs and replay them (a replay only for
    /// the exact inputs, parameters, strides, data pointers, device and stream it was
    /// captured with; anything else captures again or runs eagerly). On CPU a no-op.
    #[arg(long, value_enum, default_value = "auto")]
    pub cuda_graphs: CudaGraphsArg,
    /// Compile for this activation type instead of what `get_inputs()` gives: one per item
    /// it returns, in order (e.g. `--input-type 'f32[4, 3, 12, 12]'`). Verification draws
    /// inputs of these types from the values `get_inputs()` draws. Module guards use this.
    #[arg(long = "input-type", value_name = "DTYPE[DIMS]")]
    pub input_types: Vec<InputType>,
    /// Who writes the kernels.
    #[arg(long, value_enum, default_value = "template")]
    pub backend: BackendArg,
    /// With --backend llm: what to write when the server cannot be used (unreachable,
    /// unknown model, refused key).
    #[arg(
        long,
        value_enum,
        default_value = "template",
        help_heading = "LLM backend (compile --backend llm, eval)"
    )]
    pub fallback: FallbackArg,
    #[command(flatten)]
    pub llm: super::llm_args::LlmArgs,
}

/// The options that change the module, as the verified-module cache's key sees them:
/// every one but where the outputs go and what is printed.
fn cache_options(args: &CompileArgs) -> String {
    let mut keyed = args.clone();
    keyed.output = Default::default();
    keyed.report = None;
    keyed.timings = false;
    keyed.no_cache = false;
    format!("{keyed:?}")
}

/// A spinner with the elapsed time on stderr while a long phase runs (drawn only on a
/// terminal, and not beside the progress bar of a multi-program compile).
fn phase_spinner(what: &str, show: bool) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let spin = ProgressBar::new_spinner();
    spin.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    spin.set_message(what.to_string());
    spin.enable_steady_tick(std::time::Duration::from_millis(120));
    spin
}

/// The options a module's guard repeats when it compiles the program again.
pub(super) fn recompile_args(args: &CompileArgs) -> Vec<String> {
    let mut v = vec![
        "--precision".to_string(),
        match args.precision {
            PrecisionArg::Fp32 => "fp32",
            PrecisionArg::Tf32 => "tf32",
            PrecisionArg::Ieee => "ieee",
        }
        .to_string(),
        "--max-ops".to_string(),
        args.max_ops.to_string(),
        "--frontend".to_string(),
        args.frontend.name().to_string(),
    ];
    if args.no_simplify {
        v.push("--no-simplify".into());
    }
    if args.layout != super::layout_arg::LayoutArg::Auto {
        v.push("--layout".into());
        v.push(args.layout.choice().name().into());
    }
    v
}

/// The device `drtc compile` runs on and its compile options (the guards' reference source
/// is filled in per program).
pub(super) fn device_and_options(args: &CompileArgs) -> (DeviceKind, CompileOptions) {
    let device = match args.device {
        Some(DeviceArg::Cpu) => DeviceKind::Cpu,
        Some(DeviceArg::Cuda) => DeviceKind::Cuda,
        None => DeviceKind::detect(),
    };
    let opts = CompileOptions {
        precision: args.precision.precision(),
        interpret: device == DeviceKind::Cpu,
        fuse: drtc_passes::fuse::FuseOptions {
            max_ops: args.max_ops,
        },
        simplify: !args.no_simplify,
        guard: GuardOptions {
            mode: args.guard.mode(),
            drtc_bin: this_drtc(),
            compile_args: recompile_args(args),
            reference_source: None,
        },
        layout: args.layout.choice(),
        graphs: args.cuda_graphs.mode(),
        keep_transposed: false,
    };
    (device, opts)
}

/// One line on a program the export frontend read: its opaque ATen calls and notes.
fn export_summary(prog: &drtc::driver::load::LoadedProgram) -> String {
    let mut s = String::from("read with the export frontend (torch.export)");
    if !prog.library_calls.is_empty() {
        let calls: Vec<String> = prog
            .library_calls
            .iter()
            .map(|c| match c.line {
                Some(l) => format!("{} (line {l})", c.target),
                None => c.target.clone(),
            })
            .collect();
        s.push_str(&format!(
            "; library ops run by PyTorch: {}",
            calls.join(", ")
        ));
    }
    for n in &prog.notes {
        s.push_str(&format!("\nnote: {n}"));
    }
    s
}

/// Refuses the LLM backend's options given with the template backend: they would do
/// nothing.
pub fn refuse_llm_options(matches: &clap::ArgMatches) -> DriverResult<()> {
    let mut given = super::llm_args::LlmArgs::given(matches);
    if matches.value_source("fallback") == Some(clap::parser::ValueSource::CommandLine) {
        given.push("--fallback".into());
    }
    if given.is_empty() {
        return Ok(());
    }
    let (what, it) = if given.len() == 1 {
        ("is an option", "it")
    } else {
        ("are options", "them")
    };
    Err(DriverError::Reported(format!(
        "{} {what} of --backend llm and would do nothing with the template backend: add \
         --backend llm or drop {it}",
        given.join(", ")
    )))
}

/// The template backend.
pub fn run_template(args: CompileArgs) -> DriverResult<ExitCode> {
    let contents = read_file(&args.file)?;
    let overrides = drtc::driver::shrink::merged_overrides(&contents, &args.set, args.shrink);
    super::overrides::say_overrides(&overrides, &args.set);
    let multi = args.file.extension().is_some_and(|e| e == "jsonl");
    if multi && !args.input_types.is_empty() && args.line.is_none() {
        return Err(DriverError::Reported(
            "--input-type applies to one program: give --line with a .jsonl file".into(),
        ));
    }
    let (device, opts) = device_and_options(&args);
    let home = DrtcHome::from_env();
    if args.search == SearchArg::Full && args.no_verify {
        return Err(DriverError::Reported(
            "--search verifies and times candidates: drop --no-verify".into(),
        ));
    }
    if args.cuda_graphs == CudaGraphsArg::On && device == DeviceKind::Cpu {
        eprintln!(
            "note: --cuda-graphs on is a no-op on cpu (the Triton interpreter has no CUDA \
             graphs); the module runs its kernels eagerly"
        );
    }
    let cached = super::compile_cache::for_compile(
        !args.no_cache && !args.no_verify && !multi,
        &cache_options(&args),
        &args.file,
        &contents,
        device,
        &home,
    );
    if let Some(hit) = cached.as_ref().and_then(|c| c.hit().map(|h| (c, h))) {
        let (cache, entry) = hit;
        return Ok(super::exit::verified(cache.answer(
            &entry,
            &args.output,
            args.report.as_deref(),
        )));
    }
    let search_on = args
        .search
        .scope()
        .filter(|_| device == DeviceKind::Cuda && !args.no_verify);
    if args.search == SearchArg::Full && device != DeviceKind::Cuda {
        eprintln!(
            "note: timing and --search need a CUDA GPU; on {} the module is only verified \
             (with the precision policy's default choices)",
            device.name()
        );
    }
    // The workers start (or the service is reached) while the front end reads the
    // programs: torch.export takes seconds, so does a cold worker (its exit is tied to
    // this process's when a front-end error returns first).
    let pool_start = (!args.no_verify).then(|| {
        let home = home.clone();
        std::thread::spawn(move || -> DriverResult<(WorkerPool, Option<StartPhases>)> {
            let python = PythonEnv::locate(&home).map_err(runtime_error)?;
            let mut options = PoolOptions::new(device);
            if search_on.is_some() {
                options.workers_per_gpu = drtc::driver::search_context::SEARCH_WORKERS_PER_GPU;
            }
            let pool = super::pool::worker_pool(python, &home, options)?;
            // a worker that fails to start is reported by the first verification
            let started = pool.warm_up_next().ok();
            let phases = started.as_ref().and_then(StartPhases::of_ready);
            Ok((pool, phases))
        })
    });
    let types: Vec<drtc_ir::TensorType> = args.input_types.iter().map(|t| t.0.clone()).collect();
    let frontend_started = std::time::Instant::now();
    // a single program that no longer loads shrunk tries the shrink's fallbacks (wider
    // spatial caps, sizes that coincide kept equal)
    let load = |o: &[drtc::driver::constants::ConstantOverride]| {
        let v = load_programs_with_types(
            &args.file,
            &contents,
            o,
            args.line,
            (!types.is_empty()).then_some(types.as_slice()),
            args.frontend,
        )?;
        match v.iter().find_map(|p| p.as_ref().err()) {
            Some(e) if !multi => Err(e.message.clone()),
            _ => Ok(v),
        }
    };
    let (programs, used) = drtc::driver::shrink::load_with_fallbacks(
        &contents,
        &overrides,
        &args.set,
        args.shrink && !multi,
        load,
    );
    if used != overrides {
        super::overrides::say_fallback(&used);
    }
    let overrides = used;
    let programs = programs.map_err(DriverError::Reported)?;
    let frontend_time = frontend_started.elapsed();
    let waited = std::time::Instant::now();
    let (pool, worker_start) = match pool_start {
        None => (None, None),
        Some(start) => {
            let (pool, phases) = start.join().map_err(|_| {
                DriverError::Failed("internal error: the worker pool's start panicked".into())
            })??;
            (Some(pool), phases)
        }
    };
    let pool_wait = waited.elapsed();
    let work = home.dir("compile").map_err(runtime_error)?;
    let bar = if multi {
        let b = ProgressBar::new(programs.len() as u64);
        b.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} programs {msg} [{elapsed}]")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let mut lines = vec![];
    let mut failures = 0usize;
    let mut last_report = json!({});
    for (i, p) in programs.into_iter().enumerate() {
        let mut entry = json!({});
        let ok = match p {
            Err(e) => {
                entry = json!({"name": e.name, "line": e.line, "ok": false, "error": e.message});
                if !multi {
                    return Err(DriverError::Reported(e.message));
                }
                false
            }
            Ok(mut prog) => {
                let mut popts = opts.clone();
                popts.guard.reference_source = prog.reference_source.clone();
                if !args.input_types.is_empty() {
                    // verification draws inputs of the compiled types
                    if let Some(r) = prog.reference_source.as_mut() {
                        r.push_str(&resampled_inputs_appendix(&args.input_types));
                    }
                }
                let frontend = prog.frontend_json();
                if !multi && prog.frontend == FrontendUsed::Export {
                    eprintln!("{}", export_summary(&prog));
                }
                let graph = std::mem::replace(&mut prog.graph, drtc_ir::Graph::new("moved"));
                let program_work = Work::of(&graph);
                let mut compiled =
                    compile_graph(graph, &prog.form, &popts).map_err(DriverError::Reported)?;
                let mut search_log = vec![];
                let mut searched = None;
                let mut stages = Stages {
                    frontend: frontend_time,
                    pool_wait,
                    worker_start,
                    compile: compiled.elapsed,
                    search: None,
                };
                if let (Some(scope), Some(pool), Some(reference)) =
                    (search_on, &pool, &prog.reference_source)
                {
                    let ref_path = work.join(format!("search_ref_{}_{i}.py", std::process::id()));
                    write(&ref_path, reference)?;
                    let cx = SearchContext::in_home(
                        pool,
                        &home,
                        &ref_path,
                        opts.precision.rule(),
                        scope,
                    )
                    .map_err(DriverError::Reported)?;
                    let spin =
                        phase_spinner("searching (racing implementations on the GPU)", !multi);
                    let search_started = std::time::Instant::now();
                    let outcome = search_compiled(&mut compiled, &prog.form, &popts, &cx);
                    stages.search = Some(search_started.elapsed());
                    spin.finish_and_clear();
                    for l in &outcome.log {
                        eprintln!("search: {l}");
                    }
                    search_log = outcome.log;
                    searched = cx.benched(&compiled.module.source);
                    let _ = std::fs::remove_file(&ref_path);
                }
                let candidate = if multi {
                    work.join(format!("candidate_{}_{i}.py", std::process::id()))
                } else {
                    args.output.clone()
                };
                write(&candidate, &compiled.module.source)?;
                let fallbacks = compiled.module.fallback_ops();
                if !multi {
                    eprintln!(
                        "wrote {} ({}, {}{}); compiled in {:.1} ms",
                        candidate.display(),
                        super::words::plural(compiled.module.kernel_count(), "kernel"),
                        super::words::plural(compiled.module.regions.len(), "region"),
                        if fallbacks.is_empty() {
                            String::new()
                        } else {
                            format!("; computed with PyTorch: {}", fallbacks.join(", "))
                        },
                        compiled.elapsed.as_secs_f64() * 1e3
                    );
                    if device == DeviceKind::Cuda {
                        let g = &compiled.module.graphs;
                        eprintln!(
                            "CUDA graphs: {} ({})",
                            if g.enabled { "on" } else { "off" },
                            g.reason
                        );
                    }
                }
                let mut ok = true;
                let mut checked = None;
                if let (Some(pool), Some(reference)) = (&pool, &prog.reference_source) {
                    let ref_path = work.join(format!("reference_{}_{i}.py", std::process::id()));
                    write(&ref_path, reference)?;
                    if !multi {
                        eprintln!("{}", verifying_line(device));
                    }
                    let spin = phase_spinner("verifying", !multi);
                    let first = match &searched {
                        Some(b) => searched_check(b),
                        None => check(pool, device, &ref_path, &candidate, opts.precision),
                    };
                    spin.finish_and_clear();
                    // a failed module climbs the retry ladder (the one `drtc suite` and
                    // Python's compile climb too)
                    // the rungs' search context (a device scan and a Python query) only
                    // when they run
                    let search_cx = match search_on.filter(|_| first.0.failed()) {
                        Some(scope) => Some(
                            SearchContext::in_home(
                                pool,
                                &home,
                                &ref_path,
                                opts.precision.rule(),
                                scope,
                            )
                            .map_err(DriverError::Reported)?,
                        ),
                        None => None,
                    };
                    let mut checks = CompileChecks {
                        pool,
                        device,
                        reference: &ref_path,
                        candidate: &candidate,
                        precision: opts.precision,
                    };
                    let climbed = climb(
                        &mut compiled,
                        &prog.form,
                        &mut popts,
                        first,
                        &mut checks,
                        search_cx.as_ref(),
                    )
                    .map_err(DriverError::Failed)?;
                    for r in &climbed.retries {
                        for l in &r.search {
                            eprintln!("search: {l}");
                        }
                        eprintln!("{}", r.note);
                    }
                    let v = climbed.report;
                    ok = climbed.verdict.verified;
                    let sol = speed_of_light(&program_work, &v, popts.precision);
                    if !multi {
                        match (ok, v["speedup"].as_f64()) {
                            (true, Some(s)) => eprintln!(
                                "verified on {}; eager {:.4} ms, drtc {:.4} ms: {s:.2}x",
                                device.name(),
                                v["eager_ms"].as_f64().unwrap_or(0.0),
                                v["drtc_ms"].as_f64().unwrap_or(0.0)
                            ),
                            (true, None) => eprintln!("verified on {}", device.name()),
                            (false, _) => {
                                eprintln!("NOT verified on {}:", device.name());
                                for r in v["reasons"].as_array().into_iter().flatten() {
                                    eprintln!("  {}", r.as_str().unwrap_or_default());
                                }
                            }
                        }
                        if let Some(line) = memory_line(&v) {
                            eprintln!("{line}");
                        }
                        if let Some(line) = graphs_line(&v) {
                            eprintln!("{line}");
                        }
                        if let Some(sol) = sol.as_ref().filter(|_| ok) {
                            eprintln!(
                                "speed of light {:.4} ms ({}-bound on the measured limits): \
                                 drtc reaches {:.0}% of it",
                                sol["time_ms"].as_f64().unwrap_or(0.0),
                                sol["bound"].as_str().unwrap_or("?"),
                                100.0 * sol["fraction_drtc"].as_f64().unwrap_or(0.0)
                            );
                        }
                        if args.timings {
                            eprintln!("{}", timings_line(&stages, &v));
                        }
                    }
                    checked = Some((v, sol, climbed.retries));
                    let _ = std::fs::remove_file(&ref_path);
                }
                entry = compiled.report_json();
                if search_on.is_some() {
                    entry["search"] = json!(search_log);
                }
                entry["timings"] = stages.to_json();
                entry["overrides"] = json!(drtc::driver::constants::described(&overrides));
                entry["name"] = json!(prog.name);
                entry["line"] = json!(prog.line);
                entry["frontend"] = frontend;
                if let Some((v, sol, retries)) = checked {
                    if !retries.is_empty() {
                        entry["retries"] = json!(retries);
                    }
                    if let Some(sol) = sol {
                        entry["speed_of_light"] = sol;
                    }
                    entry["verification"] = v;
                }
                if multi {
                    entry["module"] = json!(compiled.module.source);
                    let _ = std::fs::remove_file(&candidate);
                }
                entry["ok"] = json!(ok);
                ok
            }
        };
        if !ok {
            failures += 1;
        }
        bar.inc(1);
        bar.set_message(format!("({failures} failed)"));
        lines.push(entry.to_string());
        last_report = entry;
    }
    bar.finish();
    if multi {
        write(&args.output, &(lines.join("\n") + "\n"))?;
        eprintln!(
            "compiled {} programs, {} failed; results in {}",
            lines.len(),
            failures,
            args.output.display()
        );
    }
    if let (Some(cache), 0) = (&cached, failures) {
        cache.store(&args.output, &last_report);
    }
    if let Some(path) = &args.report {
        let report = if multi {
            json!({"programs": lines.len(), "failed": failures})
        } else {
            last_report
        };
        write(
            path,
            &serde_json::to_string_pretty(&report).unwrap_or_default(),
        )?;
    }
    Ok(super::exit::verified(failures == 0))
}
