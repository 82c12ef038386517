//! `drtc synth-report`: op and op-pair histograms, rank / dim / FLOPs distributions, the
//! distinct-program rate, and the overlap of op sequences with a benchmark directory, as
//! text and (with `--plots`) PNG charts.

use super::error::{DriverError, DriverResult};
use super::files::read_file;
use super::synth_charts::{charts, Benchmark};
use super::synth_plot::render;
use clap::Args;
use drtc::driver::synth::parse_op_set;
use drtc_synth::report::{overlap, scan_benchmark_dir, Record, Report};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(
    about = "Summarize a synthesized set: op and op-pair histograms, ranks, dims, FLOPs, distinct rate, overlap with a benchmark",
    long_about = concat!(
        "Reads a JSON-lines file `drtc synth` wrote and prints the op and op-pair histograms with their uniformity over --op-set, the rank, dimension and FLOP distributions, the distinct program rate and, with --against, how many op sequences also occur in a benchmark folder. --plots DIR also writes PNG charts there.\n\nExample:\n  drtc synth-report synth.jsonl --against ../shared/kernelbench/level1 --plots plots",
        exit_status_help!()
    )
)]
pub struct SynthReportArgs {
    /// A JSON-lines file written by `drtc synth`.
    pub input: PathBuf,
    /// Write PNG charts into this folder.
    #[arg(long)]
    pub plots: Option<PathBuf>,
    /// A benchmark folder of PyTorch files (e.g. KernelBench's level1) to measure overlap with.
    #[arg(long)]
    pub against: Option<PathBuf>,
    /// The op set the uniformity figures refer to (`a`, `ab` or a list).
    #[arg(long, default_value = "a")]
    pub op_set: String,
}

fn write_err(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> DriverError + '_ {
    move |source| DriverError::Write {
        path: path.display().to_string(),
        source,
    }
}

pub fn run(args: SynthReportArgs) -> DriverResult<ExitCode> {
    let text = read_file(&args.input)?;
    let mut records = vec![];
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let r: Record = serde_json::from_str(line).map_err(|e| {
            DriverError::Reported(format!(
                "{}:{}: not a synth record: {e}",
                args.input.display(),
                i + 1
            ))
        })?;
        records.push(r);
    }
    let rep = Report::new(&records);
    let op_set = parse_op_set(&args.op_set).map_err(DriverError::Reported)?;
    let names: Vec<&str> = op_set.iter().map(|o| o.name()).collect();
    println!("programs: {}", rep.programs);
    println!(
        "distinct (canonical IR hash): {} ({:.2}%)",
        rep.distinct,
        100.0 * rep.distinct as f64 / rep.programs.max(1) as f64
    );
    let counts: Vec<String> = rep
        .op_counts
        .iter()
        .map(|(k, v)| format!("{k} ops: {v}"))
        .collect();
    println!("op counts: {}", counts.join(", "));
    let missing: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !rep.ops.contains_key(*n))
        .collect();
    println!(
        "ops: {} of {} in the op set seen; max/min frequency {:.2}; chi-square vs uniform {:.1} ({} degrees of freedom)",
        names.len() - missing.len(),
        names.len(),
        rep.op_imbalance(&names),
        rep.op_chi_square(&names),
        names.len().saturating_sub(1)
    );
    if !missing.is_empty() {
        println!("  never seen: {}", missing.join(", "));
    }
    let mut ops: Vec<(&String, &usize)> = rep.ops.iter().collect();
    ops.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let line: Vec<String> = ops.iter().map(|(k, v)| format!("{k} {v}")).collect();
    println!("op histogram: {}", line.join(", "));
    let possible = names.len() * names.len();
    let seen_pairs = rep
        .pairs
        .keys()
        .filter(|(a, b)| names.contains(&a.as_str()) && names.contains(&b.as_str()))
        .count();
    println!("ordered op pairs (consecutive): {seen_pairs} of {possible} seen");
    let ranks: Vec<String> = rep.ranks.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    println!("tensor ranks: {}", ranks.join(", "));
    let dims: Vec<String> = rep
        .dims_log2
        .iter()
        .map(|(k, v)| format!("2^{k}: {v}"))
        .collect();
    println!("dims (log2 buckets): {}", dims.join(", "));
    let flops: Vec<String> = rep
        .flops_log2
        .iter()
        .map(|(k, v)| format!("2^{k}: {v}"))
        .collect();
    println!("FLOPs (log2 buckets): {}", flops.join(", "));
    let bench = match &args.against {
        Some(dir) => Some(scan_benchmark_dir(dir).map_err(|source| DriverError::Read {
            path: dir.display().to_string(),
            source,
        })?),
        None => None,
    };
    if let (Some(dir), Some(bench)) = (&args.against, &bench) {
        let o = overlap(&records, bench);
        println!(
            "overlap with {} ({} tasks): ops {} of {}; consecutive op pairs {} of {}; tasks whose whole op sequence was synthesized: {}",
            dir.display(),
            o.tasks,
            o.shared_ops.len(),
            o.bench_ops.len(),
            o.shared_pairs,
            o.bench_pairs,
            o.exact_tasks.len()
        );
        let not: Vec<String> = o.bench_ops.difference(&o.shared_ops).cloned().collect();
        println!("  benchmark ops never synthesized: {}", not.join(", "));
        if !o.exact_tasks.is_empty() {
            println!("  exact matches: {}", o.exact_tasks.join(", "));
        }
    }
    if let Some(dir) = &args.plots {
        std::fs::create_dir_all(dir).map_err(write_err(dir))?;
        let against = match (&args.against, &bench) {
            (Some(d), Some(tasks)) => Some(Benchmark {
                name: d
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| d.display().to_string()),
                tasks,
            }),
            _ => None,
        };
        let all = charts(&rep, &names, against.as_ref());
        for chart in &all {
            let p = dir.join(chart.file());
            render(chart, &p).map_err(write_err(&p))?;
        }
        // joined as paths: `--plots plots/` prints `plots/ops.png`, not `plots//ops.png`
        let files: Vec<String> = all
            .iter()
            .map(|c| dir.join(c.file()).display().to_string())
            .collect();
        println!("plots: {}", files.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}
