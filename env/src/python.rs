//! Which Python drtc runs: `DRTC_PYTHON` if set, else the environment `drtc setup` creates
//! under the home (`${DRTC_HOME:-${XDG_CACHE_HOME:-~/.cache}/drtc}/venv`); nothing else.

use crate::{pins, DrtcHome, EnvError};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

/// The one way drtc starts a Python process: `python` with drtc's launch environment
/// (output unbuffered, so a line reaches drtc when it is printed; no `.pyc` files written
/// beside drtc's generated scripts and workers). Callers add their arguments, pipes and
/// settings of their own.
pub fn python_command(python: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(python);
    cmd.env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    cmd
}

/// Where the interpreter came from (decides the fix we suggest when packages are missing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PythonSource {
    /// `DRTC_PYTHON` named it.
    EnvVar,
    /// The environment `drtc setup` made.
    DrtcVenv,
}

/// The Python interpreter drtc runs its workers with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonEnv {
    pub python: PathBuf,
    pub source: PythonSource,
}

impl PythonEnv {
    /// `DRTC_PYTHON`, else the drtc venv, else an error saying to run `drtc setup`.
    /// Every Python launch of drtc goes through here.
    pub fn locate(home: &DrtcHome) -> Result<Self, EnvError> {
        Self::locate_with(std::env::var_os("DRTC_PYTHON"), home)
    }

    pub fn locate_with(drtc_python: Option<OsString>, home: &DrtcHome) -> Result<Self, EnvError> {
        if let Some(p) = drtc_python.filter(|p| !p.is_empty()) {
            return Ok(PythonEnv {
                python: PathBuf::from(p),
                source: PythonSource::EnvVar,
            });
        }
        let python = home.venv_python();
        if python.exists() {
            Ok(PythonEnv {
                python,
                source: PythonSource::DrtcVenv,
            })
        } else {
            Err(EnvError::NoPython { venv: home.venv() })
        }
    }

    /// The command that installs `missing` for this interpreter.
    pub fn fix_hint(&self, missing: &[String]) -> String {
        match self.source {
            PythonSource::DrtcVenv => "run `drtc setup`".to_string(),
            PythonSource::EnvVar => {
                let pinned: Vec<String> = pins()
                    .into_iter()
                    .filter(|p| missing.iter().any(|m| m == &p.name))
                    .map(|p| format!("{}=={}", p.name, p.version))
                    .collect();
                let pkgs = if pinned.is_empty() {
                    missing.join(" ")
                } else {
                    pinned.join(" ")
                };
                format!(
                    "`{} -m pip install {pkgs}` (DRTC_PYTHON selects this interpreter; unset \
                     it to use the environment `drtc setup` creates)",
                    self.python.display()
                )
            }
        }
    }

    /// [`python_command`] for this interpreter.
    pub fn command(&self) -> Command {
        python_command(&self.python)
    }

    /// Installed versions of `packages` (None when missing), read from package metadata
    /// without importing anything.
    pub fn installed_versions(
        &self,
        packages: &[&str],
    ) -> Result<Vec<(String, Option<String>)>, EnvError> {
        let list = packages
            .iter()
            .map(|p| format!("{p:?}"))
            .collect::<Vec<_>>()
            .join(",");
        let script = format!(
            "import json, importlib.metadata as m\nout = []\nfor p in [{list}]:\n    try:\n        \
             out.append([p, m.version(p)])\n    except m.PackageNotFoundError:\n        \
             out.append([p, None])\nprint(json.dumps(out))\n"
        );
        let out = self
            .command()
            .arg("-c")
            .arg(script)
            .output()
            .map_err(|source| EnvError::Spawn {
                python: self.python.display().to_string(),
                source,
            })?;
        let python = self.python.display().to_string();
        if !out.status.success() {
            return Err(EnvError::Probe {
                python,
                message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        serde_json::from_slice(&out.stdout).map_err(|e| EnvError::Probe {
            python,
            message: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_venv_says_run_setup() {
        let home = DrtcHome {
            root: PathBuf::from("/nonexistent/drtc-home"),
        };
        let err = PythonEnv::locate_with(None, &home).unwrap_err().to_string();
        assert!(err.contains("drtc setup"), "{err}");
        assert!(err.contains("/nonexistent/drtc-home/venv"), "{err}");
        let env = PythonEnv::locate_with(Some("python3".into()), &home).unwrap();
        assert_eq!(env.source, PythonSource::EnvVar);
        let hint = env.fix_hint(&["torch".to_string()]);
        assert!(hint.contains("python3 -m pip install torch=="), "{hint}");
        // an empty DRTC_PYTHON counts as unset
        assert!(PythonEnv::locate_with(Some("".into()), &home).is_err());
    }

    #[test]
    fn the_venv_of_the_home_is_found() {
        let root = std::env::temp_dir().join(format!("drtc-env-test-{}", std::process::id()));
        let home = DrtcHome { root: root.clone() };
        std::fs::create_dir_all(home.venv_python().parent().unwrap()).unwrap();
        std::fs::write(home.venv_python(), "").unwrap();
        let env = PythonEnv::locate_with(None, &home).unwrap();
        assert_eq!(
            (env.python, env.source),
            (home.venv_python(), PythonSource::DrtcVenv)
        );
        std::fs::remove_dir_all(root).unwrap();
    }
}
