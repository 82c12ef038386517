//! Runs synthesized programs in PyTorch (one batched Python process) and rejects those that
//! fail: errors, outputs whose shapes differ from the IR's, NaN or Inf outputs. The seed
//! generator had such a check but never called it; here every program goes through it.

use super::generate::SynthProgram;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

const SCRIPT: &str = include_str!("validate.py");

/// Where programs run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    Cpu,
    Cuda,
}

impl Device {
    pub fn name(self) -> &'static str {
        match self {
            Device::Cpu => "cpu",
            Device::Cuda => "cuda",
        }
    }
}

/// Why validation itself could not run.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    #[error("cannot start `{python}`: {source}")]
    Spawn {
        python: String,
        source: std::io::Error,
    },
    #[error("the validation worker failed: {0}")]
    Worker(String),
}

/// The verdict on one program: `None` = it ran and its outputs are finite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub index: usize,
    pub rejection: Option<String>,
}

/// The Python interpreter drtc uses (`drtc_env`'s locator: `$DRTC_PYTHON`, else the venv
/// of `drtc setup` under `$DRTC_HOME`). When there is none, the venv's path: starting it
/// then fails with that path in the message, rather than running some other Python.
pub fn default_python() -> String {
    let home = drtc_env::DrtcHome::from_env();
    match drtc_env::PythonEnv::locate(&home) {
        Ok(env) => env.python.display().to_string(),
        Err(_) => home.venv_python().display().to_string(),
    }
}

/// Runs `programs` in one Python process, each on the inputs of `trials` seeds, and
/// returns a verdict for each, in order.
pub fn validate(
    python: &str,
    device: Device,
    trials: usize,
    programs: &[&SynthProgram],
) -> Result<Vec<Verdict>, ValidateError> {
    // run from an empty folder: `python -c` puts the working folder first on sys.path, and
    // a stray `re.py` or `json.py` there would shadow the standard library
    let cwd = std::env::temp_dir().join(format!("drtc-synth-validate-{}", std::process::id()));
    std::fs::create_dir_all(&cwd).map_err(|e| ValidateError::Worker(e.to_string()))?;
    let mut child = Command::new(python)
        .current_dir(&cwd)
        .args(["-c", SCRIPT, device.name(), &trials.max(1).to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| ValidateError::Spawn {
            python: python.to_string(),
            source,
        })?;
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| ValidateError::Worker("no stdin".into()))?;
    let jobs: Vec<String> = programs
        .iter()
        .map(|p| {
            let shapes: Vec<&Vec<i64>> = p
                .graph
                .outputs()
                .iter()
                .map(|&v| &p.graph.ty(v).shape)
                .collect();
            serde_json::json!({"index": p.index, "pytorch": p.python, "shapes": shapes}).to_string()
        })
        .collect();
    let writer = std::thread::spawn(move || {
        for j in jobs {
            if writeln!(stdin, "{j}").is_err() {
                break;
            }
        }
    });
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| ValidateError::Worker("no stdout".into()))?;
    let mut verdicts = vec![];
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| ValidateError::Worker(e.to_string()))?;
        let v: serde_json::Value = serde_json::from_str(&line)
            .map_err(|e| ValidateError::Worker(format!("{e}: {line}")))?;
        let index = v["index"].as_u64().unwrap_or(u64::MAX) as usize;
        let rejection = v["reason"].as_str().map(str::to_string);
        verdicts.push(Verdict { index, rejection });
    }
    let _ = writer.join();
    let out = child
        .wait_with_output()
        .map_err(|e| ValidateError::Worker(e.to_string()))?;
    if verdicts.len() != programs.len() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(5).collect();
        return Err(ValidateError::Worker(format!(
            "answered {} of {} programs; stderr: {}",
            verdicts.len(),
            programs.len(),
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        )));
    }
    Ok(verdicts)
}
