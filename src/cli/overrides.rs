//! Module-level constants a command overrides (`--set`, `--shrink`), and the line that
//! says what `--shrink` chose.

use drtc::driver::constants::ConstantOverride;
use std::path::Path;

/// The overrides for `file`: `--set`, plus the size caps with `--shrink` (`.py` only).
/// Says on stderr which constants `--shrink` changed (the ones not given with `--set`).
pub fn say_overrides(all: &[ConstantOverride], set: &[ConstantOverride]) {
    let shrunk: Vec<String> = all
        .iter()
        .filter(|o| !set.iter().any(|s| s.name == o.name))
        .map(|o| format!("{}={}", o.name, o.value))
        .collect();
    if !shrunk.is_empty() {
        eprintln!(
            "--shrink set {} (--set NAME=VALUE chooses other values)",
            shrunk.join(", ")
        );
    }
}

/// Says which sizes a shrunk program was loaded with after the first ones failed.
pub fn say_fallback(used: &[ConstantOverride]) {
    let all: Vec<String> = used
        .iter()
        .map(|o| format!("{}={}", o.name, o.value))
        .collect();
    eprintln!(
        "--shrink: the program did not load with those sizes; loaded with {} instead",
        all.join(", ")
    );
}

pub fn overrides(
    file: &Path,
    contents: &str,
    set: &[ConstantOverride],
    shrink: bool,
) -> Vec<ConstantOverride> {
    let python = file.extension().is_some_and(|e| e == "py");
    drtc::driver::shrink::merged_overrides(contents, set, shrink && python)
}
