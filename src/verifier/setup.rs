//! `drtc setup`: creates the pinned Python environment (torch, triton, numpy, ortools; see
//! `data/runtime/requirements.txt`) with `uv` when it is on PATH, else with `venv` and
//! pip. Idempotent: when the environment already holds the pinned versions it does nothing.

use super::env::{pinned_python, pins, DrtcHome, PythonEnv, PythonSource, REQUIREMENTS};
use super::error::{RuntimeError, RuntimeResult};
use std::path::PathBuf;
use std::process::Command;

/// The tool that builds the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installer {
    Uv,
    Pip,
}

/// One command of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub program: String,
    pub args: Vec<String>,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.program)?;
        for a in &self.args {
            write!(f, " {a}")?;
        }
        Ok(())
    }
}

/// What `drtc setup` will do.
#[derive(Debug, Clone)]
pub struct SetupPlan {
    pub venv: PathBuf,
    pub installer: Installer,
    pub requirements: PathBuf,
    /// Empty when the environment is already up to date.
    pub steps: Vec<Step>,
    /// Packages whose installed version differs from the pin (name, installed).
    pub outdated: Vec<(String, Option<String>)>,
}

/// Packages of the venv at `home` that are missing or not at their pinned version.
pub fn outdated(home: &DrtcHome) -> RuntimeResult<Vec<(String, Option<String>)>> {
    let env = PythonEnv {
        python: home.venv_python(),
        source: PythonSource::DrtcVenv,
    };
    let pins = pins();
    let names: Vec<&str> = pins.iter().map(|p| p.name.as_str()).collect();
    let installed = env.installed_versions(&names)?;
    Ok(pins
        .iter()
        .zip(installed)
        .filter(|(pin, (_, v))| v.as_deref() != Some(pin.version.as_str()))
        .map(|(_, iv)| iv)
        .collect())
}

/// Decides the steps. `base_python` is the interpreter the venv is made from when pip is
/// used (default `python3.X` for the pinned X, else `python3`).
pub fn plan(home: &DrtcHome, base_python: Option<&str>) -> RuntimeResult<SetupPlan> {
    let venv = home.venv();
    let python = home.venv_python();
    let requirements = home.root.join("requirements.txt");
    let installer = if command_works("uv", &["--version"]) {
        Installer::Uv
    } else {
        Installer::Pip
    };
    let exists = python.is_file();
    let outdated = if exists {
        outdated(home)?
    } else {
        pins().into_iter().map(|p| (p.name, None)).collect()
    };
    let mut steps = Vec::new();
    let s = |program: &str, args: &[&str]| Step {
        program: program.to_string(),
        args: args.iter().map(|a| a.to_string()).collect(),
    };
    let venv_s = venv.display().to_string();
    let python_s = python.display().to_string();
    let req_s = requirements.display().to_string();
    if !exists {
        match installer {
            Installer::Uv => {
                let py = base_python.unwrap_or(pinned_python());
                steps.push(s("uv", &["venv", "--seed", "--python", py, &venv_s]));
            }
            Installer::Pip => {
                let default = format!("python{}", pinned_python());
                let py = base_python.map(str::to_string).unwrap_or_else(|| {
                    if command_works(&default, &["--version"]) {
                        default
                    } else {
                        "python3".to_string()
                    }
                });
                steps.push(s(&py, &["-m", "venv", &venv_s]));
            }
        }
    }
    if !outdated.is_empty() {
        match installer {
            Installer::Uv => steps.push(s(
                "uv",
                &["pip", "install", "--python", &python_s, "-r", &req_s],
            )),
            Installer::Pip => steps.push(s(&python_s, &["-m", "pip", "install", "-r", &req_s])),
        }
    }
    Ok(SetupPlan {
        venv,
        installer,
        requirements,
        steps,
        outdated,
    })
}

/// Runs the plan, streaming the tools' output to the terminal.
pub fn execute(plan: &SetupPlan) -> RuntimeResult<()> {
    if plan.steps.is_empty() {
        return Ok(());
    }
    if let Some(dir) = plan.requirements.parent() {
        std::fs::create_dir_all(dir).map_err(|e| RuntimeError::io(dir, e))?;
    }
    std::fs::write(&plan.requirements, REQUIREMENTS)
        .map_err(|e| RuntimeError::io(&plan.requirements, e))?;
    for step in &plan.steps {
        eprintln!("drtc setup: {step}");
        let status = Command::new(&step.program)
            .args(&step.args)
            .status()
            .map_err(|source| RuntimeError::Spawn {
                python: step.program.clone(),
                source,
            })?;
        if !status.success() {
            return Err(RuntimeError::Setup(format!("`{step}` failed ({status})")));
        }
    }
    Ok(())
}

fn command_works(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
