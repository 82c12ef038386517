//! Synthesis runs as a library: the settings `drtc synth` and `drtc.synth` take, the
//! replacement rounds around the CP-SAT synthesizer (failed or rejected programs are
//! redrawn), optional validation in PyTorch, and the JSON record of each program.

use drtc_cpsat::CpSat;
use drtc_ir::Op;
use drtc_synth::{
    choose, default_python, synthesize_indices, Device, Diversity, FailReason, Method, Outcome,
    Selection, SynthOptions, SynthProgram, Validator, LIST_A, LIST_B,
};
use indicatif::ProgressBar;
use std::collections::BTreeMap;

/// How synthesized programs are proved valid and finite before they are kept
/// (`drtc_synth::validate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ValidateMode {
    /// Not at all (programs are still range-checked when solved).
    None,
    /// On a GPU when one is visible: every program runs there; else on the CPU, programs
    /// within the run budget run, larger ones are checked on PyTorch's meta device plus
    /// the interval proof.
    Auto,
    /// Every program on the meta device plus the interval proof (no runs).
    Meta,
    /// Every program runs on the CPU at full size (slow and memory-hungry at the default
    /// FLOP range).
    Cpu,
    /// Every program runs on a CUDA GPU at full size.
    Cuda,
}

/// The largest programs `ValidateMode::Auto` runs on the CPU: all tensors together at most
/// `elements` elements, and at most `flops` FLOPs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunBudget {
    pub elements: u64,
    pub flops: u64,
}

impl Default for RunBudget {
    /// 2^24 elements (64 MiB of f32 for every tensor of the program) and 2^28 FLOPs.
    fn default() -> Self {
        RunBudget {
            elements: 1 << 24,
            flops: 1 << 28,
        }
    }
}

/// What a synthesis run is asked for, in the words of the CLI (`--ops`, `--flops 2^34..2^35`).
#[derive(Clone, Debug)]
pub struct SynthSettings {
    /// Ops per program (or give `level`).
    pub ops: Option<usize>,
    /// The seed's difficulty level 0..4 (= 1, 2, 3, 5, 10 ops).
    pub level: Option<u8>,
    /// Total FLOPs range `MIN..MAX`.
    pub flops: String,
    pub max_elements: Option<u64>,
    /// `a`, `ab`, or a comma-separated list of op names.
    pub op_set: String,
    pub selection: Selection,
    pub diversity: Diversity,
    /// Per-solve time limit in seconds.
    pub time_limit: f64,
}

impl SynthSettings {
    /// The synthesizer options these settings ask for.
    pub fn options(&self) -> Result<SynthOptions, String> {
        let ops = match (self.ops, self.level) {
            (Some(_), Some(_)) => return Err("give either ops or level, not both".into()),
            (Some(n), None) => n,
            (None, Some(l)) => *SynthOptions::LEVELS
                .get(l as usize)
                .ok_or_else(|| format!("level {l} is not in 0..=4"))?,
            (None, None) => return Err("give --ops N or --level L".into()),
        };
        if ops == 0 {
            return Err("--ops must be at least 1".into());
        }
        let (lo, hi) = parse_range(&self.flops)?;
        let mut o = SynthOptions::default().with_flops(lo, hi);
        o.ops = ops;
        if let Some(m) = self.max_elements {
            o.max_total_elements = m;
        }
        o.op_set = parse_op_set(&self.op_set)?;
        o.selection = self.selection;
        o.diversity = self.diversity;
        o.time_limit_s = self.time_limit;
        Ok(o)
    }
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
                drtc_synth::family(op)
                    .map(|_| op)
                    .ok_or_else(|| format!("the synthesizer cannot place `{n}`"))
            })
            .collect(),
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
        "validation": p.validation.unwrap_or("none"),
    })
}

/// Totals over a run, printed at the end (and sent back by each shard of a run split
/// over a Ray cluster's actors, then merged).
#[derive(Default, Debug, serde::Serialize, serde::Deserialize)]
pub struct RunStats {
    pub solves: usize,
    pub feasible_solves: usize,
    pub solve_s: f64,
    /// Solutions the range analysis refused (they could overflow for some input).
    pub unsafe_solutions: usize,
    pub first_round_ok: usize,
    pub failures: BTreeMap<String, usize>,
    pub rejections: BTreeMap<String, usize>,
    /// Programs validated, by method (`run-cpu`, `meta+interval`, ...).
    pub validated: BTreeMap<String, usize>,
    /// Seconds spent validating.
    pub validate_s: f64,
    /// Programs kept so far.
    pub kept: usize,
    /// Programs made with a redrawn op sequence.
    pub redrawn: usize,
    /// Rejected programs: the JSON record plus `"rejection"`.
    pub rejected: Vec<serde_json::Value>,
}

impl RunStats {
    /// Adds another part's totals (a shard of the same run) to these.
    pub fn merge(&mut self, other: RunStats) {
        fn add<K: Ord>(to: &mut BTreeMap<K, usize>, from: BTreeMap<K, usize>) {
            for (k, n) in from {
                *to.entry(k).or_default() += n;
            }
        }
        self.solves += other.solves;
        self.feasible_solves += other.feasible_solves;
        self.solve_s += other.solve_s;
        self.unsafe_solutions += other.unsafe_solutions;
        self.first_round_ok += other.first_round_ok;
        add(&mut self.failures, other.failures);
        add(&mut self.rejections, other.rejections);
        add(&mut self.validated, other.validated);
        self.validate_s += other.validate_s;
        self.kept += other.kept;
        self.redrawn += other.redrawn;
        self.rejected.extend(other.rejected);
    }
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
    /// What `ValidateMode::Auto` runs on the CPU.
    pub budget: RunBudget,
    /// Programs per chunk: each chunk is synthesized, validated and handed to the sink
    /// (written) before the next starts.
    pub chunk: usize,
    /// Only this chunk (its indices through every round): one shard of a run split over
    /// several processes, whose programs are exactly those the whole run makes there.
    pub shard: Option<usize>,
}

impl RunSpec {
    /// A spec with the default validation budget and chunk size.
    pub fn new(count: usize, seed: u64, validate: ValidateMode) -> Self {
        RunSpec {
            count,
            seed,
            validate,
            trials: 5,
            retries: 5,
            budget: RunBudget::default(),
            chunk: 64,
            shard: None,
        }
    }
}

/// How each program of a run is validated.
enum Plan {
    None,
    Every(Method),
    Budget(Device, RunBudget),
}

impl Plan {
    fn of(mode: ValidateMode, budget: RunBudget) -> Plan {
        match mode {
            ValidateMode::None => Plan::None,
            ValidateMode::Meta => Plan::Every(Method::Meta),
            ValidateMode::Cpu => Plan::Every(Method::Run(Device::Cpu)),
            ValidateMode::Cuda => Plan::Every(Method::Run(Device::Cuda)),
            ValidateMode::Auto => match crate::verifier::devices::scan() {
                crate::verifier::DeviceScan::Gpus(g) if !g.is_empty() => {
                    Plan::Every(Method::Run(Device::Cuda))
                }
                _ => Plan::Budget(Device::Cpu, budget),
            },
        }
    }

    fn device(&self) -> Option<Device> {
        match self {
            Plan::None => None,
            Plan::Every(Method::Run(d)) | Plan::Budget(d, _) => Some(*d),
            Plan::Every(Method::Meta) => Some(Device::Cpu),
        }
    }

    fn method(&self, p: &SynthProgram) -> Method {
        match self {
            Plan::None => unreachable!("no validation planned"),
            Plan::Every(m) => *m,
            Plan::Budget(d, b) => choose(p, *d, b.elements, b.flops),
        }
    }
}

/// Synthesizes `spec.count` programs (with replacement rounds), optionally validated;
/// returns the programs in index order and the run's totals.
pub fn run_synthesis(
    cp: &CpSat,
    o: &SynthOptions,
    spec: RunSpec,
    bar: &ProgressBar,
) -> Result<(Vec<SynthProgram>, RunStats, Vec<Outcome>), String> {
    let mut all = vec![];
    let (stats, failed) = run_synthesis_into(cp, o, spec, bar, &mut |kept, _| {
        all.extend_from_slice(kept);
        Ok(())
    })?;
    Ok((all, stats, failed))
}

/// Takes each chunk's kept programs (in index order) and the totals so far; an error stops
/// the run.
pub type ChunkSink<'a> = dyn FnMut(&[SynthProgram], &RunStats) -> Result<(), String> + 'a;

/// Synthesizes `spec.count` programs chunk by chunk (`spec.chunk` indices at a time, each
/// with its replacement rounds) and hands each chunk's kept programs, in index order, to
/// `sink` as soon as the chunk is done. The programs are those `run_synthesis` returns:
/// a program depends on its index and round only. Returns the totals and the outcomes of
/// the programs that were never made.
pub fn run_synthesis_into(
    cp: &CpSat,
    o: &SynthOptions,
    spec: RunSpec,
    bar: &ProgressBar,
    sink: &mut ChunkSink<'_>,
) -> Result<(RunStats, Vec<Outcome>), String> {
    let plan = Plan::of(spec.validate, spec.budget);
    let mut validator = plan
        .device()
        .map(|d| Validator::new(&default_python(), d, spec.trials));
    let mut stats = RunStats::default();
    let mut never = vec![];
    let indices: Vec<usize> = (0..spec.count).collect();
    for (k, chunk) in indices.chunks(spec.chunk.max(1)).enumerate() {
        if spec.shard.is_some_and(|s| s != k) {
            continue;
        }
        let (kept, failed) = run_chunk(
            cp,
            o,
            &spec,
            chunk,
            &plan,
            validator.as_mut(),
            &mut stats,
            bar,
        )?;
        stats.kept += kept.len();
        never.extend(failed);
        sink(&kept, &stats)?;
    }
    Ok((stats, never))
}

/// One chunk of indices through every replacement round.
#[allow(clippy::too_many_arguments)]
fn run_chunk(
    cp: &CpSat,
    o: &SynthOptions,
    spec: &RunSpec,
    chunk: &[usize],
    plan: &Plan,
    mut validator: Option<&mut Validator>,
    stats: &mut RunStats,
    bar: &ProgressBar,
) -> Result<(Vec<SynthProgram>, Vec<Outcome>), String> {
    let RunSpec {
        count,
        seed,
        retries,
        ..
    } = *spec;
    let mut done: BTreeMap<usize, SynthProgram> = BTreeMap::new();
    let mut todo: Vec<usize> = chunk.to_vec();
    // programs whose op sequence kept failing validation or solving (every failure is
    // still counted in the totals: a sequence that cannot be solved is a finding)
    let mut rejected_ever: std::collections::BTreeSet<usize> = Default::default();
    let mut last_failed = vec![];
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
        if let Some(v) = validator.as_deref_mut() {
            bar.set_message("validating");
            let t0 = std::time::Instant::now();
            let jobs: Vec<(&SynthProgram, Method)> =
                ok.iter().map(|p| (p, plan.method(p))).collect();
            let verdicts = v.check(&jobs).map_err(|e| e.to_string())?;
            stats.validate_s += t0.elapsed().as_secs_f64();
            for (p, verdict) in ok.iter_mut().zip(verdicts) {
                *stats
                    .validated
                    .entry(verdict.method.name().to_string())
                    .or_default() += 1;
                p.validation = Some(verdict.method.name());
                if let Some(r) = verdict.rejection {
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
            stats.first_round_ok += ok.len() - rejected.len();
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
    Ok((done.into_values().collect(), last_failed))
}
