//! Static checks of a candidate before it runs, each with a reason: a python code block,
//! valid syntax, the entry point, a `@triton.jit` kernel, and in strict mode no PyTorch
//! compute outside the declared library ops, no `try`/`except`, no extra CUDA streams.
//! The checks parse the code with Python's own `ast` (`checker.py`, run with the runtime's
//! Python; nothing of the candidate is imported or run).

use crate::error::CheckerError;
use crate::extract::{extract_code, Extract};
use crate::prompt::PromptMode;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

pub const CHECKER_SOURCE: &str = include_str!("checker.py");

/// The static verdict on one answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum StaticVerdict {
    /// Passed; the extracted code.
    Pass(String),
    /// The answer has no python code block.
    NoCode,
    /// The code fails a check, for this reason.
    Rejected { code: String, reason: String },
}

pub struct StaticChecker {
    python: PathBuf,
    script: PathBuf,
}

impl StaticChecker {
    /// Writes the checker script into `dir` and uses `python` to run it.
    pub fn new(python: impl Into<PathBuf>, dir: &Path) -> Result<Self, CheckerError> {
        let python = python.into();
        let script = dir.join("drtc_llm_checker.py");
        let fresh = std::fs::read_to_string(&script).is_ok_and(|s| s == CHECKER_SOURCE);
        if !fresh {
            std::fs::create_dir_all(dir)
                .and_then(|_| {
                    // unique per process and thread: checkers made at once in one process
                    // (parallel tests, concurrent searches) must not share a temporary file
                    let thread: String = format!("{:?}", std::thread::current().id())
                        .chars()
                        .filter(char::is_ascii_digit)
                        .collect();
                    let tmp = dir.join(format!(
                        "drtc_llm_checker.{}.{thread}.tmp",
                        std::process::id()
                    ));
                    std::fs::write(&tmp, CHECKER_SOURCE)?;
                    std::fs::rename(&tmp, &script)
                })
                .map_err(|e| CheckerError {
                    python: python.clone(),
                    detail: format!("cannot write {}: {e}", script.display()),
                })?;
        }
        Ok(StaticChecker { python, script })
    }

    fn run(&self, request: &Value) -> Result<Value, CheckerError> {
        let err = |detail: String| CheckerError {
            python: self.python.clone(),
            detail,
        };
        let mut child = drtc_env::python_command(&self.python)
            .arg(&self.script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| err(e.to_string()))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(request.to_string().as_bytes())
                .map_err(|e| err(e.to_string()))?;
        }
        let out = child.wait_with_output().map_err(|e| err(e.to_string()))?;
        if !out.status.success() {
            return Err(err(String::from_utf8_lossy(&out.stderr).trim().to_string()));
        }
        serde_json::from_slice(&out.stdout).map_err(|e| err(format!("bad answer: {e}")))
    }

    /// Checks `code` (already extracted) for `mode`'s entry point and the rules.
    pub fn check_code(
        &self,
        code: &str,
        mode: PromptMode,
        strict: bool,
        library_ops: &[String],
    ) -> Result<Option<String>, CheckerError> {
        let v = self.run(&json!({
            "op": "check",
            "code": code,
            "entry": mode.entry_point(),
            "strict": strict,
            "library_ops": library_ops,
        }))?;
        Ok(if v["ok"] == true {
            None
        } else {
            Some(v["reason"].as_str().unwrap_or("rejected").to_string())
        })
    }

    /// Extracts the code of `answer` and checks it.
    pub fn check_answer(
        &self,
        answer: &str,
        which: Extract,
        mode: PromptMode,
        strict: bool,
        library_ops: &[String],
    ) -> Result<StaticVerdict, CheckerError> {
        let Some(code) = extract_code(answer, which) else {
            return Ok(StaticVerdict::NoCode);
        };
        Ok(match self.check_code(&code, mode, strict, library_ops)? {
            None => StaticVerdict::Pass(code),
            Some(reason) => StaticVerdict::Rejected { code, reason },
        })
    }

    /// The library ops a reference program calls (conv, matmul families, `@`), which strict
    /// mode lets its candidates call through PyTorch.
    pub fn declared_library_ops(&self, reference: &str) -> Result<Vec<String>, CheckerError> {
        let v = self.run(&json!({"op": "declared", "reference": reference}))?;
        Ok(v["library_ops"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect())
    }
}
