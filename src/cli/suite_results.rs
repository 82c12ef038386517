//! The suite's results file: one JSON line per task, written and flushed as soon as the
//! task finishes, so a stopped run keeps what it finished; `--resume` reads it back and
//! skips those tasks, and `drtc suite-report` rebuilds the table from it.

use super::error::{DriverError, DriverResult};
use serde_json::Value;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Row fields that must agree between a results file and a run resuming it.
pub const SETTINGS: &[&str] = &[
    "device",
    "gpu",
    "precision",
    "torch_precision",
    "baseline",
    "shrink",
    "simplify",
    "cuda_graphs",
];

/// The rows of a results file (the last row of each task wins) and how many lines were
/// not rows (a line cut short when a run was killed mid-write).
pub fn read_rows(path: &Path) -> DriverResult<(Vec<Value>, usize)> {
    let text = std::fs::read_to_string(path).map_err(|source| DriverError::Read {
        path: path.display().to_string(),
        source,
    })?;
    let mut rows: Vec<Value> = vec![];
    let mut skipped = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Value>(line) {
            Ok(v) if v["task"].is_string() => {
                rows.retain(|r| r["task"] != v["task"]);
                rows.push(v);
            }
            _ => skipped += 1,
        }
    }
    Ok((rows, skipped))
}

/// Where finished rows go.
pub struct ResultsFile {
    file: Option<(File, PathBuf)>,
}

impl ResultsFile {
    /// Opens `path` for a run. With `resume`, keeps its rows (after checking they were
    /// made with the same `settings`) and returns them; otherwise starts it empty.
    pub fn open(
        path: Option<&Path>,
        resume: bool,
        settings: &Value,
    ) -> DriverResult<(ResultsFile, Vec<Value>)> {
        let Some(path) = path else {
            if resume {
                return Err(DriverError::Reported(
                    "--resume needs --json FILE: the results to resume from".into(),
                ));
            }
            return Ok((ResultsFile { file: None }, vec![]));
        };
        let mut kept = vec![];
        if resume && path.exists() {
            let (rows, skipped) = read_rows(path)?;
            for r in &rows {
                let differ: Vec<String> = SETTINGS
                    .iter()
                    .filter(|k| r[**k] != settings[**k])
                    .map(|k| format!("{k}: file {} vs now {}", r[*k], settings[*k]))
                    .collect();
                if !differ.is_empty() {
                    return Err(DriverError::Reported(format!(
                        "cannot resume {}: task {} was run with other settings ({}); use \
                         another --json file or the same settings",
                        path.display(),
                        r["task"],
                        differ.join(", ")
                    )));
                }
            }
            if skipped > 0 {
                eprintln!(
                    "note: {} line(s) of {} were not complete rows (a run stopped mid-write); \
                     those tasks run again",
                    skipped,
                    path.display()
                );
            }
            kept = rows;
        }
        // Start the file with the kept rows only (dropping cut lines), then append.
        let body: String = kept.iter().map(|r| format!("{r}\n")).collect();
        let write_err = |source| DriverError::Write {
            path: path.display().to_string(),
            source,
        };
        std::fs::write(path, body).map_err(write_err)?;
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(write_err)?;
        Ok((
            ResultsFile {
                file: Some((file, path.to_path_buf())),
            },
            kept,
        ))
    }

    /// Appends one row and flushes it to the disk.
    pub fn append(&mut self, row: &Value) -> DriverResult<()> {
        if let Some((file, path)) = &mut self.file {
            let err = |source| DriverError::Write {
                path: path.display().to_string(),
                source,
            };
            file.write_all(format!("{row}\n").as_bytes()).map_err(err)?;
            file.flush().map_err(err)?;
            let _ = file.sync_data();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resume_keeps_finished_rows_drops_cut_lines_and_refuses_other_settings() {
        let dir = std::env::temp_dir().join(format!("drtc-results-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.jsonl");
        let settings = json!({"device": "cpu", "precision": "tf32", "torch_precision": "default",
                              "baseline": "eager", "shrink": true, "simplify": false});
        let mut a = settings.clone();
        a["task"] = json!("1_a");
        a["status"] = json!("verified");
        let (mut f, kept) = ResultsFile::open(Some(&path), false, &settings).unwrap();
        assert!(kept.is_empty());
        f.append(&a).unwrap();
        drop(f);
        // a run killed while writing its second row
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"task\": \"2_b\", \"sta");
        std::fs::write(&path, text).unwrap();

        let (mut f, kept) = ResultsFile::open(Some(&path), true, &settings).unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0]["task"], "1_a");
        let mut b = settings.clone();
        b["task"] = json!("2_b");
        f.append(&b).unwrap();
        drop(f);
        let (rows, skipped) = read_rows(&path).unwrap();
        assert_eq!((rows.len(), skipped), (2, 0));

        let mut other = settings.clone();
        other["precision"] = json!("ieee");
        let err = ResultsFile::open(Some(&path), true, &other).err().unwrap();
        assert!(
            err.to_string()
                .contains("precision: file \"tf32\" vs now \"ieee\""),
            "{err}"
        );
        // nor rows timed on another GPU model
        let mut h200 = settings.clone();
        h200["gpu"] = json!("NVIDIA H200");
        let err = ResultsFile::open(Some(&path), true, &h200).err().unwrap();
        assert!(
            err.to_string()
                .contains("gpu: file null vs now \"NVIDIA H200\""),
            "{err}"
        );
        // refusing left the file alone
        assert_eq!(read_rows(&path).unwrap().0.len(), 2);
        assert!(ResultsFile::open(None, true, &settings).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
