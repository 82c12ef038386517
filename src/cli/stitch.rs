//! `drtc stitch`: builds each whole program from one kernel module per subproblem (written
//! by `drtc decompose`; the kernels may come from templates, a language model or a
//! person). Every kernel module defines `triton_fused_operator(*inputs)` returning the
//! list of its subproblem's outputs; the stitched module loads each one in its own
//! namespace and calls them in order, passing values by the names the subproblems read
//! and write. The result is what `drtc verify` takes: a seed program's
//! `triton_fused_operator`, or a KernelBench program's `ModelNew` (subclassing the
//! reference's `Model`, so it owns the same parameters).

use super::codegen_args::GuardArg;
use super::error::{DriverError, DriverResult};
use super::files::read_file;
use super::overrides::overrides;
use super::pipeline::prepare;
use clap::Args;
use drtc::driver::constants::ConstantOverride;
use drtc::driver::load::load_programs;
use drtc::driver::stitch::this_drtc;
use drtc::driver::stitch::{stitched_module, Piece};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(
    about = "Build whole programs from one kernel module per subproblem",
    long_about = concat!(
        "Reads the programs (the file given to `drtc decompose`, with the \
same --set/--shrink), their subproblems (`drtc decompose`'s output) and one kernel module per \
subproblem (JSON lines with the module's Python source in `module` or `code`, matched by \
`source_line` and `subproblem`, or else by position), and writes for each program a module \
that `drtc verify` accepts. OUT ending in `.jsonl`: one JSON line per program \
(`source_line`, `module`), as `drtc compile` writes for `.jsonl` input; otherwise, one \
program: OUT is that module file; several: OUT is a directory with one module per program \
(`program_LINE.py`).\n\nThe stitched module guards its inputs as `drtc compile`'s modules do \
(--guard): other shapes or dtypes are compiled again with drtc's own templates, computed by \
the reference, or refused with a ValueError.\n\nExample:\n  drtc stitch --programs model.py --subproblems \
sub.jsonl --kernels kernels.jsonl -o model_stitched.py",
        exit_status_help!()
    )
)]
pub struct StitchArgs {
    /// The programs that were decomposed.
    #[arg(long)]
    pub programs: PathBuf,
    /// The subproblems (`drtc decompose -o`).
    #[arg(long)]
    pub subproblems: PathBuf,
    /// One kernel module per subproblem (JSON lines).
    #[arg(long)]
    pub kernels: PathBuf,
    /// The stitched module (one program), a directory of them (`program_LINE.py`), or with a
    /// `.jsonl` name one JSON line per program.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Override a module-level constant of the program (repeatable), as for decompose.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<ConstantOverride>,
    /// Cap size constants by their names, as for decompose.
    #[arg(long)]
    pub shrink: bool,
    /// The pass pipeline given to decompose, if any.
    #[arg(long, value_name = "PIPELINE")]
    pub passes: Option<String>,
    /// What the stitched module does when called with inputs the kernels were not written
    /// for (recompiling uses drtc's templates).
    #[arg(long, value_enum, default_value = "recompile")]
    pub guard: GuardArg,
}

fn json_lines(path: &Path) -> DriverResult<Vec<Value>> {
    let text = read_file(path)?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| {
                DriverError::Reported(format!("{}:{}: not JSON: {e}", path.display(), i + 1))
            })
        })
        .collect()
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

pub fn run(args: StitchArgs) -> DriverResult<ExitCode> {
    let contents = read_file(&args.programs)?;
    let ov = overrides(&args.programs, &contents, &args.set, args.shrink);
    super::overrides::say_overrides(&ov, &args.set);
    let programs =
        load_programs(&args.programs, &contents, &ov, None).map_err(DriverError::Reported)?;
    let subs = json_lines(&args.subproblems)?;
    let kernels = json_lines(&args.kernels)?;
    // kernels by (source line, subproblem) when they say so, else by position
    let mut keyed: BTreeMap<(Option<u64>, u64), String> = BTreeMap::new();
    for (i, k) in kernels.iter().enumerate() {
        let module = k["module"]
            .as_str()
            .or_else(|| k["code"].as_str())
            .ok_or_else(|| {
                DriverError::Reported(format!(
                    "{}:{}: no `module` (or `code`) field",
                    args.kernels.display(),
                    i + 1
                ))
            })?;
        let key = match k["subproblem"].as_u64() {
            Some(s) => (k["source_line"].as_u64(), s),
            None => {
                let s = subs.get(i).ok_or_else(|| {
                    DriverError::Reported(format!(
                        "{}: more kernels than subproblems",
                        args.kernels.display()
                    ))
                })?;
                (
                    s["source_line"].as_u64(),
                    s["subproblem"].as_u64().unwrap_or(0),
                )
            }
        };
        keyed.insert(key, module.to_string());
    }
    let mut modules: Vec<(String, Option<usize>, String)> = vec![];
    let mut missing = vec![];
    for p in programs {
        let mut p = p.map_err(|e| DriverError::Reported(format!("{}: {}", e.name, e.message)))?;
        prepare(&mut p.graph, args.passes.as_deref())?;
        let line = p.line.map(|l| l as u64);
        let mut pieces: Vec<Piece> = vec![];
        for s in subs.iter().filter(|s| s["source_line"].as_u64() == line) {
            let index = s["subproblem"].as_u64().unwrap_or(0);
            match keyed.get(&(line, index)) {
                Some(module) => pieces.push(Piece {
                    index: index as usize,
                    reads: strings(s, "reads"),
                    writes: strings(s, "writes"),
                    module: module.clone(),
                }),
                None => missing.push(format!("{} subproblem {index}", p.name)),
            }
        }
        pieces.sort_by_key(|p| p.index);
        if pieces.is_empty() {
            missing.push(format!("{}: no subproblems", p.name));
            continue;
        }
        let stem = match p.line {
            Some(l) => format!("program_{l}.py"),
            None => "program.py".to_string(),
        };
        modules.push((
            stem,
            p.line,
            stitched_module(&p, &pieces, args.guard.mode(), this_drtc()),
        ));
    }
    if !missing.is_empty() {
        return Err(DriverError::Reported(format!(
            "no kernel for: {}",
            missing.join(", ")
        )));
    }
    let write = |path: &Path, text: &str| {
        std::fs::write(path, text).map_err(|source| DriverError::Write {
            path: path.display().to_string(),
            source,
        })
    };
    let as_lines = args.output.extension().is_some_and(|e| e == "jsonl");
    if as_lines {
        // one JSON line per program, as `drtc compile` writes for `.jsonl` input
        let lines: Vec<String> = modules
            .iter()
            .map(|(_, line, text)| {
                serde_json::json!({"source_line": line, "module": text}).to_string()
            })
            .collect();
        write(&args.output, &(lines.join("\n") + "\n"))?;
    } else if modules.len() == 1 {
        if args.output.is_dir() {
            return Err(DriverError::Reported(format!(
                "one program: -o names the module file, and `{}` is a directory",
                args.output.display()
            )));
        }
        write(&args.output, &modules[0].2)?;
    } else {
        if args.output.exists() && !args.output.is_dir() {
            return Err(DriverError::Reported(format!(
                "{} programs: -o names a directory (one module per program) or a `.jsonl` \
                 file (one JSON line per program), and `{}` is a file",
                modules.len(),
                args.output.display()
            )));
        }
        std::fs::create_dir_all(&args.output).map_err(|source| DriverError::Write {
            path: args.output.display().to_string(),
            source,
        })?;
        for (name, _, text) in &modules {
            write(&args.output.join(name), text)?;
        }
    }
    eprintln!(
        "stitched {} program(s) into {}",
        modules.len(),
        args.output.display()
    );
    Ok(ExitCode::SUCCESS)
}
