//! Files the CLI reads and writes: read with the path in the error, outputs checked
//! before any work.

use super::error::{DriverError, DriverResult};
use std::path::Path;

/// Reads a file, mapping the error to a driver error naming the path.
pub fn read_file(path: &std::path::Path) -> DriverResult<String> {
    std::fs::read_to_string(path).map_err(|source| DriverError::Read {
        path: path.display().to_string(),
        source,
    })
}

/// Checks, before any work, that `path` can be written as a file: not a directory, in a
/// folder that exists, creatable or writable (an existing file is left as it is; a probe
/// file is removed again).
pub fn check_writable_file(path: &std::path::Path) -> DriverResult<()> {
    let shown = path.display().to_string();
    if path.is_dir() {
        return Err(DriverError::Reported(format!(
            "`{shown}` is a directory; give the path of a file to write"
        )));
    }
    let existed = path.exists();
    match std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
    {
        Ok(_) => {
            if !existed {
                let _ = std::fs::remove_file(path);
            }
            Ok(())
        }
        Err(source) => Err(DriverError::Write {
            path: shown,
            source,
        }),
    }
}

/// Checks, before any work, that `path` is (or can be created as) a writable directory.
pub fn check_writable_dir(path: &std::path::Path) -> DriverResult<()> {
    let shown = path.display().to_string();
    if path.exists() && !path.is_dir() {
        return Err(DriverError::Reported(format!(
            "`{shown}` is a file; give a directory (created when missing)"
        )));
    }
    std::fs::create_dir_all(path).map_err(|source| DriverError::Write {
        path: shown.clone(),
        source,
    })?;
    check_writable_file(&path.join(format!(".drtc-write-check-{}", std::process::id())))
}

/// Writes `text` to `path`, a write error naming the path.
pub fn write(path: &Path, text: &str) -> DriverResult<()> {
    std::fs::write(path, text).map_err(|source| DriverError::Write {
        path: path.display().to_string(),
        source,
    })
}
