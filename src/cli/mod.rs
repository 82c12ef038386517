//! The command line: one file per subcommand, registered in [`Command`].

mod bench_pair;
mod compile;
mod compile_llm;
mod dataset;
mod decompose;
mod devices;
mod eval;
mod fmt;
mod ir_file;
mod layout_arg;
mod llm_args;
mod ops;
mod opt;
mod parse;
mod search_arg;
mod setup;
mod stitch;
mod suite;
mod suite_report;
mod suite_results;
mod suite_table;
mod suite_task;
mod synth;
mod synth_bench;
mod synth_charts;
mod synth_plot;
mod synth_report;
mod verify;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Errors of the driver layer. Lower layers' errors are rendered into messages here.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error("cannot read `{path}`: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write `{path}`: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    /// A message already rendered for the user (diagnostics with carets, lists of errors).
    #[error("{0}")]
    Reported(String),
}

pub type DriverResult<T> = Result<T, DriverError>;

/// Reads a file, mapping the error to a driver error naming the path.
pub fn read_file(path: &std::path::Path) -> DriverResult<String> {
    std::fs::read_to_string(path).map_err(|source| DriverError::Read {
        path: path.display().to_string(),
        source,
    })
}

#[derive(Parser, Debug)]
#[command(
    name = "drtc",
    version,
    about = "Compile PyTorch programs into fast, verified Triton kernels",
    long_about = "drtc reads a PyTorch program (a KernelBench `Model` file or a DRTriton seed \
program), lowers it to a typed tensor IR, rewrites and fuses it, generates a Triton kernel \
per fused region, stitches them into one module, verifies it against PyTorch on fresh \
random inputs and, on a GPU, times it.\n\nIR files (`.drt`) use drtc's text format; see \
ARCHITECTURE.md."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Compile a program into one module of fused Triton kernels, verified against PyTorch
    Compile(compile::CompileArgs),
    /// Compile, verify and time every program of a benchmark directory
    Suite(suite::SuiteArgs),
    /// Rebuild a suite's table and summary from its JSON rows
    SuiteReport(suite_report::SuiteReportArgs),
    Fmt(fmt::FmtArgs),
    Opt(opt::OptArgs),
    /// Verify a candidate against its PyTorch reference (exit 0 only when verified)
    Verify(verify::VerifyArgs),
    /// Verify, then time a candidate against its reference on a CUDA GPU
    BenchPair(bench_pair::BenchPairArgs),
    /// Create drtc's pinned Python environment (torch, triton, numpy, ortools)
    Setup(setup::SetupArgs),
    /// List CUDA GPUs (or say that CPU mode applies)
    Devices(devices::DevicesArgs),
    /// Lower a PyTorch program (KernelBench or seed format) to IR and print it.
    Parse(parse::ParseArgs),
    Synth(synth::SynthArgs),
    SynthReport(synth_report::SynthReportArgs),
    SynthBench(synth_bench::SynthBenchArgs),
    /// Split programs into subproblems of at most N ops, one seed program each
    Decompose(decompose::DecomposeArgs),
    /// Build whole programs from one kernel module per subproblem
    Stitch(stitch::StitchArgs),
    /// Evaluate a kernel-writing language model over a benchmark (pass@k, fast_p)
    Eval(eval::EvalArgs),
    /// Write a verl training set (Parquet) of prompts and reference programs
    Dataset(dataset::DatasetArgs),
    Ops(ops::OpsArgs),
}

pub fn run(cli: Cli) -> DriverResult<ExitCode> {
    match cli.command {
        Command::Compile(args) => match args.backend {
            compile::BackendArg::Template => compile::run_template(args),
            compile::BackendArg::Llm => compile_llm::run(args),
        },
        Command::Suite(args) => suite::run(args),
        Command::SuiteReport(args) => suite_report::run(args),
        Command::Fmt(args) => fmt::run(args),
        Command::Opt(args) => opt::run(args),
        Command::Verify(args) => verify::run(args),
        Command::BenchPair(args) => bench_pair::run(args),
        Command::Setup(args) => setup::run(args),
        Command::Devices(args) => devices::run(args),
        Command::Parse(args) => parse::run(args),
        Command::Synth(args) => synth::run(args),
        Command::SynthReport(args) => synth_report::run(args),
        Command::SynthBench(args) => synth_bench::run(args),
        Command::Decompose(args) => decompose::run(args),
        Command::Stitch(args) => stitch::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Dataset(args) => dataset::run(args),
        Command::Ops(args) => ops::run(args),
    }
}
