//! `drtc opt`: runs a pass pipeline over a `.drt` file and prints the result, the compiler
//! researcher's loop for trying passes: the IR can be captured after chosen passes, each
//! pass's decisions shown and its time measured, and the IR is verified after every pass.

use super::error::{DriverError, DriverResult};
use super::ir_file;
use clap::Args;
use drtc_ir::text;
use drtc_passes::{registry, ManagerOptions, PassError, PassEvent, PassManager};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(
    about = "Run a pass pipeline over an IR file",
    long_about = concat!(
        "Parses and verifies a `.drt` IR file, runs the pass pipeline given by \
--passes over it and prints the resulting IR to stdout. The verifier runs after every pass; \
a pass that leaves invalid IR stops the run with the verifier's errors and the pass's name.\n\n\
A pipeline is a comma-separated list of passes, each with optional options in braces: \
`dce,cse{commutative=false},dce`.",
        exit_status_help!()
    ),
    after_help = after_help()
)]
pub struct OptArgs {
    /// The `.drt` file to optimize.
    pub file: PathBuf,
    /// The pipeline to run, e.g. `cse,dce`.
    #[arg(long, short = 'p', value_name = "PIPELINE")]
    pub passes: String,
    /// Print the IR after every run of PASS to stderr, under a header naming it
    /// (repeatable).
    #[arg(long, value_name = "PASS")]
    pub print_ir_after: Vec<String>,
    /// Print a table of the time each pass took (and whether it changed the IR) to stderr.
    #[arg(long)]
    pub time_passes: bool,
    /// Print each pass's decisions (what it merged, removed, ...) to stderr.
    #[arg(long)]
    pub log_decisions: bool,
}

fn after_help() -> String {
    format!(
        "{}\nExamples:\n  drtc opt model.drt --passes cse,dce\n  \
drtc opt model.drt --passes 'cse{{commutative=false}},dce' --print-ir-after cse --time-passes",
        registry::describe()
    )
}

pub fn run(args: OptArgs) -> DriverResult<ExitCode> {
    let options = ManagerOptions {
        verify_each: true,
        print_ir_after: args.print_ir_after.clone(),
    };
    // check the pipeline before reading the file, so a typo is reported first
    let pm = PassManager::parse(&args.passes, options).map_err(reported)?;
    let mut graph = ir_file::load(&args.file)?.graph;
    let log_decisions = args.log_decisions;
    let mut last_decisions: (&str, Vec<String>) = ("", vec![]);
    let report = pm
        .run_with(&mut graph, &mut |event| match event {
            PassEvent::Ran(run) => {
                if log_decisions {
                    for d in &run.decisions {
                        eprintln!("// {}: {d}", run.pass);
                    }
                }
                last_decisions = (run.pass, run.decisions.clone());
            }
            // the IR after a pass comes with what the pass did and why
            PassEvent::IrAfter(dump) => {
                eprintln!("{}", dump.header());
                if !log_decisions && last_decisions.0 == dump.pass {
                    for d in &last_decisions.1 {
                        eprintln!("// {}: {d}", dump.pass);
                    }
                }
                eprint!("{}", dump.ir);
            }
        })
        .map_err(reported)?;
    if args.time_passes {
        eprint!("{}", report.timing_table());
    }
    ir_file::emit(&text::print(&graph))?;
    Ok(ExitCode::SUCCESS)
}

/// A pass-layer error as a message for the user (pipeline errors with their caret).
fn reported(e: PassError) -> DriverError {
    match e {
        PassError::Pipeline(p) => DriverError::Reported(p.render()),
        other => DriverError::Reported(other.to_string()),
    }
}
