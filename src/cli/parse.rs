//! `drtc parse FILE`: reads a KernelBench program, a seed program or a `.jsonl` file of seed
//! programs, lowers it (natively, no Python; or with `--frontend export` through
//! torch.export) and prints the IR, its JSON form, or its
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
    /// Which frontend reads the program: `native` (drtc's parser, no Python), `export`
    /// (torch.export in drtc's Python environment) or `auto` (native, else export).
    #[arg(long, value_enum, default_value = "native")]
    pub frontend: drtc::driver::frontend::Frontend,
}

/// One graph as the arguments ask: its signature, text or JSON.
fn show(args: &ParseArgs, graph: &drtc_ir::Graph) -> DriverResult<String> {
    Ok(if args.signature {
        Signature::of(graph).to_json()
    } else {
        match args.format {
            IrFormat::Text => drtc_ir::text::print(graph),
            IrFormat::Json => serde_json::to_string_pretty(graph)
                .map_err(|e| DriverError::Reported(e.to_string()))?,
        }
    })
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
    if args.frontend != drtc::driver::frontend::Frontend::Native {
        let loaded = drtc::driver::program::load_programs_with_types(
            &args.file,
            &contents,
            &[],
            args.line,
            None,
            args.frontend,
        )
        .map_err(DriverError::Reported)?;
        programs.clear();
        for p in loaded {
            match p {
                Ok(p) => printed.push(show(&args, &p.graph)?),
                Err(e) => failures.push(e.message),
            }
        }
    }
    for p in programs {
        let (program, result) = match p {
            Ok(p) => {
                let r = lower(&p.text).map(|l| l.graph);
                (p, r)
            }
            Err((e, p)) => (p, Err(e)),
        };
        match result {
            Ok(graph) => printed.push(show(&args, &graph)?),
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
