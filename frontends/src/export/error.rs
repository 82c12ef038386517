//! Export frontend errors, each with the line of the Python source it came from (when the
//! export metadata names one), rendered with a caret under that line (ariadne).

/// Why a program could not be exported or imported.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExportError {
    /// Running the program itself failed (its `__init__`, `get_inputs`, a syntax error).
    #[error("the program failed before export: {message}")]
    Program {
        message: String,
        line: Option<usize>,
    },
    /// torch.export could not capture the program (data-dependent control flow ...):
    /// export's own reason.
    #[error("torch.export cannot capture this program: {message}")]
    Export {
        message: String,
        line: Option<usize>,
    },
    /// A node the importer cannot turn into IR (neither an IR op nor a callable ATen op).
    #[error("`{target}`: {message}")]
    Op {
        target: String,
        message: String,
        line: Option<usize>,
    },
    /// The graph is outside what drtc's modules can reproduce (buffer mutations other
    /// than batch-norm statistics, non-tensor outputs).
    #[error("unsupported: {message}")]
    Unsupported {
        message: String,
        line: Option<usize>,
    },
    /// The helper's JSON is not what this importer reads.
    #[error("the export helper wrote unreadable JSON: {message}")]
    Json { message: String },
}

impl ExportError {
    /// The 1-based source line, when known.
    pub fn line(&self) -> Option<usize> {
        match self {
            ExportError::Program { line, .. }
            | ExportError::Export { line, .. }
            | ExportError::Op { line, .. }
            | ExportError::Unsupported { line, .. } => *line,
            ExportError::Json { .. } => None,
        }
    }

    /// A short name of the kind, for reports.
    pub fn kind(&self) -> &'static str {
        match self {
            ExportError::Program { .. } => "program",
            ExportError::Export { .. } => "export",
            ExportError::Op { .. } => "op",
            ExportError::Unsupported { .. } => "unsupported",
            ExportError::Json { .. } => "json",
        }
    }

    /// Renders the error with its source line and a caret under it (no colours); without
    /// a line, the message alone.
    pub fn render(&self, source_name: &str, source: &str) -> String {
        use ariadne::{Config, Label, Report, ReportKind, Source};
        let Some(line) = self.line().filter(|&l| l >= 1) else {
            return self.to_string();
        };
        // the char span of the line's text (without indentation)
        let mut start = 0usize;
        let mut span = None;
        for (i, l) in source.split('\n').enumerate() {
            let chars = l.chars().count();
            if i + 1 == line {
                let indent = l.chars().take_while(|c| c.is_whitespace()).count();
                let text = l.trim_end().chars().count();
                span = Some(start + indent..start + text.max(indent));
                break;
            }
            start += chars + 1;
        }
        let Some(span) = span else {
            return format!("{self} (line {line})");
        };
        let mut out = Vec::new();
        let report = Report::build(ReportKind::Error, (source_name, span.clone()))
            .with_config(Config::default().with_color(false))
            .with_message(self.to_string())
            .with_label(Label::new((source_name, span)).with_message("here"))
            .finish();
        if report
            .write((source_name, Source::from(source)), &mut out)
            .is_err()
        {
            return format!("{self} (line {line})");
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}
