//! Running the export frontend: the embedded helper (`drtc_frontends::export::HELPER`)
//! runs in drtc's Python environment (the verifier's locator: `DRTC_PYTHON` or the
//! `drtc setup` venv), writes the program's ATen graph as JSON, and the importer turns it
//! into IR. Exported graphs are cached on disk by content (helper, program, input types,
//! Python); failures are not (they may come from the environment, such as a missing package).

use crate::driver::export_script::{install_script, write_atomic};
use crate::driver::export_server::export_with_server;
use crate::verifier::env::{DrtcHome, PythonEnv};
use crate::verifier::service::launch::wanted;
use crate::verifier::worker::fnv1a;
use drtc_frontends::export::{import, ExportError, Imported, HELPER};
use drtc_ir::TensorType;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The longest one export may take (a large model's tracing on a loaded CPU).
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(600);

/// Why a program could not go through the export frontend.
#[derive(Debug, thiserror::Error)]
pub enum ExportRunError {
    /// The helper ran and reported (or the importer refused the graph): rendered with the
    /// source line.
    #[error("{0}")]
    Export(ExportError),
    /// The helper could not be run at all (no Python, a crash, a timeout).
    #[error("the export helper failed: {0}")]
    Helper(String),
}

impl ExportRunError {
    /// The message with a caret under the source line, where there is one.
    pub fn render(&self, name: &str, source: &str) -> String {
        match self {
            ExportRunError::Export(e) => e.render(name, source),
            ExportRunError::Helper(m) => format!("the export helper failed: {m}"),
        }
    }
}

fn helper_err(m: impl Into<String>) -> ExportRunError {
    ExportRunError::Helper(m.into())
}

/// The helper program in drtc's cache, written if missing.
fn install_helper(home: &DrtcHome) -> Result<PathBuf, ExportRunError> {
    install_script(home, "helper", HELPER).map_err(helper_err)
}

/// `[["float32", [2, 3]], ...]`: input types for the helper.
fn types_json(types: &[TensorType]) -> String {
    let items: Vec<serde_json::Value> = types
        .iter()
        .map(|t| serde_json::json!([t.dtype.torch_name(), t.shape]))
        .collect();
    serde_json::Value::Array(items).to_string()
}

/// A private directory for one export, removed when dropped.
struct WorkDir(PathBuf);

impl WorkDir {
    fn new(home: &DrtcHome) -> Result<WorkDir, ExportRunError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = home
            .dir("export")
            .map_err(|e| helper_err(e.to_string()))?
            .join(
                format!(
                    "work-{}-{:?}-{nanos}",
                    std::process::id(),
                    std::thread::current().id()
                )
                .replace(['(', ')'], ""),
            );
        std::fs::create_dir_all(&dir).map_err(|e| helper_err(format!("{}: {e}", dir.display())))?;
        Ok(WorkDir(dir))
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the helper on `source` (named `name` in messages) and returns its JSON.
fn run_helper(
    source: &str,
    name: &str,
    input_types: Option<&[TensorType]>,
) -> Result<String, ExportRunError> {
    let home = DrtcHome::from_env();
    let python = PythonEnv::locate(&home).map_err(|e| helper_err(e.to_string()))?;
    let helper = install_helper(&home)?;
    let types = input_types.map(types_json);
    let key = fnv1a(
        format!(
            "{}\0{source}\0{}\0{}",
            HELPER,
            types.as_deref().unwrap_or(""),
            python.python.display()
        )
        .as_bytes(),
    );
    let cache = home
        .dir("export")
        .map_err(|e| helper_err(e.to_string()))?
        .join(format!("graph-{key:016x}.json"));
    if let Ok(json) = std::fs::read_to_string(&cache) {
        return Ok(json);
    }
    let work = WorkDir::new(&home)?;
    // the program keeps its file name, so export's stack traces name the user's file
    let stem = Path::new(name)
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .unwrap_or("program");
    let stem: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let program = work.0.join(format!("{stem}.py"));
    let out = work.0.join("graph.json");
    std::fs::write(&program, source).map_err(|e| helper_err(e.to_string()))?;
    let stderr_file = PathBuf::from(format!("{}.stderr", out.display()));
    let served = wanted()
        .then(|| {
            export_with_server(
                &home,
                &python,
                &helper,
                &program,
                &out,
                types.as_deref(),
                EXPORT_TIMEOUT,
            )
            .ok()
        })
        .flatten();
    let (status, stderr) = match served {
        Some(status) => {
            let stderr = std::fs::read_to_string(&stderr_file).unwrap_or_default();
            (format!("{status} (in the export server)"), stderr)
        }
        None => run_process(&python, &helper, &program, &out, types.as_deref())?,
    };
    let json = std::fs::read_to_string(&out).map_err(|_| {
        let tail: Vec<&str> = stderr.lines().rev().take(12).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        helper_err(format!("{status} and wrote no graph:\n{}", tail.join("\n")))
    })?;
    // only graphs are cached: a failure may be the environment's (a missing package)
    let exported = serde_json::from_str::<serde_json::Value>(&json)
        .is_ok_and(|v| v["ok"] == serde_json::Value::Bool(true));
    if exported {
        // a cache that cannot be written only costs the next run an export
        let _ = write_atomic(&cache, &json);
    }
    Ok(json)
}

/// The helper in a process of its own: its exit status (as text) and its stderr.
fn run_process(
    python: &PythonEnv,
    helper: &Path,
    program: &Path,
    out: &Path,
    types: Option<&str>,
) -> Result<(String, String), ExportRunError> {
    let mut cmd = python.command();
    cmd.arg("-W")
        .arg("ignore")
        .arg(helper)
        .arg(program)
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(t) = types {
        cmd.arg("--input-types").arg(t);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| helper_err(format!("`{}`: {e}", python.python.display())))?;
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > EXPORT_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(helper_err(format!(
                    "no result after {} s",
                    EXPORT_TIMEOUT.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(helper_err(e.to_string())),
        }
    };
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    Ok((format!("it exited with {status}"), stderr))
}

/// Exports `source` with torch.export and imports its graph.
pub fn export_program(
    source: &str,
    name: &str,
    input_types: Option<&[TensorType]>,
) -> Result<Imported, ExportRunError> {
    let json = run_helper(source, name, input_types)?;
    import(&json).map_err(ExportRunError::Export)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A suite exports several programs at once in one process: every thread gets the
    /// helper, whoever wins the rename (the race that failed a level-3 task on the GPU).
    #[test]
    fn concurrent_installs_of_the_helper_all_succeed() {
        let root = tempfile::tempdir().unwrap();
        let home = DrtcHome {
            root: root.path().to_path_buf(),
        };
        let paths: Vec<Result<PathBuf, ExportRunError>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8).map(|_| s.spawn(|| install_helper(&home))).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for p in paths {
            let p = p.expect("every concurrent install succeeds");
            assert_eq!(std::fs::read_to_string(p).unwrap(), HELPER);
        }
        let leftovers: Vec<_> = std::fs::read_dir(home.dir("export").unwrap())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    }
}
