//! `drtc compile`'s use of the verified-module cache (`driver/module_cache.rs`): the key of
//! one invocation (the program's text and path, every option but where the outputs go, the
//! device, drtc's build, the Python environment and the `DRTC_*`/`TRITON_*` settings), a
//! hit answered without work, a verified result stored. By default (`--no-cache` bypasses
//! it), for single programs that are verified (`--no-verify` and `.jsonl` inputs take no
//! part).

use drtc::driver::module_cache::{self, CachedModule, ModuleCache, DEFAULT_CAPACITY};
use drtc::verifier::{DeviceKind, DrtcHome, PythonEnv};
use serde_json::{json, Value};
use std::path::Path;

/// The cache and this invocation's key.
pub struct CacheUse {
    cache: ModuleCache,
    key: String,
    device: &'static str,
}

/// The cache use of a compile of `file` (text `contents`) with `options` (every option
/// that changes the module, as text), or None where it takes no part (`applies` false).
pub fn for_compile(
    applies: bool,
    options: &str,
    file: &Path,
    contents: &str,
    device: DeviceKind,
    home: &DrtcHome,
) -> Option<CacheUse> {
    if !applies {
        return None;
    }
    let python = PythonEnv::locate(home).ok()?;
    let path = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    // settings that only say where drtc keeps things or how it runs its workers do not
    // change the module
    let mut settings: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| {
            (k.starts_with("DRTC_")
                && !["DRTC_HOME", "DRTC_SERVICE", "DRTC_SERVICE_IDLE_S"].contains(&k.as_str()))
                || k.starts_with("TRITON_")
        })
        .collect();
    settings.sort();
    let key = module_cache::key(&[
        ("drtc", env!("CARGO_PKG_VERSION").as_bytes()),
        ("build", build_identity().as_bytes()),
        (
            "environment",
            module_cache::environment_identity(&python.python).as_bytes(),
        ),
        ("device", device.name().as_bytes()),
        ("options", options.as_bytes()),
        ("settings", format!("{settings:?}").as_bytes()),
        ("path", path.display().to_string().as_bytes()),
        ("program", contents.as_bytes()),
    ]);
    let cache = ModuleCache::new(home.dir("modules").ok()?, DEFAULT_CAPACITY);
    Some(CacheUse {
        cache,
        key,
        device: device.name(),
    })
}

/// This drtc executable as built: its path, size and modification time (a rebuilt drtc
/// never answers from an older build's entries).
fn build_identity() -> String {
    let Ok(exe) = std::env::current_exe() else {
        return String::new();
    };
    let meta = std::fs::metadata(&exe).ok();
    let modified = meta
        .as_ref()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!(
        "{}:{}:{modified}",
        exe.display(),
        meta.map_or(0, |m| m.len())
    )
}

impl CacheUse {
    /// The cached module and report of this invocation, if any.
    pub fn hit(&self) -> Option<CachedModule> {
        self.cache.get(&self.key)
    }

    /// Answers from a hit: writes the module and the report (marked as a cache hit), says
    /// so on stderr, and returns whether the report says verified.
    pub fn answer(&self, hit: &CachedModule, output: &Path, report: Option<&Path>) -> bool {
        let mut r: Value = serde_json::from_str(&hit.report).unwrap_or(Value::Null);
        r["cache"] = json!({"hit": true, "key": self.key,
                            "dir": self.cache.dir().display().to_string()});
        let verified = r["verification"]["verified"] == true;
        let written = std::fs::write(output, &hit.module).and_then(|_| match report {
            Some(p) => std::fs::write(p, serde_json::to_string_pretty(&r).unwrap_or_default()),
            None => Ok(()),
        });
        if let Err(e) = written {
            eprintln!("error: writing the cached module: {e}");
            return false;
        }
        eprintln!(
            "{} on {} (from the verified-module cache: the same program, options, device, \
             drtc build and Python environment; --no-cache compiles again)",
            if verified { "verified" } else { "NOT verified" },
            self.device
        );
        verified
    }

    /// Stores a verified compile: the module written to `output` and its report.
    pub fn store(&self, output: &Path, report: &Value) {
        if report["verification"]["verified"] != true {
            return;
        }
        let Ok(module) = std::fs::read_to_string(output) else {
            return;
        };
        let entry = CachedModule {
            module,
            report: serde_json::to_string_pretty(report).unwrap_or_default(),
        };
        if let Err(e) = self.cache.put(&self.key, &entry) {
            eprintln!("note: the verified-module cache could not store this module: {e}");
        }
    }
}
