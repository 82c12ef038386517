//! `drtc parse FILE`: reads a KernelBench program, a seed program or a `.jsonl` file of seed
//! programs, lowers it (natively, no Python; or with `--frontend export` through
//! torch.export) and prints the IR, its JSON form, or its
//! signature (input, parameter and output types; what tests compare with PyTorch).

use super::error::{DriverError, DriverResult};
use super::files::read_file;
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

#[derive(clap::Args, Debug)]
#[command(
    about = "Lower a PyTorch program (KernelBench or seed format) to IR and print it",
    long_about = concat!(
        "Reads a KernelBench program (`Model`), a seed program (`fused_operator`) or a `.jsonl` of seed programs, lowers it to drtc's IR and prints the IR as text or JSON, or only its signature (input, parameter and output types). --frontend defaults to `auto`, as for `drtc compile`: drtc's own parser when it accepts the program, torch.export otherwise (whole models with `if`, `for`, `nn.Sequential`, LSTM...); `native` never starts Python. --set and --shrink rewrite module constants first, as for `drtc compile`.\n\nExample:\n  drtc parse model.py --shrink --signature",
        exit_status_help!()
    )
)]
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
    /// Which frontend reads the program, as for `drtc compile` (same default): `native`
    /// (drtc's parser, no Python), `export` (torch.export in drtc's Python environment) or
    /// `auto` (native when it accepts the program, export otherwise).
    #[arg(long, value_enum, default_value = "auto")]
    pub frontend: drtc::driver::frontend::Frontend,
    /// Override a module-level constant of the program, e.g. `--set batch_size=2`
    /// (repeatable), as for `drtc compile`.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<drtc::driver::constants::ConstantOverride>,
    /// Cap size constants by name (batch, spatial, channel, matrix dims), as for `drtc
    /// compile`; explicit --set values win. Says what it changed on stderr.
    #[arg(long)]
    pub shrink: bool,
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
    let overrides = super::overrides::overrides(&args.file, &contents, &args.set, args.shrink);
    super::overrides::say_overrides(&overrides, &args.set);
    if args.frontend != drtc::driver::frontend::Frontend::Native || !overrides.is_empty() {
        let loaded = drtc::driver::load::load_programs_with_types(
            &args.file,
            &contents,
            &overrides,
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
