//! drtc's home: the folder that holds the venv, the worker program, extracted programs and
//! caches.

use crate::EnvError;
use std::ffi::OsString;
use std::path::PathBuf;

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

    /// The environment `drtc setup` creates.
    pub fn venv(&self) -> PathBuf {
        self.root.join("venv")
    }

    pub fn venv_python(&self) -> PathBuf {
        self.venv().join("bin").join("python")
    }

    /// A subdirectory, created if missing.
    pub fn dir(&self, name: &str) -> Result<PathBuf, EnvError> {
        let d = self.root.join(name);
        std::fs::create_dir_all(&d).map_err(|source| EnvError::Io {
            path: d.clone(),
            source,
        })?;
        Ok(d)
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
        assert_eq!(
            h.venv_python(),
            PathBuf::from("/c/.cache/drtc/venv/bin/python")
        );
    }
}
