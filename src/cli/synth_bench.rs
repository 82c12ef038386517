//! `drtc synth-bench`: programs per second and time per solve at several op counts, on
//! this machine's cores (no validation: it measures the synthesizer alone).

use super::error::{DriverError, DriverResult};
use clap::Args;
use drtc::driver::synth::{parse_op_set, parse_range, run_synthesis, RunSpec, ValidateMode};
use drtc_cpsat::CpSat;
use drtc_synth::{diversity_probe, Diversity, Selection, SynthOptions};
use indicatif::ProgressBar;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args, Debug)]
#[command(
    about = "Measure synthesis throughput (programs/s) and time per solve",
    long_about = concat!(
        "Synthesizes --count programs at each op count of --ops on this machine's cores, without validation (it measures the synthesizer alone), and prints programs per second and the time per CP-SAT solve; --diversity-plans also measures how varied the solver's solutions of fixed structures are.\n\nExample:\n  drtc synth-bench --ops 1,3,10 --count 50",
        exit_status_help!()
    )
)]
pub struct SynthBenchArgs {
    /// Op counts to measure, comma-separated.
    #[arg(long, default_value = "1,2,3,5,10,20")]
    pub ops: String,
    /// Programs per op count.
    #[arg(long, default_value_t = 200)]
    pub count: usize,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Total FLOPs range `MIN..MAX`.
    #[arg(long, default_value = "2^34..2^35")]
    pub flops: String,
    /// The op set (`a`, `ab` or a list).
    #[arg(long, default_value = "a")]
    pub op_set: String,
    /// Also measure solver-level diversity on this many fixed structures (0 = skip).
    #[arg(long, default_value_t = 0)]
    pub diversity_plans: usize,
    /// Seeds per fixed structure in the diversity study.
    #[arg(long, default_value_t = 20)]
    pub diversity_seeds: u64,
}

pub fn run(args: SynthBenchArgs) -> DriverResult<ExitCode> {
    let cp = CpSat::load().map_err(|e| DriverError::Reported(e.to_string()))?;
    let (lo, hi) = parse_range(&args.flops).map_err(DriverError::Reported)?;
    let threads = rayon::current_num_threads();
    println!(
        "synth-bench: {} programs per op count, FLOPs {lo}..{hi}, {threads} threads",
        args.count
    );
    println!(
        "{:>4} {:>10} {:>12} {:>10} {:>14} {:>10}",
        "ops", "programs", "programs/s", "solves", "ms/solve", "solved%"
    );
    for n in args.ops.split(',') {
        let n: usize = n
            .trim()
            .parse()
            .map_err(|_| DriverError::Reported(format!("bad op count `{n}`")))?;
        let mut o = SynthOptions::default().with_flops(lo, hi);
        o.ops = n;
        o.op_set = parse_op_set(&args.op_set).map_err(DriverError::Reported)?;
        let t0 = Instant::now();
        let spec = RunSpec {
            trials: 1,
            retries: 0,
            ..RunSpec::new(args.count, args.seed, ValidateMode::None)
        };
        let (programs, stats, _) =
            run_synthesis(&cp, &o, spec, &ProgressBar::hidden()).map_err(DriverError::Reported)?;
        let secs = t0.elapsed().as_secs_f64();
        println!(
            "{:>4} {:>10} {:>12.1} {:>10} {:>14.2} {:>10.1}",
            n,
            programs.len(),
            programs.len() as f64 / secs,
            stats.solves,
            1000.0 * stats.solve_s / stats.solves.max(1) as f64,
            100.0 * programs.len() as f64 / args.count.max(1) as f64
        );
    }
    if args.diversity_plans > 0 {
        diversity_study(&cp, &args, lo, hi)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Solver-level diversity: fixed structures, many seeds, per diversity mode.
fn diversity_study(cp: &CpSat, args: &SynthBenchArgs, lo: u64, hi: u64) -> DriverResult<()> {
    use drtc_synth::select::op_sequences;
    use rand::SeedableRng;
    use rayon::prelude::*;
    let n = 3;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(args.seed);
    let op_set = parse_op_set(&args.op_set).map_err(DriverError::Reported)?;
    let seqs = op_sequences(
        &op_set,
        n,
        args.diversity_plans,
        Selection::Uniform,
        None,
        &mut rng,
    );
    println!(
        "diversity: {} fixed {n}-op structures x {} seeds each; distinct programs per structure",
        args.diversity_plans, args.diversity_seeds
    );
    for (name, mode) in [
        ("seed-only", Diversity::SeedOnly),
        ("hints", Diversity::Hints),
        ("random-half", Diversity::RandomHalf),
        ("both", Diversity::Both),
    ] {
        let mut o = SynthOptions::default().with_flops(lo, hi);
        o.ops = n;
        o.diversity = mode;
        let res: Vec<(usize, usize)> = seqs
            .par_iter()
            .enumerate()
            .map(|(i, ops)| {
                diversity_probe(cp, &o, ops, args.seed + i as u64, args.diversity_seeds)
            })
            .collect();
        let solved: usize = res.iter().map(|r| r.0).sum();
        let distinct: usize = res.iter().map(|r| r.1).sum();
        println!(
            "  {name:>12}: {distinct} distinct of {solved} solved ({:.1}%)",
            100.0 * distinct as f64 / solved.max(1) as f64
        );
    }
    Ok(())
}
