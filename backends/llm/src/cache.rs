//! Responses on disk, keyed by (prompt, model, sampling parameters, sample index), so a
//! rerun costs no request. One JSON file per answer, named by the SHA-256 of its key,
//! written to a temporary file and renamed (a concurrent reader never sees half a file).

use crate::completion::{Completion, Sampling};
use crate::error::LlmError;
use crate::prompt::ChatMessage;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

#[derive(Clone, Debug)]
pub struct ResponseCache {
    dir: PathBuf,
}

#[derive(Serialize)]
struct Key<'a> {
    messages: &'a [ChatMessage],
    model: &'a str,
    sampling: &'a Sampling,
    sample: usize,
}

impl ResponseCache {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ResponseCache { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The hex SHA-256 of the key.
    pub fn key(
        messages: &[ChatMessage],
        model: &str,
        sampling: &Sampling,
        sample: usize,
    ) -> String {
        let key = Key {
            messages,
            model,
            sampling,
            sample,
        };
        let text = serde_json::to_string(&key).unwrap_or_default();
        Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    pub fn get(&self, key: &str) -> Option<Completion> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        let mut c: Completion = serde_json::from_str(&text).ok()?;
        c.cached = true;
        Some(c)
    }

    pub fn put(&self, key: &str, c: &Completion) -> Result<(), LlmError> {
        let path = self.path(key);
        let err = |detail: String| LlmError::Cache {
            path: path.clone(),
            detail,
        };
        let parent = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(parent).map_err(|e| err(e.to_string()))?;
        let tmp = parent.join(format!("{key}.{}.tmp", std::process::id()));
        let text = serde_json::to_string(c).map_err(|e| err(e.to_string()))?;
        std::fs::write(&tmp, text).map_err(|e| err(e.to_string()))?;
        std::fs::rename(&tmp, &path).map_err(|e| err(e.to_string()))
    }
}
