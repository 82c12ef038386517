//! Where drtc keeps its files and which Python it runs: `DRTC_PYTHON` if set, else the
//! environment `drtc setup` creates under `${DRTC_HOME:-${XDG_CACHE_HOME:-~/.cache}/drtc}/venv`.
//! The package pins live in one embedded file, `data/runtime/requirements.txt`.

use super::error::{RuntimeError, RuntimeResult};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

/// The pinned requirements (`drtc setup` installs exactly these).
pub const REQUIREMENTS: &str = include_str!("../../data/runtime/requirements.txt");

/// Packages the worker imports; the others in [`REQUIREMENTS`] are for other parts of drtc.
pub const WORKER_PACKAGES: [&str; 3] = ["torch", "triton", "numpy"];

/// One `name==version` line of [`REQUIREMENTS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub name: String,
    pub version: String,
}

/// The pinned packages, in file order.
pub fn pins() -> Vec<Pin> {
    REQUIREMENTS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let (name, version) = l.split_once("==")?;
            Some(Pin {
                name: name.trim().to_string(),
                version: version.trim().to_string(),
            })
        })
        .collect()
}

/// The Python version the environment is built on (`# drtc-python: X.Y`).
pub fn pinned_python() -> &'static str {
    REQUIREMENTS
        .lines()
        .find_map(|l| l.strip_prefix("# drtc-python:"))
        .map(str::trim)
        .unwrap_or("3.11")
}

/// drtc's cache directory: the venv, the worker program, extracted seed programs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrtcHome {
    pub root: PathBuf,
}

impl DrtcHome {
    /// `DRTC_HOME`, else `$XDG_CACHE_HOME/drtc`, else `~/.cache/drtc`.
    pub fn from_env() -> Self {
        Self::from_vars(
            std::env::var_os("DRTC_HOME"),
            std::env::var_os("XDG_CACHE_HOME"),
            std::env::var_os("HOME"),
        )
    }

    pub fn from_vars(
        drtc_home: Option<OsString>,
        xdg_cache: Option<OsString>,
        home: Option<OsString>,
    ) -> Self {
        let non_empty = |v: Option<OsString>| v.filter(|s| !s.is_empty()).map(PathBuf::from);
        let root = non_empty(drtc_home)
            .or_else(|| non_empty(xdg_cache).map(|p| p.join("drtc")))
            .or_else(|| non_empty(home).map(|p| p.join(".cache").join("drtc")))
            .unwrap_or_else(|| std::env::temp_dir().join("drtc"));
        DrtcHome { root }
    }

    pub fn venv(&self) -> PathBuf {
        self.root.join("venv")
    }

    pub fn venv_python(&self) -> PathBuf {
        self.venv().join("bin").join("python")
    }

    /// A subdirectory, created if missing.
    pub fn dir(&self, name: &str) -> RuntimeResult<PathBuf> {
        let d = self.root.join(name);
        std::fs::create_dir_all(&d).map_err(|e| RuntimeError::io(&d, e))?;
        Ok(d)
    }
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
    pub fn locate(home: &DrtcHome) -> RuntimeResult<Self> {
        Self::locate_with(std::env::var_os("DRTC_PYTHON"), home)
    }

    pub fn locate_with(drtc_python: Option<OsString>, home: &DrtcHome) -> RuntimeResult<Self> {
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
            Err(RuntimeError::NoPython { venv: home.venv() })
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

    /// Installed versions of `packages` (None when missing), read from package metadata
    /// without importing anything.
    pub fn installed_versions(
        &self,
        packages: &[&str],
    ) -> RuntimeResult<Vec<(String, Option<String>)>> {
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
        let out = Command::new(&self.python)
            .arg("-c")
            .arg(script)
            .output()
            .map_err(|source| RuntimeError::Spawn {
                python: self.python.display().to_string(),
                source,
            })?;
        if !out.status.success() {
            return Err(RuntimeError::WorkerStart {
                message: format!(
                    "`{}` failed: {}",
                    self.python.display(),
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            });
        }
        serde_json::from_slice(&out.stdout)
            .map_err(|e| RuntimeError::Protocol(format!("package probe: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_prefers_drtc_home_then_xdg_then_home() {
        let h = DrtcHome::from_vars(Some("/a".into()), Some("/b".into()), Some("/c".into()));
        assert_eq!(h.root, PathBuf::from("/a"));
        let h = DrtcHome::from_vars(None, Some("/b".into()), Some("/c".into()));
        assert_eq!(h.root, PathBuf::from("/b/drtc"));
        let h = DrtcHome::from_vars(Some("".into()), None, Some("/c".into()));
        assert_eq!(h.root, PathBuf::from("/c/.cache/drtc"));
    }

    #[test]
    fn pins_cover_the_worker_packages() {
        let p = pins();
        for pkg in WORKER_PACKAGES {
            assert!(p.iter().any(|x| x.name == pkg), "{pkg} not pinned");
        }
        assert!(p.iter().all(|x| !x.version.is_empty()));
        assert_eq!(pinned_python(), "3.11");
    }

    #[test]
    fn missing_venv_says_run_setup() {
        let home = DrtcHome {
            root: PathBuf::from("/nonexistent/drtc-home"),
        };
        let err = PythonEnv::locate_with(None, &home).unwrap_err().to_string();
        assert!(err.contains("drtc setup"), "{err}");
        let env = PythonEnv::locate_with(Some("python3".into()), &home).unwrap();
        assert_eq!(env.source, PythonSource::EnvVar);
        let hint = env.fix_hint(&["torch".to_string()]);
        assert!(hint.contains("python3 -m pip install torch=="), "{hint}");
    }
}
