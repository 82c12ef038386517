//! `drtc synth-report`: statistics of a synthesized set.

use super::DriverResult;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// Summarize a synthesized set: op and op-pair histograms, ranks, dims, FLOPs, distinct rate.
#[derive(Args, Debug)]
pub struct SynthReportArgs {
    /// A JSON-lines file written by `drtc synth`.
    pub input: PathBuf,
}

pub fn run(_args: SynthReportArgs) -> DriverResult<ExitCode> {
    Ok(ExitCode::SUCCESS)
}
