//! The verified-module cache: `drtc compile` of a program it compiled and verified before,
//! with the same options, device, drtc build and Python environment, returns that module
//! and its report without work. An entry is a directory `<key>/` holding `module.py` and
//! `report.json`, written beside the cache and renamed into place whole, so a reader never
//! sees half an entry; its `used` file's modification time orders the entries, and the
//! least recently used go when more than the capacity are kept. Only verified modules are
//! stored; nothing in an entry is ever executed by the cache.

use sha2::{Digest, Sha256};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Entries kept before the least recently used is evicted.
pub const DEFAULT_CAPACITY: usize = 256;

/// One cached compile: the module's source and the report `drtc compile` wrote for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedModule {
    pub module: String,
    pub report: String,
}

/// The cache's directory and bound.
#[derive(Debug, Clone)]
pub struct ModuleCache {
    dir: PathBuf,
    capacity: usize,
}

/// A hex SHA-256 over named parts, each length-prefixed (no two different lists of parts
/// hash alike by concatenation).
pub fn key(parts: &[(&str, &[u8])]) -> String {
    let mut h = Sha256::new();
    for (name, bytes) in parts {
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// What identifies this drtc build and the Python environment it verifies with, without
/// starting Python: the executable's path, size and modification time, the interpreter's
/// real path, and the torch and triton distributions (`*.dist-info` names) beside it.
pub fn environment_identity(python: &Path) -> String {
    let mut out = String::new();
    if let Ok(exe) = std::env::current_exe() {
        out.push_str(&format!("exe {}", exe.display()));
        if let Ok(m) = fs::metadata(&exe) {
            out.push_str(&format!(" {} {:?}", m.len(), m.modified().ok()));
        }
    }
    let real = fs::canonicalize(python).unwrap_or_else(|_| python.to_path_buf());
    out.push_str(&format!("\npython {}", real.display()));
    for dist in python_distributions(&real) {
        out.push_str(&format!("\n{dist}"));
    }
    out
}

/// The torch and triton `*.dist-info` directory names of the environment `python` runs in
/// (`<prefix>/lib/python3.*/site-packages`), sorted; empty when none is found there.
fn python_distributions(python: &Path) -> Vec<String> {
    let Some(prefix) = python.parent().and_then(Path::parent) else {
        return vec![];
    };
    let mut found = vec![];
    for lib in ["lib", "lib64"] {
        let Ok(entries) = fs::read_dir(prefix.join(lib)) else {
            continue;
        };
        for e in entries.flatten() {
            let site = e.path().join("site-packages");
            let Ok(dists) = fs::read_dir(&site) else {
                continue;
            };
            for d in dists.flatten() {
                let name = d.file_name().to_string_lossy().into_owned();
                if name.ends_with(".dist-info")
                    && (name.starts_with("torch-") || name.starts_with("triton-"))
                {
                    found.push(name);
                }
            }
        }
    }
    found.sort();
    found
}

impl ModuleCache {
    pub fn new(dir: PathBuf, capacity: usize) -> Self {
        ModuleCache {
            dir,
            capacity: capacity.max(1),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn entry(&self, key: &str) -> PathBuf {
        self.dir.join(key)
    }

    /// The entry under `key`, marked as used now; None when there is none or it cannot be
    /// read whole.
    pub fn get(&self, key: &str) -> Option<CachedModule> {
        let dir = self.entry(key);
        let module = fs::read_to_string(dir.join("module.py")).ok()?;
        let report = fs::read_to_string(dir.join("report.json")).ok()?;
        let _ = touch(&dir.join("used"));
        Some(CachedModule { module, report })
    }

    /// Stores `entry` under `key` (replacing one there), then evicts the least recently
    /// used entries beyond the capacity.
    pub fn put(&self, key: &str, entry: &CachedModule) -> io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        let tmp = self.dir.join(format!(".new-{key}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&tmp);
        fs::create_dir_all(&tmp)?;
        fs::write(tmp.join("module.py"), &entry.module)?;
        fs::write(tmp.join("report.json"), &entry.report)?;
        fs::write(tmp.join("used"), b"")?;
        let dest = self.entry(key);
        let _ = fs::remove_dir_all(&dest);
        if let Err(e) = fs::rename(&tmp, &dest) {
            let _ = fs::remove_dir_all(&tmp);
            return Err(e);
        }
        self.evict()
    }

    /// The keys held, most recently used first.
    pub fn keys(&self) -> Vec<String> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return vec![];
        };
        let mut keyed: Vec<(SystemTime, String)> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') {
                    return None;
                }
                let used = fs::metadata(e.path().join("used"))
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                Some((used, name))
            })
            .collect();
        keyed.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        keyed.into_iter().map(|(_, k)| k).collect()
    }

    fn evict(&self) -> io::Result<()> {
        for old in self.keys().into_iter().skip(self.capacity) {
            fs::remove_dir_all(self.entry(&old))?;
        }
        Ok(())
    }
}

fn touch(path: &Path) -> io::Result<()> {
    let f = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    f.set_modified(SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn entry(n: u32) -> CachedModule {
        CachedModule {
            module: format!("# module {n}\n"),
            report: format!("{{\"n\": {n}}}"),
        }
    }

    #[test]
    fn keys_separate_their_parts() {
        let a = key(&[("a", b"bc"), ("d", b"")]);
        let b = key(&[("a", b"b"), ("d", b"c")]);
        assert_ne!(a, b);
        assert_eq!(a, key(&[("a", b"bc"), ("d", b"")]));
        assert_eq!(a.len(), 64);
    }

    #[test]
    fn an_entry_comes_back_whole_and_a_missing_one_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ModuleCache::new(dir.path().join("modules"), 4);
        assert_eq!(cache.get("k1"), None);
        cache.put("k1", &entry(1)).unwrap();
        assert_eq!(cache.get("k1"), Some(entry(1)));
        cache.put("k1", &entry(2)).unwrap();
        assert_eq!(cache.get("k1"), Some(entry(2)));
        // half an entry (no report) is not an entry
        fs::remove_file(dir.path().join("modules/k1/report.json")).unwrap();
        assert_eq!(cache.get("k1"), None);
    }

    #[test]
    fn the_least_recently_used_entry_goes_first() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ModuleCache::new(dir.path().to_path_buf(), 2);
        cache.put("a", &entry(1)).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        cache.put("b", &entry(2)).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert!(cache.get("a").is_some()); // a is now the most recent
        std::thread::sleep(Duration::from_millis(20));
        cache.put("c", &entry(3)).unwrap();
        assert_eq!(cache.keys(), vec!["c".to_string(), "a".to_string()]);
        assert_eq!(cache.get("b"), None);
    }

    #[test]
    fn the_environment_names_the_interpreter() {
        let id = environment_identity(Path::new("/nonexistent/bin/python3"));
        assert!(id.contains("python /nonexistent/bin/python3"), "{id}");
    }
}
