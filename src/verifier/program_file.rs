//! Turns what the user names into a program file the worker can import: a `.py` file as
//! is, or one line of a seed `.jsonl` file (its `pytorch` field), written to drtc's cache.

use super::env::DrtcHome;
use super::error::{RuntimeError, RuntimeResult};
use super::worker::fnv1a;
use std::path::{Path, PathBuf};

/// Resolves `path` (and, for `.jsonl`, the 1-based `line`) to a Python file.
pub fn resolve(path: &Path, line: Option<usize>, home: &DrtcHome) -> RuntimeResult<PathBuf> {
    let is_jsonl = path.extension().is_some_and(|e| e == "jsonl");
    if !is_jsonl {
        if line.is_some() {
            return Err(program_error(
                path,
                "`--line` applies to `.jsonl` files only",
            ));
        }
        if !path.is_file() {
            return Err(program_error(path, "no such file"));
        }
        return Ok(path.to_path_buf());
    }
    let n =
        line.ok_or_else(|| program_error(path, "a `.jsonl` reference needs `--line N` (1-based)"))?;
    let text = std::fs::read_to_string(path).map_err(|e| RuntimeError::io(path, e))?;
    let source = seed_program(&text, n).map_err(|m| program_error(path, &m))?;
    let dir = home.dir("programs")?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("seed");
    let out = dir.join(format!(
        "{stem}-line{n}-{:08x}.py",
        fnv1a(source.as_bytes()) as u32
    ));
    std::fs::write(&out, source).map_err(|e| RuntimeError::io(&out, e))?;
    Ok(out)
}

/// The `pytorch` field of line `n` (1-based) of a seed `.jsonl` text.
pub fn seed_program(text: &str, n: usize) -> Result<String, String> {
    if n == 0 {
        return Err("lines are numbered from 1".into());
    }
    let line = text
        .lines()
        .nth(n - 1)
        .ok_or_else(|| format!("has no line {n}"))?;
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("line {n} is not JSON: {e}"))?;
    v.get("pytorch")
        .and_then(|p| p.as_str())
        .map(str::to_string)
        .ok_or_else(|| format!("line {n} has no string field `pytorch`"))
}

fn program_error(path: &Path, message: &str) -> RuntimeError {
    RuntimeError::Program {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_lines_are_one_based() {
        let text = "{\"pytorch\": \"a\", \"difficulty\": 1}\n{\"pytorch\": \"b\"}\n";
        assert_eq!(seed_program(text, 1).unwrap(), "a");
        assert_eq!(seed_program(text, 2).unwrap(), "b");
        assert!(seed_program(text, 3).unwrap_err().contains("no line 3"));
        assert!(seed_program(text, 0).is_err());
        assert!(seed_program("{\"x\": 1}", 1)
            .unwrap_err()
            .contains("pytorch"));
    }
}
