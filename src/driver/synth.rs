//! Synthesis runs as a library: the settings `drtc synth` and `drtc.synth` take, the
//! replacement rounds around the CP-SAT synthesizer (failed or rejected programs are
//! redrawn), optional validation in PyTorch, and the JSON record of each program.

use drtc_cpsat::CpSat;
use drtc_frontends::synth::{
    default_python, synthesize_indices, validate, Device, Diversity, FailReason, Outcome,
    Selection, SynthOptions, SynthProgram, LIST_A, LIST_B,
};
use drtc_ir::Op;
use indicatif::ProgressBar;
use std::collections::BTreeMap;

/// Whether (and where) synthesized programs are run in PyTorch before they are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ValidateMode {
    None,
    Cpu,
    Cuda,
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
                drtc_frontends::synth::family(op)
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
) -> Result<(Vec<SynthProgram>, RunStats, Vec<Outcome>), String> {
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
            let verdicts = validate(&python, device, trials, &refs).map_err(|e| e.to_string())?;
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
