//! Reading `.drt` files for the subcommands that take IR (`fmt`, `opt`): parse errors are
//! rendered with the offending line and a caret, verifier errors are listed one per line,
//! and warnings (dead values, legal between passes) are handed back for the caller to show.

use super::error::{DriverError, DriverResult};
use super::files::read_file;
use drtc_ir::{text, verify, Graph, VerifyError};
use std::io::Write;
use std::path::Path;

/// A parsed, verified IR file.
pub struct IrFile {
    /// The text as read.
    pub source: String,
    pub graph: Graph,
    /// The verifier's warnings (it found no errors).
    pub warnings: Vec<VerifyError>,
}

/// Reads, parses and verifies the `.drt` file at `path`.
pub fn load(path: &Path) -> DriverResult<IrFile> {
    let source = read_file(path)?;
    let name = path.display().to_string();
    let graph = text::parse(&source)
        .map_err(|e| DriverError::Reported(e.render(&source, &name).trim_end().to_string()))?;
    let (errors, warnings): (Vec<_>, Vec<_>) =
        verify(&graph).into_iter().partition(|e| e.is_error());
    if !errors.is_empty() {
        return Err(DriverError::Reported(format!(
            "{name} does not verify ({} error{}):\n{}",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" },
            list_at(&errors, &source, &name)
        )));
    }
    Ok(IrFile {
        source,
        graph,
        warnings,
    })
}

/// The 1-based line of each node statement (`%0 = ...`) of `source`, in program order:
/// the parser keeps the text's order, so a verifier finding's position is an index here.
fn node_lines(source: &str) -> Vec<usize> {
    source
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            let code = l.split("//").next().unwrap_or("").trim_start();
            code.starts_with('%') && code.contains('=')
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// Verifier findings, one per line, indented; each finding about a node followed by where
/// that node is in the text.
pub fn list_at(findings: &[VerifyError], source: &str, name: &str) -> String {
    let lines = node_lines(source);
    findings
        .iter()
        .map(|e| match e.position.and_then(|p| lines.get(p)) {
            Some(line) => format!(
                "  {e}
    --> {name}:{line}"
            ),
            None => format!("  {e}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Writes `text` to stdout, reporting failures (a closed pipe) as errors, not panics.
pub fn emit(text: &str) -> DriverResult<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|source| DriverError::Write {
            path: "<stdout>".into(),
            source,
        })
}
