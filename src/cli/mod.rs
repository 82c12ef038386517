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
mod compile;
mod compile_cache;
mod compile_check;
mod compile_llm;
mod dataset;
mod decompose;
mod devices;
mod eval;
pub mod exit;
mod fmt;
mod ir_file;
mod layout_arg;
mod llm_args;
mod ops;
mod opt;
mod parse;
mod ray_arg;
mod search_arg;
mod service;
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
mod synth_ray;
mod synth_report;
mod trials_arg;
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
    /// A message already rendered for the user (diagnostics with carets, lists of errors)
    /// about the input: usage, a program drtc refuses, a broken reference.
    #[error("{0}")]
    Reported(String),
    /// drtc itself failed: its Python runtime could not start or answer.
    #[error("{0}")]
    Failed(String),
}

impl DriverError {
    /// The exit status of this error ([`exit`]): 2 for the input, 3 for drtc's own failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            DriverError::Read { .. } | DriverError::Write { .. } | DriverError::Reported(_) => {
                exit::BAD_INPUT
            }
            DriverError::Failed(_) => exit::DRTC_FAILED,
        }
    }

    /// The message without any leading `error:` of its own: the caller adds the one prefix.
    pub fn message(&self) -> String {
        without_error_prefix(&self.to_string()).to_string()
    }
}

/// `text` without leading `error:` / `Error:` prefixes (renderers such as ariadne add their
/// own): drtc prints exactly one.
pub fn without_error_prefix(mut text: &str) -> &str {
    loop {
        let t = text.trim_start();
        match t.get(..6) {
            Some(p) if p.eq_ignore_ascii_case("error:") => text = &t[6..],
            _ => return t,
        }
    }
}

pub type DriverResult<T> = Result<T, DriverError>;

/// `n` and `word`, in the plural unless `n` is 1: "1 kernel", "3 regions".
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Reads a file, mapping the error to a driver error naming the path.
pub fn read_file(path: &std::path::Path) -> DriverResult<String> {
    std::fs::read_to_string(path).map_err(|source| DriverError::Read {
        path: path.display().to_string(),
        source,
    })
}

/// Checks, before any work, that `path` can be written as a file: not a directory, in a
/// folder that exists, creatable or writable (an existing file is left as it is; a probe
/// file is removed again).
pub fn check_writable_file(path: &std::path::Path) -> DriverResult<()> {
    let shown = path.display().to_string();
    if path.is_dir() {
        return Err(DriverError::Reported(format!(
            "`{shown}` is a directory; give the path of a file to write"
        )));
    }
    let existed = path.exists();
    match std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
    {
        Ok(_) => {
            if !existed {
                let _ = std::fs::remove_file(path);
            }
            Ok(())
        }
        Err(source) => Err(DriverError::Write {
            path: shown,
            source,
        }),
    }
}

/// Checks, before any work, that `path` is (or can be created as) a writable directory.
pub fn check_writable_dir(path: &std::path::Path) -> DriverResult<()> {
    let shown = path.display().to_string();
    if path.exists() && !path.is_dir() {
        return Err(DriverError::Reported(format!(
            "`{shown}` is a file; give a directory (created when missing)"
        )));
    }
    std::fs::create_dir_all(path).map_err(|source| DriverError::Write {
        path: shown.clone(),
        source,
    })?;
    check_writable_file(&path.join(format!(".drtc-write-check-{}", std::process::id())))
}

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
            compile::BackendArg::Template => {
                if let Some(sub) = matches.subcommand_matches("compile") {
                    compile::refuse_llm_options(sub)?;
                }
                compile::run_template(args)
            }
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
