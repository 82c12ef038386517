//! Frontend errors: what went wrong, where (a byte span), rendered with a caret (ariadne).

use std::ops::Range;

/// A byte range in the program text.
pub type Span = Range<usize>;

/// Why a program could not be read or lowered. Every variant points at the source.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FrontendError {
    /// The text is not valid Python (as far as the subset goes).
    #[error("syntax error: {message}")]
    Syntax { message: String, span: Span },
    /// Valid Python, but outside the subset or the op set drtc covers.
    #[error("unsupported: {message}")]
    Unsupported { message: String, span: Span },
    /// The program draws random numbers at run time, so its output is not a function of
    /// its inputs and cannot be compiled or verified.
    #[error("random at run time: {message}")]
    Random { message: String, span: Span },
    /// The program is in the subset but wrong: unknown names, bad arguments, shapes that
    /// do not fit (what PyTorch would raise at run time).
    #[error("{message}")]
    Lowering { message: String, span: Span },
    /// The file is not in a format drtc reads (no `Model`, no `fused_operator`, bad JSONL).
    #[error("{message}")]
    Format { message: String, span: Span },
}

impl FrontendError {
    pub fn syntax(message: impl Into<String>, span: Span) -> Self {
        FrontendError::Syntax {
            message: message.into(),
            span,
        }
    }
    pub fn unsupported(message: impl Into<String>, span: Span) -> Self {
        FrontendError::Unsupported {
            message: message.into(),
            span,
        }
    }
    pub fn random(message: impl Into<String>, span: Span) -> Self {
        FrontendError::Random {
            message: message.into(),
            span,
        }
    }
    pub fn lowering(message: impl Into<String>, span: Span) -> Self {
        FrontendError::Lowering {
            message: message.into(),
            span,
        }
    }
    pub fn format(message: impl Into<String>, span: Span) -> Self {
        FrontendError::Format {
            message: message.into(),
            span,
        }
    }

    pub fn span(&self) -> Span {
        match self {
            FrontendError::Syntax { span, .. }
            | FrontendError::Unsupported { span, .. }
            | FrontendError::Random { span, .. }
            | FrontendError::Lowering { span, .. }
            | FrontendError::Format { span, .. } => span.clone(),
        }
    }

    /// A short label for the report's caret line.
    fn label(&self) -> &'static str {
        match self {
            FrontendError::Syntax { .. } => "here",
            FrontendError::Unsupported { .. } => "not supported",
            FrontendError::Random { .. } => "random at run time",
            FrontendError::Lowering { .. } => "here",
            FrontendError::Format { .. } => "here",
        }
    }

    /// Renders the error with the source line and a caret under the span (no colours),
    /// without an `error:` prefix: whoever prints it adds drtc's one prefix.
    pub fn render(&self, source_name: &str, source: &str) -> String {
        use ariadne::{Config, Label, Report, ReportKind, Source};
        let len = source.len();
        let mut span = self.span();
        span.start = span.start.min(len);
        span.end = span.end.clamp(span.start, len);
        // ariadne counts chars; convert the byte span
        let to_char = |b: usize| source.get(..b).map_or(0, |s| s.chars().count());
        let (s, e) = (to_char(span.start), to_char(span.end));
        let mut out = Vec::new();
        let report = Report::build(ReportKind::Error, (source_name, s..e))
            .with_config(Config::default().with_color(false))
            .with_message(self.to_string())
            .with_label(Label::new((source_name, s..e)).with_message(self.label()))
            .finish();
        if report
            .write((source_name, Source::from(source)), &mut out)
            .is_err()
        {
            return self.to_string();
        }
        // ariadne heads the report with `Error: `; drtc's callers add their one prefix
        let text = String::from_utf8_lossy(&out).into_owned();
        match text.strip_prefix("Error: ") {
            Some(rest) => rest.to_string(),
            None => text,
        }
    }
}
