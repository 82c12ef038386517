//! The driver layer's error: what went wrong, and the exit status it gives.

use super::exit;

/// Errors of the driver layer. Lower layers' errors are rendered into messages here.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error("cannot read `{path}`: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write `{path}`: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    /// A message already rendered for the user (diagnostics with carets, lists of errors)
    /// about the input: usage, a program drtc refuses, a broken reference.
    #[error("{0}")]
    Reported(String),
    /// drtc itself failed: its Python runtime could not start or answer.
    #[error("{0}")]
    Failed(String),
}

impl DriverError {
    /// The exit status of this error ([`exit`]): 2 for the input, 3 for drtc's own failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            DriverError::Read { .. } | DriverError::Write { .. } | DriverError::Reported(_) => {
                exit::BAD_INPUT
            }
            DriverError::Failed(_) => exit::DRTC_FAILED,
        }
    }

    /// The message without any leading `error:` of its own: the caller adds the one prefix.
    pub fn message(&self) -> String {
        without_error_prefix(&self.to_string()).to_string()
    }
}

/// `text` without leading `error:` / `Error:` prefixes (renderers such as ariadne add their
/// own): drtc prints exactly one.
pub fn without_error_prefix(mut text: &str) -> &str {
    loop {
        let t = text.trim_start();
        match t.get(..6) {
            Some(p) if p.eq_ignore_ascii_case("error:") => text = &t[6..],
            _ => return t,
        }
    }
}

pub type DriverResult<T> = Result<T, DriverError>;
