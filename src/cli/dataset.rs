//! `drtc dataset`: programs (a seed `.jsonl`, a `.py`, or a directory of them) into a
//! Parquet training set in verl's schema, with prompts from the shared templates.

use super::error::{DriverError, DriverResult};
use clap::Args;
use drtc::dataset::{build, input_files, write_all, DatasetMode, DatasetOptions};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(
    about = "Write a verl training set (Parquet) of prompts and reference programs",
    long_about = concat!(
        "Reads programs (a `.jsonl` of seed programs as `drtc synth` writes \
them, a KernelBench or seed `.py`, a `.drt`, or a directory tree of those) and writes one \
Parquet row per task in the schema verl's RL trainer reads:\n\n  data_source   string\n  \
prompt        list of {role, content} (the shared templates of data/prompts/)\n  ability       \
string\n  reward_model  {style: \"rule\", ground_truth: <the reference program>}\n  \
extra_info    {split, index, ops, level, flops, num_ops, source, mode, entry_point}\n\n\
--mode regions (default) splits every program into fusable subproblems of at most \
--max-ops ops and asks for a `triton_fused_operator` per subproblem; --mode whole asks for \
the whole program (`ModelNew` for KernelBench files). Rows are in curriculum order (level \
0 first: 1 op, then 2, 3, 5, 10, 20 ops), and each level is also written to \
`OUT.levelL.parquet`; with --test-fraction, held-out rows go to `OUT.test.parquet`. \
Identical tasks are written once. Score answers with the reward `drtc.reward` \
(python/drtc/reward.py).\n\nExample:\n  drtc synth --ops 3 --count 100 -o synth.jsonl\n  \
drtc dataset synth.jsonl -o train.parquet --mode whole",
        exit_status_help!()
    )
)]
pub struct DatasetArgs {
    /// A `.jsonl` of seed programs, a `.py` or `.drt` program, or a directory of them.
    pub input: PathBuf,
    /// The Parquet file to write (train rows, all levels).
    #[arg(short, long)]
    pub output: PathBuf,
    /// One row per fusable subproblem (`regions`) or per program (`whole`).
    #[arg(long, value_enum, default_value = "regions")]
    pub mode: DatasetMode,
    /// Regions mode: most ops in one subproblem.
    #[arg(long, default_value_t = 8)]
    pub max_ops: usize,
    /// The GPU the prompts name.
    #[arg(long, default_value = "NVIDIA H200")]
    pub gpu: String,
    /// The dtype the prompts name (default: the program's first input's dtype).
    #[arg(long)]
    pub dtype: Option<String>,
    /// A user-message template replacing the shared one (`{{program}}`, `{{gpu}}`, ...).
    #[arg(long)]
    pub prompt: Option<PathBuf>,
    /// `data_source` of every row.
    #[arg(long, default_value = "drtc")]
    pub data_source: String,
    /// Share of each level held out as the test split, 0..1.
    #[arg(long, default_value_t = 0.0)]
    pub test_fraction: f64,
}

pub fn run(args: DatasetArgs) -> DriverResult<ExitCode> {
    if !(0.0..1.0).contains(&args.test_fraction) {
        return Err(DriverError::Reported(
            "--test-fraction must be in [0, 1)".into(),
        ));
    }
    if args.max_ops == 0 {
        return Err(DriverError::Reported("--max-ops must be at least 1".into()));
    }
    let files = input_files(&args.input).map_err(DriverError::Reported)?;
    let options = DatasetOptions {
        mode: args.mode,
        max_ops: args.max_ops,
        gpu: args.gpu,
        dtype: args.dtype,
        template: args.prompt,
        data_source: args.data_source,
        test_fraction: args.test_fraction,
        ..DatasetOptions::default()
    };
    let d = build(&files, &options);
    for (source, reason) in &d.skipped {
        eprintln!("{source}: skipped: {reason}");
    }
    if d.rows.is_empty() {
        return Err(DriverError::Reported(format!(
            "no task could be made from `{}` ({} programs skipped)",
            args.input.display(),
            d.skipped.len()
        )));
    }
    let written = write_all(&d, &args.output).map_err(DriverError::Reported)?;
    for (path, n) in &written {
        eprintln!("wrote {n} rows to {}", path.display());
    }
    if d.duplicates > 0 {
        eprintln!("{} duplicate tasks written once", d.duplicates);
    }
    Ok(if d.skipped.is_empty() {
        ExitCode::SUCCESS
    } else {
        // programs that could not be read: the input (exit 2)
        ExitCode::from(super::exit::BAD_INPUT)
    })
}
