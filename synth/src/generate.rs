//! The synthesis loop: for one op sequence and seed, sample a plan, encode it, solve it
//! (halving the FLOP minimum when infeasible, as the seed generator does), build and
//! verify the graph, emit it. Many programs run in parallel over cores (rayon); each is
//! reproducible from its own seed.

use super::build::build_graph;
use super::csp::{encode, Csp};
use super::emit::emit_seed;
use super::options::{Diversity, Selection, SynthOptions};
use super::select::op_sequences;
use super::soundness::input_range;
use super::structure::sample_plan;
use drtc_cpsat::{Branching, CpSat, DomainReduction, SolveParams, Status, VarSelection};
use drtc_ir::range::violations;
use drtc_ir::{Graph, Op};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::time::Instant;

/// One synthesized program with its metadata.
#[derive(Clone, Debug)]
pub struct SynthProgram {
    pub index: usize,
    /// The seed this program was made from (with `ops`, reproduces it).
    pub seed: u64,
    pub ops: Vec<Op>,
    pub graph: Graph,
    /// Seed-format program text.
    pub python: String,
    pub flops: u64,
    /// Guard nodes (`abs`, `clamp`) inserted in front of op inputs (`soundness.rs`); they are
    /// not counted among `ops`.
    pub guards: usize,
    /// Hash of the canonical IR text: equal programs hash equal.
    pub hash: u64,
    /// How the program was validated (`validate::Method::name`), when it was.
    pub validation: Option<&'static str>,
}

/// Why a program could not be made.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailReason {
    /// Every op of the sequence has zero FLOPs, so no total reaches a positive minimum.
    NoFlops,
    /// Every sampled structure was infeasible.
    Infeasible,
    /// The solver ran out of time.
    Timeout,
    /// Every solved structure could produce a non-finite value (range analysis).
    Unsafe(String),
    /// A solution did not survive building, inference or verification (a bug).
    Build(String),
    Solver(String),
}

impl std::fmt::Display for FailReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FailReason::NoFlops => {
                f.write_str("no op has FLOPs, so the total cannot reach the minimum")
            }
            FailReason::Infeasible => f.write_str("every sampled structure was infeasible"),
            FailReason::Timeout => f.write_str("the solver ran out of time"),
            FailReason::Unsafe(m) => write!(f, "numerically unsafe: {m}"),
            FailReason::Build(m) => write!(f, "build failed: {m}"),
            FailReason::Solver(m) => write!(f, "solver error: {m}"),
        }
    }
}

/// Counters of one program's solves.
#[derive(Clone, Debug, Default)]
pub struct SolveStats {
    pub solves: usize,
    pub feasible: usize,
    pub infeasible: usize,
    pub timeouts: usize,
    /// Solutions refused by the range analysis (they could overflow).
    pub unsafe_solutions: usize,
    pub solve_s: f64,
}

/// The result of synthesizing one program.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub index: usize,
    pub seed: u64,
    pub ops: Vec<Op>,
    pub result: Result<SynthProgram, FailReason>,
    pub stats: SolveStats,
}

/// 64-bit FNV-1a (stable across builds and platforms, unlike `DefaultHasher`).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// The seed of program `index` under a run seed (SplitMix64 of both).
pub fn program_seed(run_seed: u64, index: u64) -> u64 {
    let mut z = run_seed
        ^ index
            .wrapping_mul(0x9e3779b97f4a7c15)
            .wrapping_add(0x632be59bd9b4e5b9);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

/// Applies the diversity mode to a model and returns the solver parameters for `seed`.
fn configure(csp: &mut Csp, o: &SynthOptions, seed: u64) -> SolveParams {
    if matches!(o.diversity, Diversity::RandomHalf | Diversity::SeedOnly) {
        csp.model.clear_hints();
    }
    let random_half = matches!(o.diversity, Diversity::RandomHalf | Diversity::Both);
    if random_half {
        csp.model.add_decision_strategy(
            &csp.decisions,
            VarSelection::First,
            DomainReduction::RandomHalf,
        );
    }
    let randomize = !matches!(o.diversity, Diversity::SeedOnly);
    SolveParams {
        seed: (seed & 0x7fff_ffff) as i32,
        time_limit_s: Some(o.time_limit_s),
        workers: 1,
        randomize_search: randomize,
        permute_variables: randomize,
        branching: if random_half {
            Branching::Fixed
        } else {
            Branching::Automatic
        },
        ..SolveParams::default()
    }
}

/// Solver-level diversity: one fixed structure (plan) for `ops`, solved under `solves`
/// different seeds with the options' diversity mode. Returns (solved, distinct programs).
pub fn diversity_probe(
    cp: &CpSat,
    o: &SynthOptions,
    ops: &[Op],
    plan_seed: u64,
    solves: u64,
) -> (usize, usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(plan_seed);
    let Ok(plan) = sample_plan(ops, o.max_rank, &mut rng) else {
        return (0, 0);
    };
    let mut hashes = std::collections::HashSet::new();
    let mut solved = 0;
    for s in 0..solves {
        let seed = program_seed(plan_seed, s);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut csp = encode(&plan, o, &mut rng);
        let params = configure(&mut csp, o, seed);
        csp.model.add_ge(csp.total_flops, o.flops.0 as i64);
        let Ok(sol) = cp.solve(&csp.model, &params) else {
            continue;
        };
        if !sol.status.has_solution() {
            continue;
        }
        if let Ok(g) = build_graph(&plan, &csp, &sol) {
            solved += 1;
            hashes.insert(fnv1a(drtc_ir::text::print(&g).as_bytes()));
        }
    }
    (solved, hashes.len())
}

/// What a FLOP floor does to the op set: the ops that have FLOPs and can carry a program
/// to the floor, and those that cannot (layout ops: transpose, cat, flip...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlopFloor {
    pub carriers: Vec<Op>,
    pub excluded: Vec<Op>,
}

/// Whether programs of `op` alone have FLOPs, read from its CP-SAT encoding (the same
/// expression the solver bounds, so this cannot drift from the model).
pub fn has_flops(op: Op, o: &SynthOptions) -> bool {
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    match sample_plan(&[op], o.max_rank, &mut rng) {
        Ok(plan) => encode(&plan, o, &mut rng).has_flops,
        Err(_) => false,
    }
}

/// The split of the op set under the options' FLOP minimum, or `None` without a floor.
pub fn flop_floor(o: &SynthOptions) -> Option<FlopFloor> {
    if o.flops.0 == 0 {
        return None;
    }
    let (carriers, excluded) = o.op_set.iter().partition(|&&op| has_flops(op, o));
    Some(FlopFloor { carriers, excluded })
}

/// Synthesizes one program with `ops` from `seed`.
pub fn synthesize(cp: &CpSat, o: &SynthOptions, ops: &[Op], index: usize, seed: u64) -> Outcome {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut stats = SolveStats::default();
    let mut last = FailReason::Infeasible;
    let done = |result, stats| Outcome {
        index,
        seed,
        ops: ops.to_vec(),
        result,
        stats,
    };
    'attempts: for _attempt in 0..o.attempts.max(1) {
        let plan = match sample_plan(ops, o.max_rank, &mut rng) {
            Ok(p) => p,
            Err(m) => return done(Err(FailReason::Build(m)), stats),
        };
        let mut csp = encode(&plan, o, &mut rng);
        if !csp.has_flops && o.flops.0 > 0 {
            return done(Err(FailReason::NoFlops), stats);
        }
        let params = configure(&mut csp, o, seed);
        for h in 0..=o.flop_halvings {
            let min = (o.flops.0 >> h) as i64;
            let mut m = csp.model.clone();
            m.add_ge(csp.total_flops, min);
            let t0 = Instant::now();
            let sol = cp.solve(&m, &params);
            stats.solve_s += t0.elapsed().as_secs_f64();
            stats.solves += 1;
            let sol = match sol {
                Ok(s) => s,
                Err(e) => return done(Err(FailReason::Solver(e.to_string())), stats),
            };
            match sol.status {
                Status::Feasible | Status::Optimal => {
                    stats.feasible += 1;
                    let graph = match build_graph(&plan, &csp, &sol) {
                        Ok(g) => g,
                        Err(m) => return done(Err(FailReason::Build(m)), stats),
                    };
                    // exact sizes: sums over large dims may still overflow; resample
                    if let Some(v) = violations(&graph, input_range()).first() {
                        stats.unsafe_solutions += 1;
                        last = FailReason::Unsafe(v.to_string());
                        continue 'attempts;
                    }
                    let python = match emit_seed(&graph) {
                        Ok(p) => p,
                        Err(e) => return done(Err(FailReason::Build(e.to_string())), stats),
                    };
                    let hash = fnv1a(drtc_ir::text::print(&graph).as_bytes());
                    let flops = graph.flops();
                    let guards = plan
                        .steps
                        .iter()
                        .flat_map(|s| &s.guards)
                        .map(|(_, g)| g.ops().len())
                        .sum();
                    return done(
                        Ok(SynthProgram {
                            index,
                            seed,
                            ops: ops.to_vec(),
                            graph,
                            python,
                            flops,
                            guards,
                            hash,
                            validation: None,
                        }),
                        stats,
                    );
                }
                Status::Infeasible => {
                    stats.infeasible += 1;
                    last = FailReason::Infeasible;
                }
                _ => {
                    // undecided within the limit: usually a minimum at the edge of what the
                    // structure can reach, so a lower minimum is tried, as for infeasibility
                    stats.timeouts += 1;
                    last = FailReason::Timeout;
                }
            }
        }
    }
    done(Err(last), stats)
}

/// Synthesizes programs `indices` of a run of `count` programs in parallel; `tick` is
/// called once per finished program. The op sequences depend only on the run seed, so a
/// retry round (`salt` > 0) redraws the structure and sizes of a program but keeps its ops.
/// With `redraw`, a program's op sequence is drawn anew (uniformly) instead: the way out
/// for sequences that keep failing validation, such as `exp2` of `exp2` overflowing.
/// Outcomes come back in the order of `indices`.
#[allow(clippy::too_many_arguments)]
pub fn synthesize_indices(
    cp: &CpSat,
    o: &SynthOptions,
    run_seed: u64,
    count: usize,
    indices: &[usize],
    salt: u64,
    redraw: bool,
    tick: &(dyn Fn(&Outcome) + Sync),
) -> Vec<Outcome> {
    let carriers = flop_floor(o).map(|f| f.carriers);
    let carriers = carriers.as_deref();
    let mut rng = ChaCha8Rng::seed_from_u64(run_seed);
    let seqs = op_sequences(&o.op_set, o.ops, count, o.selection, carriers, &mut rng);
    indices
        .par_iter()
        .filter(|&&i| i < count)
        .map(|&i| {
            let seed = program_seed(
                run_seed.wrapping_add(salt.wrapping_mul(0x2545f4914f6cdd1d)),
                i as u64,
            );
            let ops = if redraw {
                let mut r = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
                op_sequences(&o.op_set, o.ops, 1, Selection::Uniform, carriers, &mut r).remove(0)
            } else {
                seqs[i].clone()
            };
            let out = synthesize(cp, o, &ops, i, seed);
            tick(&out);
            out
        })
        .collect()
}
