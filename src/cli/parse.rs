//! `drtc parse FILE`: reads a KernelBench program, a seed program or a `.jsonl` file of seed
//! programs, lowers it natively (no Python) and prints the IR, its JSON form, or its
//! signature (input, parameter and output types; what tests compare with PyTorch).

use super::{read_file, DriverError, DriverResult};
use drtc_frontends::{lower, split_programs, Signature};
use std::path::PathBuf;
use std::process::ExitCode;

/// How to print a lowered program.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum IrFormat {
    /// drtc's text format.
    Text,
    /// The graph as JSON (serde form of `drtc_ir::Graph`).
    Json,
}

/// Arguments of `drtc parse`.
#[derive(clap::Args, Debug)]
pub struct ParseArgs {
    /// A KernelBench `.py` file, a seed program, or a `.jsonl` file (one program per line, field `pytorch`).
    pub file: PathBuf,
    /// For a `.jsonl` file: only the program on this line (1-based).
    #[arg(long)]
    pub line: Option<usize>,
    /// Output format of the IR.
    #[arg(long, value_enum, default_value_t = IrFormat::Text)]
    pub format: IrFormat,
    /// Print only the signature as one JSON object per program:
    /// {"inputs": [...], "params": {...}, "outputs": [...]}.
    #[arg(long)]
    pub signature: bool,
}

pub fn run(args: ParseArgs) -> DriverResult<ExitCode> {
    let contents = read_file(&args.file)?;
    let name = args.file.display().to_string();
    let mut programs = split_programs(&name, &contents);
    if let Some(line) = args.line {
        programs.retain(|p| match p {
            Ok(p) => p.line == Some(line),
            Err((_, p)) => p.line == Some(line),
        });
        if programs.is_empty() {
            return Err(DriverError::Reported(format!(
                "`{name}` has no program on line {line}"
            )));
        }
    }
    let mut failures = vec![];
    let mut printed = vec![];
    for p in programs {
        let (program, result) = match p {
            Ok(p) => {
                let r = lower(&p.text).map(|l| l.graph);
                (p, r)
            }
            Err((e, p)) => (p, Err(e)),
        };
        match result {
            Ok(graph) => printed.push(if args.signature {
                Signature::of(&graph).to_json()
            } else {
                match args.format {
                    IrFormat::Text => drtc_ir::text::print(&graph),
                    IrFormat::Json => serde_json::to_string_pretty(&graph)
                        .map_err(|e| DriverError::Reported(e.to_string()))?,
                }
            }),
            Err(e) => failures.push(e.render(&program.name, &program.text)),
        }
    }
    let sep = if args.signature { "\n" } else { "\n\n" };
    if !printed.is_empty() {
        println!("{}", printed.join(sep).trim_end());
    }
    if failures.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(DriverError::Reported(failures.join("\n")))
    }
}
