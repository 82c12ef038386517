//! `drtc synth`: synthesizes seed-format programs with CP-SAT, validates them in PyTorch,
//! and writes one JSON line per program with its metadata.

use super::{DriverError, DriverResult};
use clap::{Args, ValueEnum};
use drtc_cpsat::CpSat;
use drtc_frontends::synth::{
    default_python, flop_floor, synthesize_indices, validate, Device, Diversity, FailReason,
    Outcome, Selection, SynthOptions, SynthProgram, LIST_A, LIST_B,
};
use drtc_ir::Op;
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ValidateMode {
    None,
    Cpu,
    Cuda,
}

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

/// Synthesize valid, diverse PyTorch programs (seed format) with CP-SAT.
#[derive(Args, Debug)]
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
    /// Run each program in PyTorch and reject errors and NaN/Inf outputs (`none` skips
    /// it: programs are still wired and range-checked so that they stay finite).
    #[arg(long, value_enum, default_value = "cpu")]
    pub validate: ValidateMode,
    /// Validation runs each program on the inputs of this many seeds (0, 1, ...).
    #[arg(long, default_value_t = 5)]
    pub trials: usize,
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
    /// Output file (JSON lines).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Hide the progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// Parses `2^34`, `1e9` or `12345`.
pub fn parse_count(s: &str) -> Result<u64, String> {
    let s = s.trim();
    if let Some((b, e)) = s.split_once('^') {
        let b: u64 = b.trim().parse().map_err(|_| format!("bad number `{s}`"))?;
        let e: u32 = e.trim().parse().map_err(|_| format!("bad number `{s}`"))?;
        return b
            .checked_pow(e)
            .ok_or_else(|| format!("`{s}` is too large"));
    }
    if let Ok(v) = s.parse::<u64>() {
        return Ok(v);
    }
    let f: f64 = s.parse().map_err(|_| format!("bad number `{s}`"))?;
    if !(0.0..1.8e19).contains(&f) {
        return Err(format!("`{s}` is out of range"));
    }
    Ok(f as u64)
}

/// Parses `MIN..MAX`.
pub fn parse_range(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("expected MIN..MAX, got `{s}`"))?;
    let (a, b) = (parse_count(a)?, parse_count(b)?);
    if a > b {
        return Err(format!("the minimum {a} exceeds the maximum {b}"));
    }
    Ok((a, b))
}

/// Parses an op set name or list.
pub fn parse_op_set(s: &str) -> Result<Vec<Op>, String> {
    match s {
        "a" => Ok(LIST_A.to_vec()),
        "ab" => Ok(LIST_A.iter().chain(LIST_B).copied().collect()),
        list => list
            .split(',')
            .map(|n| {
                let op = Op::from_name(n.trim()).ok_or_else(|| format!("unknown op `{n}`"))?;
                drtc_frontends::synth::family(op)
                    .map(|_| op)
                    .ok_or_else(|| format!("the synthesizer cannot place `{n}`"))
            })
            .collect(),
    }
}

impl SynthArgs {
    /// The synthesizer options these arguments ask for.
    pub fn options(&self) -> DriverResult<SynthOptions> {
        let ops = match (self.ops, self.level) {
            (Some(n), _) => n,
            (None, Some(l)) => SynthOptions::LEVELS[l as usize],
            (None, None) => return Err(DriverError::Reported("give --ops N or --level L".into())),
        };
        if ops == 0 {
            return Err(DriverError::Reported("--ops must be at least 1".into()));
        }
        let (lo, hi) = parse_range(&self.flops).map_err(DriverError::Reported)?;
        let mut o = SynthOptions::default().with_flops(lo, hi);
        o.ops = ops;
        if let Some(m) = self.max_elements {
            o.max_total_elements = m;
        }
        o.op_set = parse_op_set(&self.op_set).map_err(DriverError::Reported)?;
        o.selection = match self.selection {
            SelectionArg::Uniform => Selection::Uniform,
            SelectionArg::Coverage => Selection::Coverage,
        };
        o.diversity = match self.diversity {
            DiversityArg::Hints => Diversity::Hints,
            DiversityArg::RandomHalf => Diversity::RandomHalf,
            DiversityArg::Both => Diversity::Both,
            DiversityArg::SeedOnly => Diversity::SeedOnly,
        };
        o.time_limit_s = self.time_limit;
        Ok(o)
    }
}

/// The JSON line of one program.
pub fn record(p: &SynthProgram, run_seed: u64) -> serde_json::Value {
    let g = &p.graph;
    let shape = |v| g.ty(v).shape.clone();
    let inputs: Vec<Vec<i64>> = g.inputs().iter().map(|&v| shape(v)).collect();
    let outputs: Vec<Vec<i64>> = g.outputs().iter().map(|&v| shape(v)).collect();
    let mut all = inputs.clone();
    for &n in g.body() {
        all.extend(g.node(n).outputs.iter().map(|&v| shape(v)));
    }
    // every node of the program: the drawn ops plus guards and argmax's cast
    let program_ops: Vec<&str> = g.body().iter().map(|&n| g.node(n).op.name()).collect();
    // the seed's levels 0..4 are 1, 2, 3, 5, 10 ops; the paper's 20 ops is level 5; other
    // counts take the level of the largest op count they reach
    let difficulty = [1usize, 2, 3, 5, 10, 20]
        .iter()
        .filter(|&&l| l <= p.ops.len())
        .count() as i64
        - 1;
    serde_json::json!({
        "pytorch": p.python,
        "difficulty": difficulty,
        "num_ops": p.ops.len(),
        "ops": p.ops.iter().map(|o| o.name()).collect::<Vec<_>>(),
        "flops": p.flops,
        "guards": p.guards,
        "program_ops": program_ops,
        "input_shapes": inputs,
        "output_shapes": outputs,
        "shapes": all,
        "seed": p.seed,
        "run_seed": run_seed,
        "index": p.index,
        "hash": format!("{:016x}", p.hash),
    })
}

/// Totals over a run, printed at the end.
#[derive(Default, Debug)]
pub struct RunStats {
    pub solves: usize,
    pub feasible_solves: usize,
    pub solve_s: f64,
    /// Solutions the range analysis refused (they could overflow for some input).
    pub unsafe_solutions: usize,
    pub first_round_ok: usize,
    pub failures: BTreeMap<String, usize>,
    pub rejections: BTreeMap<String, usize>,
    pub validated: usize,
    /// Programs made with a redrawn op sequence.
    pub redrawn: usize,
    /// Rejected programs: the JSON record plus `"rejection"`.
    pub rejected: Vec<serde_json::Value>,
}

/// What one run makes: how many programs, from which seed, how they are checked.
#[derive(Clone, Copy, Debug)]
pub struct RunSpec {
    pub count: usize,
    pub seed: u64,
    pub validate: ValidateMode,
    /// Input seeds per program when validating.
    pub trials: usize,
    /// Replacement rounds for failed or rejected programs.
    pub retries: usize,
}

/// Synthesizes `spec.count` programs (with replacement rounds), optionally validated;
/// returns the programs in index order and the run's totals.
pub fn run_synthesis(
    cp: &CpSat,
    o: &SynthOptions,
    spec: RunSpec,
    bar: &ProgressBar,
) -> DriverResult<(Vec<SynthProgram>, RunStats, Vec<Outcome>)> {
    let RunSpec {
        count,
        seed,
        validate: validate_mode,
        trials,
        retries,
    } = spec;
    let mut stats = RunStats::default();
    let mut done: BTreeMap<usize, SynthProgram> = BTreeMap::new();
    let mut todo: Vec<usize> = (0..count).collect();
    // programs whose op sequence kept failing validation or solving (every failure is
    // still counted in the totals: a sequence that cannot be solved is a finding)
    let mut rejected_ever: std::collections::BTreeSet<usize> = Default::default();
    let mut last_failed = vec![];
    let python = default_python();
    for round in 0..=retries {
        if todo.is_empty() {
            break;
        }
        let tick = |_: &Outcome| bar.inc(1);
        // in the last half of the retry rounds, uniform runs draw new op sequences for
        // programs that keep failing (coverage runs keep their sequences), so that
        // `--count N` gives N programs
        let redraw_now = round > 0 && round > retries / 2 && o.selection == Selection::Uniform;
        let (again, keep): (Vec<usize>, Vec<usize>) = todo
            .iter()
            .partition(|i| redraw_now && rejected_ever.contains(i));
        let mut results = synthesize_indices(cp, o, seed, count, &keep, round as u64, false, &tick);
        results.extend(synthesize_indices(
            cp,
            o,
            seed,
            count,
            &again,
            round as u64,
            true,
            &tick,
        ));
        let redrawn: std::collections::HashSet<usize> = again.into_iter().collect();
        let mut ok: Vec<SynthProgram> = vec![];
        let mut failed = vec![];
        for out in results {
            stats.solves += out.stats.solves;
            stats.feasible_solves += out.stats.feasible;
            stats.solve_s += out.stats.solve_s;
            stats.unsafe_solutions += out.stats.unsafe_solutions;
            match &out.result {
                Ok(p) => ok.push(p.clone()),
                Err(r) => {
                    *stats.failures.entry(r.to_string()).or_default() += 1;
                    // a sequence without FLOPs fails the same way every time: no retry
                    if *r != FailReason::NoFlops {
                        failed.push(out.index);
                    }
                    last_failed.push(out);
                }
            }
        }
        let mut rejected = vec![];
        let device = match validate_mode {
            ValidateMode::None => None,
            ValidateMode::Cpu => Some(Device::Cpu),
            ValidateMode::Cuda => Some(Device::Cuda),
        };
        if let Some(device) = device {
            bar.set_message("validating");
            let refs: Vec<&SynthProgram> = ok.iter().collect();
            let verdicts = validate(&python, device, trials, &refs)
                .map_err(|e| DriverError::Reported(e.to_string()))?;
            stats.validated += verdicts.len();
            for (p, v) in ok.iter().zip(verdicts) {
                if let Some(r) = v.rejection {
                    let mut rec = record(p, seed);
                    rec["rejection"] = serde_json::Value::String(r.clone());
                    stats.rejected.push(rec);
                    let key = r.split(':').take(2).collect::<Vec<_>>().join(":");
                    *stats.rejections.entry(key).or_default() += 1;
                    rejected.push(p.index);
                }
            }
            bar.set_message("");
        }
        if round == 0 {
            stats.first_round_ok = ok.len() - rejected.len();
        }
        for p in ok {
            if !rejected.contains(&p.index) {
                if redrawn.contains(&p.index) {
                    stats.redrawn += 1;
                }
                done.insert(p.index, p);
            }
        }
        rejected_ever.extend(rejected.iter().copied());
        rejected_ever.extend(failed.iter().copied());
        todo = failed.into_iter().chain(rejected).collect();
        todo.sort();
        if !todo.is_empty() && round < retries {
            bar.inc_length(todo.len() as u64);
        }
    }
    last_failed.retain(|o| !done.contains_key(&o.index));
    Ok((done.into_values().collect(), stats, last_failed))
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

pub fn run(args: SynthArgs) -> DriverResult<ExitCode> {
    let o = args.options()?;
    if let Some(line) = check_floor(&o)? {
        eprintln!("{line}");
    }
    let cp = CpSat::load().map_err(|e| DriverError::Reported(e.to_string()))?;
    if let Some(j) = args.jobs {
        // an error here means a pool already exists, which is fine
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(j.max(1))
            .build_global();
    }
    let bar = if args.quiet {
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
    let spec = RunSpec {
        count: args.count,
        seed: args.seed,
        validate: args.validate,
        trials: args.trials,
        retries: args.retries,
    };
    let (programs, stats, _) = run_synthesis(&cp, &o, spec, &bar)?;
    bar.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64();
    let file = std::fs::File::create(&args.output).map_err(|source| DriverError::Write {
        path: args.output.display().to_string(),
        source,
    })?;
    let mut w = std::io::BufWriter::new(file);
    for p in &programs {
        writeln!(w, "{}", record(p, args.seed)).map_err(|source| DriverError::Write {
            path: args.output.display().to_string(),
            source,
        })?;
    }
    w.flush().map_err(|source| DriverError::Write {
        path: args.output.display().to_string(),
        source,
    })?;
    if !stats.rejected.is_empty() {
        let path = args.output.with_extension("rejected.jsonl");
        let text: String = stats.rejected.iter().map(|r| format!("{r}\n")).collect();
        std::fs::write(&path, text).map_err(|source| DriverError::Write {
            path: path.display().to_string(),
            source,
        })?;
        eprintln!("rejected programs and reasons: {}", path.display());
    }
    let distinct: std::collections::HashSet<u64> = programs.iter().map(|p| p.hash).collect();
    eprintln!(
        "wrote {} of {} programs ({} ops each) to {} in {secs:.1}s ({:.1} programs/s)",
        programs.len(),
        args.count,
        o.ops,
        args.output.display(),
        programs.len() as f64 / secs.max(1e-9)
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
        distinct.len(),
        programs.len(),
        100.0 * distinct.len() as f64 / programs.len().max(1) as f64
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
    if stats.validated > 0 {
        eprintln!(
            "validated {} runs in PyTorch; rejected {}",
            stats.validated,
            stats.rejections.values().sum::<usize>()
        );
        for (r, n) in &stats.rejections {
            eprintln!("  rejected ({n}): {r}");
        }
    }
    Ok(if programs.len() == args.count {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
