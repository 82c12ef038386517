//! `drtc decompose`: splits every program of a file into subproblems of at most N ops
//! along fusion-legal cuts (the `decompose` pass) and writes one standalone seed-format
//! program per subproblem, with its provenance: the source program and line, the
//! subproblem's index, and the values of the source program it reads and writes (input
//! names, or `%k` for the result of the k-th op). `drtc stitch` puts kernels for these
//! subproblems back together.

use super::error::{DriverError, DriverResult};
use super::files::read_file;
use super::overrides::{overrides, say_overrides};
use super::pipeline::prepare;
use clap::Args;
use drtc::driver::constants::ConstantOverride;
use drtc::driver::decompose::subproblem_records;
use drtc::driver::load::load_programs;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(
    about = "Split programs into subproblems of at most N ops, one seed program each",
    long_about = concat!(
        "Reads programs (a KernelBench or seed `.py`, a `.jsonl` of seed \
programs, or a `.drt` IR file), splits each into subproblems of at most --max-ops ops along \
fusion-legal cuts (never splitting a fusable kernel, never making two subproblems depend on \
each other, cutting across small tensors first), and writes one JSON line per subproblem: \
`pytorch` (a standalone seed program: `get_inputs` with the subproblem's input shapes, \
`fused_operator`), `difficulty` (its op count), and provenance: `source`, `source_line`, \
`subproblem`, `subproblems`, `reads`, `writes`, `ops`.\n\nExample:\n  drtc decompose \
model.py --max-ops 4 -o sub.jsonl",
        exit_status_help!()
    )
)]
pub struct DecomposeArgs {
    /// The programs: `model.py`, `programs.jsonl` or `graph.drt`.
    pub file: PathBuf,
    /// Most ops in one subproblem (scalar constants not counted).
    #[arg(long, default_value_t = 8)]
    pub max_ops: usize,
    /// Where to write the subproblems (JSON lines).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Override a module-level constant of the program (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<ConstantOverride>,
    /// Cap size constants by their names (batch_size, channels, ...) for quick CPU runs.
    #[arg(long)]
    pub shrink: bool,
    /// Run this pass pipeline before decomposing, e.g. `canonicalize,simplify,dce`
    /// (`drtc stitch` must be given the same).
    #[arg(long, value_name = "PIPELINE")]
    pub passes: Option<String>,
}

pub fn run(args: DecomposeArgs) -> DriverResult<ExitCode> {
    if args.max_ops == 0 {
        return Err(DriverError::Reported("--max-ops must be at least 1".into()));
    }
    let contents = read_file(&args.file)?;
    let ov = overrides(&args.file, &contents, &args.set, args.shrink);
    say_overrides(&ov, &args.set);
    let programs =
        load_programs(&args.file, &contents, &ov, None).map_err(DriverError::Reported)?;
    let write_err = |source| DriverError::Write {
        path: args.output.display().to_string(),
        source,
    };
    let mut out = std::fs::File::create(&args.output).map_err(write_err)?;
    let (mut lines, mut failed) = (0, 0);
    for p in programs {
        let p = match p {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{}: skipped: {}", e.name, e.message);
                failed += 1;
                continue;
            }
        };
        let mut graph = p.graph.clone();
        prepare(&mut graph, args.passes.as_deref())?;
        let records = subproblem_records(&graph, &p.name, p.line, args.max_ops);
        let k = records.len();
        for record in records {
            writeln!(out, "{record}").map_err(write_err)?;
            lines += 1;
        }
        eprintln!("{}: {k} subproblems", p.name);
    }
    eprintln!(
        "wrote {lines} subproblems to {}{}",
        args.output.display(),
        if failed > 0 {
            format!(" ({failed} programs could not be loaded)")
        } else {
            String::new()
        }
    );
    Ok(if failed > 0 {
        // programs that could not be loaded: the input (exit 2)
        ExitCode::from(super::exit::BAD_INPUT)
    } else {
        ExitCode::SUCCESS
    })
}
