//! Shared by the integration tests: where the task files and seed programs are.

use std::path::{Path, PathBuf};

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every program text of KernelBench levels 1 and 2 and of `data/seeds/*.jsonl`, with a label.
pub fn corpus() -> Vec<(String, String)> {
    let mut out = vec![];
    let shared = workspace().join("../shared/kernelbench");
    for group in ["level1", "level2"] {
        let Ok(dir) = std::fs::read_dir(shared.join(group)) else {
            continue;
        };
        let mut files: Vec<PathBuf> = dir.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for f in files {
            if let Ok(text) = std::fs::read_to_string(&f) {
                out.push((
                    format!(
                        "{group}/{}",
                        f.file_name().unwrap_or_default().to_string_lossy()
                    ),
                    text,
                ));
            }
        }
    }
    if let Ok(text) = std::fs::read_to_string(workspace().join("data/seeds/list_a.jsonl")) {
        for p in drtc_frontends::split_programs("list_a.jsonl", &text)
            .into_iter()
            .flatten()
        {
            out.push((p.name, p.text));
        }
    }
    out
}
