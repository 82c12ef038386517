//! `drtc fmt`: reads a `.drt` file, checks it (parse and verify) and prints it in the
//! canonical text form, so IR files in the repository stay normalized and reviewable;
//! `--check` only says whether the file already is.

use super::error::DriverResult;
use super::ir_file;
use clap::Args;
use drtc_ir::text;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(
    about = "Check an IR file and print it in canonical form",
    long_about = concat!(
        "Parses a `.drt` IR file, runs the verifier and prints the graph in drtc's \
canonical text form to stdout (nodes numbered %0, %1, ... in program order, every attribute \
explicit, comments dropped).\n\nParse errors point at the offending line and column; verifier \
errors are listed one per line and the exit status is 2. Verifier warnings (such as values \
never used) go to stderr and do not fail the command.",
        exit_status_help!()
    ),
    after_help = "Examples:\n  drtc fmt model.drt > model.fmt.drt\n  drtc fmt --check model.drt   \
# exit status 1 if model.drt is not in canonical form"
)]
pub struct FmtArgs {
    /// The `.drt` file to format.
    pub file: PathBuf,
    /// Print nothing on stdout; exit with status 1 if the file is not already formatted.
    #[arg(long)]
    pub check: bool,
}

pub fn run(args: FmtArgs) -> DriverResult<ExitCode> {
    let file = ir_file::load(&args.file)?;
    if !file.warnings.is_empty() {
        let name = args.file.display().to_string();
        let listed = ir_file::list_at(&file.warnings, &file.source, &name);
        for w in listed.lines() {
            // one finding per line as before, its place in the text after it
            eprintln!("{}", w.trim_start());
        }
    }
    let printed = text::print(&file.graph);
    if !args.check {
        ir_file::emit(&printed)?;
        return Ok(ExitCode::SUCCESS);
    }
    if printed == file.source {
        return Ok(ExitCode::SUCCESS);
    }
    let line = first_difference(&file.source, &printed);
    eprintln!(
        "{} is not formatted (first difference at line {line}); run `drtc fmt {}` to see the canonical form",
        args.file.display(),
        args.file.display()
    );
    Ok(ExitCode::FAILURE)
}

/// The 1-based number of the first line where `a` and `b` differ.
fn first_difference(a: &str, b: &str) -> usize {
    let mut la = a.split_inclusive('\n');
    let mut lb = b.split_inclusive('\n');
    let mut n = 1;
    loop {
        match (la.next(), lb.next()) {
            (Some(x), Some(y)) if x == y => n += 1,
            _ => return n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::first_difference;

    #[test]
    fn first_difference_counts_lines() {
        assert_eq!(first_difference("a\nb\nc\n", "a\nb\nd\n"), 3);
        assert_eq!(first_difference("a\n", "b\n"), 1);
        assert_eq!(first_difference("a\nb\n", "a\nb"), 2);
        assert_eq!(first_difference("a\n", "a\nb\n"), 2);
    }
}
