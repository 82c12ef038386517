//! The command line: one file per subcommand, registered in [`Command`].

mod synth;
mod synth_bench;
mod synth_plot;
mod synth_report;

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
    Synth(synth::SynthArgs),
    SynthReport(synth_report::SynthReportArgs),
    SynthBench(synth_bench::SynthBenchArgs),
}

pub fn run(cli: Cli) -> DriverResult<ExitCode> {
    match cli.command {
        Command::Synth(args) => synth::run(args),
        Command::SynthReport(args) => synth_report::run(args),
        Command::SynthBench(args) => synth_bench::run(args),
    }
}
