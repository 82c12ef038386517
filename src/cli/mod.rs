//! The command line: one file per subcommand, registered in [`Command`].

/// The exit-status paragraph every subcommand's long help ends with.
macro_rules! exit_status_help {
    () => {
        "\n\nExit status: 0 done (and verified, where something was verified); 1 the \
candidate or generated module did not verify; 2 the input is wrong (usage, a file that \
cannot be read, parsed or written, a program drtc refuses, a reference that fails on its \
own); 3 drtc failed (its Python runtime could not start or answer, an internal error)."
    };
}

mod baseline_arg;
mod bench_pair;
mod codegen_args;
mod compile;
mod compile_cache;
mod compile_check;
mod compile_llm;
mod dataset;
mod decompose;
mod devices;
mod error;
mod eval;
pub mod exit;
mod files;
mod fmt;
mod ir_file;
mod layout_arg;
mod llm_args;
mod ops;
mod opt;
mod overrides;
mod pair_args;
mod parse;
mod pipeline;
mod pool;
mod ray_arg;
mod search_arg;
mod service;
mod setup;
mod stitch;
mod suite;
mod suite_memory;
mod suite_report;
mod suite_results;
mod suite_table;
mod suite_task;
mod synth;
mod synth_bench;
mod synth_charts;
mod synth_plot;
mod synth_ray;
mod synth_report;
mod trials_arg;
mod verify;
mod words;

use error::DriverResult;
use files::{check_writable_dir, check_writable_file};

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// The outputs of a command, checked before it starts any work: an unwritable `--report`
/// must not fail after minutes of verification.
fn check_outputs(command: &Command) -> DriverResult<()> {
    let files: Vec<&std::path::Path> = match command {
        Command::Compile(a) => [Some(&a.output), a.report.as_ref()]
            .into_iter()
            .flatten()
            .map(|p| p.as_path())
            .collect(),
        Command::Suite(a) => [a.json.as_ref(), a.markdown.as_ref()]
            .into_iter()
            .flatten()
            .map(|p| p.as_path())
            .collect(),
        Command::SuiteReport(a) => a.markdown.iter().map(|p| p.as_path()).collect(),
        Command::Eval(a) => [Some(&a.output), a.markdown.as_ref()]
            .into_iter()
            .flatten()
            .map(|p| p.as_path())
            .collect(),
        Command::Decompose(a) => vec![a.output.as_path()],
        Command::Dataset(a) => vec![a.output.as_path()],
        // a shard writes to stdout
        Command::Synth(a) if a.shard.is_some() => vec![],
        Command::Synth(a) => vec![a.output.as_path()],
        Command::Stitch(a) if a.output.is_dir() => return check_writable_dir(&a.output),
        Command::Stitch(a) => vec![a.output.as_path()],
        Command::SynthReport(a) => return a.plots.as_deref().map_or(Ok(()), check_writable_dir),
        _ => vec![],
    };
    files.into_iter().try_for_each(check_writable_file)
}

#[derive(Parser, Debug)]
#[command(
    name = "drtc",
    version,
    about = "Compile PyTorch programs into fast, verified Triton kernels",
    long_about = concat!(
        "drtc reads a PyTorch program (a KernelBench `Model` file or a DRTriton seed \
program), lowers it to a typed tensor IR, rewrites and fuses it, generates a Triton kernel \
per fused region, stitches them into one module, verifies it against PyTorch on fresh \
random inputs and, on a GPU, times it.\n\nIR files (`.drt`) use drtc's text format; see \
ARCHITECTURE.md. `drtc <COMMAND> --help` explains each command.",
        exit_status_help!()
    )
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    // No doc comments on these variants: clap would take one as the subcommand's `about`
    // and reset its `long_about`. Each `...Args` carries its own `about` and `long_about`.
    Compile(compile::CompileArgs),
    Suite(suite::SuiteArgs),
    SuiteReport(suite_report::SuiteReportArgs),
    Fmt(fmt::FmtArgs),
    Opt(opt::OptArgs),
    Verify(verify::VerifyArgs),
    BenchPair(bench_pair::BenchPairArgs),
    Setup(setup::SetupArgs),
    Devices(devices::DevicesArgs),
    Parse(parse::ParseArgs),
    Synth(synth::SynthArgs),
    SynthReport(synth_report::SynthReportArgs),
    SynthBench(synth_bench::SynthBenchArgs),
    Decompose(decompose::DecomposeArgs),
    Stitch(stitch::StitchArgs),
    Eval(eval::EvalArgs),
    Dataset(dataset::DatasetArgs),
    Ops(ops::OpsArgs),
    Service(service::ServiceArgs),
}

/// Runs a parsed command line; `matches` says which options were given explicitly.
pub fn run(cli: Cli, matches: &clap::ArgMatches) -> DriverResult<ExitCode> {
    check_outputs(&cli.command)?;
    match cli.command {
        Command::Compile(args) => match args.backend {
            codegen_args::BackendArg::Template => {
                if let Some(sub) = matches.subcommand_matches("compile") {
                    compile::refuse_llm_options(sub)?;
                }
                compile::run_template(args)
            }
            codegen_args::BackendArg::Llm => compile_llm::run(args),
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
        Command::Synth(args) => match args.ray.clone() {
            Some(target) => synth_ray::run(&args, &target),
            None => synth::run(args),
        },
        Command::SynthReport(args) => synth_report::run(args),
        Command::SynthBench(args) => synth_bench::run(args),
        Command::Decompose(args) => decompose::run(args),
        Command::Stitch(args) => stitch::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Dataset(args) => dataset::run(args),
        Command::Ops(args) => ops::run(args),
        Command::Service(args) => service::run(args),
    }
}
