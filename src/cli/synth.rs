//! `drtc synth`: synthesizes seed-format programs with CP-SAT, validates them in PyTorch,
//! and writes one JSON line per program with its metadata.

use super::error::{DriverError, DriverResult};
use clap::{Args, ValueEnum};
pub use drtc::driver::synth::ValidateMode;
use drtc::driver::synth::{
    parse_count, record, run_synthesis_into, RunBudget, RunSpec, RunStats, SynthSettings,
};
use drtc_cpsat::CpSat;
use drtc_ir::Op;
use drtc_synth::{flop_floor, Diversity, Selection, SynthOptions};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum SelectionArg {
    Uniform,
    Coverage,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum DiversityArg {
    Hints,
    RandomHalf,
    Both,
    SeedOnly,
}

#[derive(Args, Debug)]
#[command(
    about = "Synthesize valid, diverse PyTorch programs (seed format) with CP-SAT",
    long_about = concat!(
        "Draws op sequences (--ops or --level, from --op-set), wires them, solves shapes and parameters with CP-SAT inside the --flops range, rebuilds every program with the IR builder and verifier, checks with the range analysis that it stays finite and (--validate cpu) runs it in PyTorch on --trials input seeds. Writes one JSON line per program: the seed-format `pytorch` source and its ops, shapes and FLOPs. The same --seed and options give the same programs.\n\nExample:\n  drtc synth --ops 3 --count 100 -o synth.jsonl",
        exit_status_help!()
    )
)]
pub struct SynthArgs {
    /// Ops per program.
    #[arg(long, conflicts_with = "level")]
    pub ops: Option<usize>,
    /// The seed's difficulty level 0..4 (= 1, 2, 3, 5, 10 ops).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=4))]
    pub level: Option<u8>,
    /// Number of programs.
    #[arg(long, default_value_t = 100)]
    pub count: usize,
    /// Run seed: the same seed and options give the same programs.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Total FLOPs range `MIN..MAX`; numbers may be written `2^34` or `1e9`.
    #[arg(long, default_value = "2^34..2^35")]
    pub flops: String,
    /// Bound on the elements of all tensors together (default: 4 x 2^30, scaled down
    /// to 4 x the FLOP maximum for small programs).
    #[arg(long)]
    pub max_elements: Option<u64>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// How each program is proved valid and finite before it is kept. `auto`: on a GPU
    /// when one is visible, every program runs there; on the CPU, programs within
    /// `--run-max-elements`/`--run-max-flops` run (errors, wrong shapes or dtypes and NaN/Inf
    /// reject), larger ones run on PyTorch's meta device (every call, shape and dtype at full
    /// size, no memory) and are proved finite by the interval analysis. `meta`: that for
    /// every program; `cpu`/`cuda`: every program runs at full size; `none`: no check
    /// beyond the range analysis made while solving.
    #[arg(long, value_enum, default_value = "auto")]
    pub validate: ValidateMode,
    /// Validation runs each program on the inputs of this many seeds (0, 1, ...).
    #[arg(long, default_value_t = 5)]
    pub trials: usize,
    /// `--validate auto` runs a program on the CPU only when all its tensors together hold
    /// at most this many elements.
    #[arg(long, default_value = "2^24")]
    pub run_max_elements: String,
    /// ... and it has at most this many FLOPs.
    #[arg(long, default_value = "2^28")]
    pub run_max_flops: String,
    /// How ops are chosen: uniform draws, or coverage (every op at 1 op, every ordered
    /// pair at 2 ops, balanced frequencies beyond).
    #[arg(long, value_enum, default_value = "uniform")]
    pub selection: SelectionArg,
    /// The op set: `a` (DRTriton's list), `ab` (plus KernelBench additions), or a
    /// comma-separated list of op names.
    #[arg(long, default_value = "a")]
    pub op_set: String,
    /// How CP-SAT is pushed towards varied solutions.
    #[arg(long, value_enum, default_value = "both")]
    pub diversity: DiversityArg,
    /// Per-solve time limit in seconds.
    #[arg(long, default_value_t = 1.0)]
    pub time_limit: f64,
    /// Rounds of replacement for programs that failed or were rejected.
    #[arg(long, default_value_t = 5)]
    pub retries: usize,
    /// Output file (JSON lines), written chunk by chunk as programs are kept.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Programs per chunk: each chunk is synthesized, validated and written before the
    /// next.
    #[arg(long, default_value_t = 64)]
    pub chunk: usize,
    /// Hide the progress (a bar on a terminal, else a line every `--progress-every`
    /// seconds).
    #[arg(long)]
    pub quiet: bool,
    /// Seconds between progress lines when stderr is not a terminal.
    #[arg(long, default_value_t = 10.0)]
    pub progress_every: f64,
    /// Synthesize on a Ray cluster's CPU actors: `local` (a cluster of drtc's own on this
    /// machine, --jobs CPUs, default all cores), `auto` (RAY_ADDRESS or a running local
    /// head, else local) or a cluster address. Each actor runs this drtc binary (it must
    /// exist at the same path on every node, with drtc's Python) on one --chunk of
    /// indices at a time, with one thread, and the chunks come back to be written in
    /// index order: the programs are exactly those of a local run with the same options.
    /// An actor that dies is replaced and its chunk run again once; the run ends with
    /// each actor's throughput.
    #[arg(long, value_name = "auto|local|ADDRESS")]
    pub ray: Option<drtc::verifier::RayTarget>,
    /// Only this chunk, with its records and then the run's totals as JSON lines on
    /// stdout (one shard of a `--ray` run; -o is not written).
    #[arg(long, hide = true, conflicts_with = "ray")]
    pub shard: Option<usize>,
}

impl SynthArgs {
    /// The synthesizer options these arguments ask for.
    pub fn options(&self) -> DriverResult<SynthOptions> {
        SynthSettings {
            ops: self.ops,
            level: self.level,
            flops: self.flops.clone(),
            max_elements: self.max_elements,
            op_set: self.op_set.clone(),
            selection: match self.selection {
                SelectionArg::Uniform => Selection::Uniform,
                SelectionArg::Coverage => Selection::Coverage,
            },
            diversity: match self.diversity {
                DiversityArg::Hints => Diversity::Hints,
                DiversityArg::RandomHalf => Diversity::RandomHalf,
                DiversityArg::Both => Diversity::Both,
                DiversityArg::SeedOnly => Diversity::SeedOnly,
            },
            time_limit: self.time_limit,
        }
        .options()
        .map_err(DriverError::Reported)
    }
}

/// Checks, before solving, that the op set can meet the FLOP floor; returns the one line
/// naming the ops a floor excludes, if any.
pub fn check_floor(o: &SynthOptions) -> DriverResult<Option<String>> {
    let Some(floor) = flop_floor(o) else {
        return Ok(None);
    };
    let names = |ops: &[Op]| {
        ops.iter()
            .map(|op| op.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if floor.carriers.is_empty() {
        return Err(DriverError::Reported(format!(
            "no op of the op set has FLOPs ({}), so no program can reach the FLOP minimum \
             of {}; lower it (--flops 0..{}) or add ops with arithmetic to --op-set",
            names(&floor.excluded),
            o.flops.0,
            o.flops.1
        )));
    }
    if floor.excluded.is_empty() {
        return Ok(None);
    }
    let how = if o.ops == 1 {
        "not drawn"
    } else {
        "drawn only beside an op that has FLOPs"
    };
    Ok(Some(format!(
        "the FLOP minimum {} excludes {} op{} without FLOPs ({how}): {}",
        o.flops.0,
        floor.excluded.len(),
        if floor.excluded.len() == 1 { "" } else { "s" },
        names(&floor.excluded)
    )))
}

/// The options, after saying what the FLOP floor excludes (not in a shard's run).
pub fn checked_options(args: &SynthArgs) -> DriverResult<SynthOptions> {
    let o = args.options()?;
    if args.shard.is_none() {
        if let Some(line) = check_floor(&o)? {
            eprintln!("{line}");
        }
    }
    Ok(o)
}

/// A local run (`--ray` runs go to `synth_ray.rs`).
pub fn run(args: SynthArgs) -> DriverResult<ExitCode> {
    let o = checked_options(&args)?;
    let cp = CpSat::load().map_err(|e| DriverError::Reported(e.to_string()))?;
    if let Some(j) = args.jobs {
        // an error here means a pool already exists, which is fine
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(j.max(1))
            .build_global();
    }
    let terminal = std::io::stderr().is_terminal();
    let bar = if args.quiet || !terminal {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(args.count as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {per_sec} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    };
    let t0 = Instant::now();
    let budget = RunBudget {
        elements: parse_count(&args.run_max_elements).map_err(DriverError::Reported)?,
        flops: parse_count(&args.run_max_flops).map_err(DriverError::Reported)?,
    };
    let spec = RunSpec {
        trials: args.trials,
        retries: args.retries,
        budget,
        chunk: args.chunk,
        shard: args.shard,
        ..RunSpec::new(args.count, args.seed, args.validate)
    };
    if args.shard.is_some() {
        return run_shard(&cp, &o, spec, args.seed);
    }
    let write_error = |source| DriverError::Write {
        path: args.output.display().to_string(),
        source,
    };
    let file = std::fs::File::create(&args.output).map_err(write_error)?;
    let mut w = std::io::BufWriter::new(file);
    let mut distinct = std::collections::HashSet::new();
    let mut lines = ProgressLines {
        every: Duration::from_secs_f64(args.progress_every.max(0.0)),
        last: Instant::now(),
        on: !args.quiet && !terminal,
    };
    let run = run_synthesis_into(&cp, &o, spec, &bar, &mut |kept, stats| {
        for p in kept {
            distinct.insert(p.hash);
            writeln!(w, "{}", record(p, args.seed)).map_err(|e| e.to_string())?;
        }
        // a row is on disk once its chunk is done
        w.flush().map_err(|e| e.to_string())?;
        lines.tick(stats, args.count, t0, false);
        Ok(())
    });
    bar.finish_and_clear();
    let (stats, _) = run.map_err(|e| {
        DriverError::Reported(format!(
            "{e}\n(the programs kept before this are in {})",
            args.output.display()
        ))
    })?;
    lines.tick(&stats, args.count, t0, true);
    let secs = t0.elapsed().as_secs_f64();
    print_summary(&args, &o, &stats, distinct.len(), secs)
}

/// One shard of a `--ray` run: its records, then the totals, as JSON lines on stdout.
fn run_shard(cp: &CpSat, o: &SynthOptions, spec: RunSpec, seed: u64) -> DriverResult<ExitCode> {
    let mut out = std::io::stdout().lock();
    let (stats, _) = run_synthesis_into(cp, o, spec, &ProgressBar::hidden(), &mut |kept, _| {
        for p in kept {
            writeln!(out, "{}", record(p, seed)).map_err(|e| e.to_string())?;
        }
        Ok(())
    })
    .map_err(DriverError::Reported)?;
    let stats = serde_json::to_string(&stats).map_err(|e| DriverError::Failed(e.to_string()))?;
    writeln!(out, "{{\"shard_stats\": {stats}}}").map_err(|source| DriverError::Write {
        path: "stdout".into(),
        source,
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The end of a run: where the programs went, the solver's and the validation's totals;
/// exit 3 when fewer programs than asked were made.
pub fn print_summary(
    args: &SynthArgs,
    o: &SynthOptions,
    stats: &RunStats,
    distinct: usize,
    secs: f64,
) -> DriverResult<ExitCode> {
    if !stats.rejected.is_empty() {
        let path = args.output.with_extension("rejected.jsonl");
        let text: String = stats.rejected.iter().map(|r| format!("{r}\n")).collect();
        std::fs::write(&path, text).map_err(|source| DriverError::Write {
            path: path.display().to_string(),
            source,
        })?;
        eprintln!("rejected programs and reasons: {}", path.display());
    }
    let kept = stats.kept;
    eprintln!(
        "wrote {} of {} programs ({} ops each) to {} in {secs:.1}s ({:.2} programs/s)",
        kept,
        args.count,
        o.ops,
        args.output.display(),
        kept as f64 / secs.max(1e-9)
    );
    eprintln!(
        "solves: {} ({} feasible, {:.1}%), {:.2} ms per solve; first-round success {}/{} ({:.1}%)",
        stats.solves,
        stats.feasible_solves,
        100.0 * stats.feasible_solves as f64 / stats.solves.max(1) as f64,
        1000.0 * stats.solve_s / stats.solves.max(1) as f64,
        stats.first_round_ok,
        args.count,
        100.0 * stats.first_round_ok as f64 / args.count.max(1) as f64
    );
    eprintln!(
        "distinct programs: {} of {} ({:.2}%)",
        distinct,
        kept,
        100.0 * distinct as f64 / kept.max(1) as f64
    );
    if stats.unsafe_solutions > 0 {
        eprintln!(
            "range analysis refused {} solutions that could overflow (resampled)",
            stats.unsafe_solutions
        );
    }
    if stats.redrawn > 0 {
        eprintln!(
            "{} programs got a new op sequence after repeated failures",
            stats.redrawn
        );
    }
    for (r, n) in &stats.failures {
        eprintln!("  not solved ({n}): {r}");
    }
    if !stats.validated.is_empty() {
        let by: Vec<String> = stats
            .validated
            .iter()
            .map(|(m, n)| format!("{n} {m}"))
            .collect();
        eprintln!(
            "validated {} programs ({}) in {:.1}s; rejected {}",
            stats.validated.values().sum::<usize>(),
            by.join(", "),
            stats.validate_s,
            stats.rejections.values().sum::<usize>()
        );
        for (r, n) in &stats.rejections {
            eprintln!("  rejected ({n}): {r}");
        }
    }
    Ok(if kept == args.count {
        ExitCode::SUCCESS
    } else {
        // fewer programs than asked: the synthesizer failed (exit 3)
        ExitCode::from(super::exit::DRTC_FAILED)
    })
}

/// Progress as lines, for a stderr that is not a terminal (a log, CI): one line at most
/// every `every`, and one at the end.
struct ProgressLines {
    every: Duration,
    last: Instant,
    on: bool,
}

impl ProgressLines {
    fn tick(&mut self, stats: &RunStats, count: usize, t0: Instant, last: bool) {
        if !self.on || (!last && self.last.elapsed() < self.every) {
            return;
        }
        self.last = Instant::now();
        let secs = t0.elapsed().as_secs_f64();
        eprintln!(
            "synth: {}/{count} programs written, {} rejected, {} solves, {secs:.0}s, {:.2} programs/s",
            stats.kept,
            stats.rejections.values().sum::<usize>(),
            stats.solves,
            stats.kept as f64 / secs.max(1e-9)
        );
    }
}
