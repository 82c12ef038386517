//! The export frontend's Python programs (the helper, the export server) installed in
//! drtc's cache, one file per text, written atomically.

use crate::verifier::env::DrtcHome;
use crate::verifier::worker::fnv1a;
use std::path::{Path, PathBuf};

/// `text`, a Python program of the export frontend (the helper, the export server), in
/// drtc's cache as `NAME-HASH.py`, written if missing (atomically: concurrent drtc
/// processes never run a half-written file).
pub fn install_script(home: &DrtcHome, name: &str, text: &str) -> Result<PathBuf, String> {
    let dir = home.dir("export").map_err(|e| e.to_string())?;
    let path = dir.join(format!("{name}-{:016x}.py", fnv1a(text.as_bytes())));
    if std::fs::read_to_string(&path).is_ok_and(|s| s == text) {
        return Ok(path);
    }
    write_atomic(&path, text)?;
    Ok(path)
}

/// Writes `text` to `path` through a private temporary file renamed into place. The
/// temporary's name is unique per process and thread (a suite exports several programs
/// at once in one process), and a rename that loses the race to another writer of the same
/// text is not an error.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), String> {
    let name = path
        .file_name()
        .map_or("file".into(), |n| n.to_string_lossy());
    let tmp = path.with_file_name(
        format!(
            ".{name}.{}-{:?}.tmp",
            std::process::id(),
            std::thread::current().id()
        )
        .replace(['(', ')'], ""),
    );
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    if let Err(e) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        if !std::fs::read_to_string(path).is_ok_and(|s| s == text) {
            return Err(format!("{}: {e}", path.display()));
        }
    }
    Ok(())
}
