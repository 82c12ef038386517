//! The errors of the pass layer: [`PipelineError`] for pipeline strings that do not parse
//! or name unknown passes and options (with the column to point at), and [`PassError`] for
//! everything that goes wrong while passes run (a pass that fails, IR that no longer
//! verifies).

use drtc_ir::VerifyError;
use std::fmt;

/// A pipeline string that does not parse, or names an unknown pass or option, or gives an
/// option a bad value. Points at the offending text by column.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message} (at column {column})")]
pub struct PipelineError {
    /// The whole pipeline string.
    pub pipeline: String,
    /// 1-based column (in characters) of the offending text.
    pub column: usize,
    /// Width of the offending text in characters (at least 1).
    pub width: usize,
    /// What is wrong, including the valid choices where there are some.
    pub message: String,
}

impl PipelineError {
    /// An error about `pipeline[start..end]` (byte offsets).
    pub fn at(pipeline: &str, start: usize, end: usize, message: impl Into<String>) -> Self {
        let start = start.min(pipeline.len());
        let end = end.clamp(start, pipeline.len());
        let column = pipeline[..start].chars().count() + 1;
        let width = pipeline[start..end].chars().count().max(1);
        PipelineError {
            pipeline: pipeline.to_string(),
            column,
            width,
            message: message.into(),
        }
    }

    /// The error on three lines: the message, the pipeline, and a caret under the problem.
    pub fn render(&self) -> String {
        format!(
            "invalid pipeline: {}\n  {}\n  {}{}",
            self.message,
            self.pipeline,
            " ".repeat(self.column - 1),
            "^".repeat(self.width)
        )
    }
}

/// Something went wrong while running passes.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PassError {
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    /// The graph handed to the pass manager does not verify, before any pass ran.
    #[error("the input IR does not verify:\n{}", List(.errors))]
    InvalidInput { errors: Vec<VerifyError> },
    /// A pass left a graph that does not verify.
    #[error("the IR does not verify after pass `{pass}` (pass {index} of the pipeline):\n{}", List(.errors))]
    Verify {
        pass: &'static str,
        /// 1-based position of the pass in the pipeline.
        index: usize,
        errors: Vec<VerifyError>,
    },
    /// A pass gave up.
    #[error("pass `{pass}` failed: {message}")]
    Failed { pass: &'static str, message: String },
    /// A fusion plan that breaks its invariants (a planning bug).
    #[error("invalid fusion plan: {0}")]
    Plan(#[from] crate::fuse::PlanError),
    /// `print_ir_after` names a pass that is not in the pipeline.
    #[error("cannot print the IR after `{name}`: it is not in the pipeline (its passes: {})", .valid.join(", "))]
    PrintAfterUnknown { name: String, valid: Vec<String> },
}

/// Formats verifier findings one per line, indented.
struct List<'a>(&'a [VerifyError]);

impl fmt::Display for List<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "  {e}")?;
        }
        Ok(())
    }
}
