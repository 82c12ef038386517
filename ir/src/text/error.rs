//! The parser's error: a position, a message, and a renderer that shows the offending source
//! line with a caret under it, so a wrong `.drt` file points at its own mistake.

use std::fmt::Write;
use std::ops::Range;

/// Why a text-format graph could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct ParseError {
    /// 1-based line of the offending token.
    pub line: usize,
    /// 1-based column (in characters) of the offending token.
    pub column: usize,
    /// Byte range of the offending token in the source.
    pub span: Range<usize>,
    pub message: String,
}

impl ParseError {
    /// An error about the bytes `span` of `src`.
    pub(crate) fn at(src: &str, span: Range<usize>, message: impl Into<String>) -> ParseError {
        let (line, column) = line_col(src, span.start);
        ParseError {
            line,
            column,
            span,
            message: message.into(),
        }
    }

    /// Renders the error (without an `error:` prefix: the caller adds drtc's one prefix) as
    ///
    /// ```text
    /// unknown op `rleu` (did you mean `relu`?)
    ///  --> model.drt:3:8
    ///   |
    /// 3 |   %1 = rleu(%0) : f32[4]
    ///   |        ^^^^
    /// ```
    ///
    /// `src` must be the text that was parsed.
    pub fn render(&self, src: &str, filename: &str) -> String {
        let start = floor_char_boundary(src, self.span.start);
        let line_start = src[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = src[line_start..]
            .find('\n')
            .map_or(src.len(), |i| line_start + i);
        let text = src[line_start..line_end].trim_end_matches('\r');
        let gutter = self.line.to_string();
        let pad = " ".repeat(gutter.len());
        // keep tabs in the caret line so the caret stays under the token
        let indent: String = src[line_start..start]
            .chars()
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let line_limit = (line_start + text.len()).max(start);
        let end = floor_char_boundary(src, self.span.end.min(line_limit).max(start));
        let width = src[start..end].chars().count().max(1);
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.message);
        let _ = writeln!(out, "{pad}--> {filename}:{}:{}", self.line, self.column);
        let _ = writeln!(out, "{pad} |");
        let _ = writeln!(out, "{gutter} | {text}");
        let _ = writeln!(out, "{pad} | {indent}{}", "^".repeat(width));
        out
    }
}

fn floor_char_boundary(src: &str, mut i: usize) -> usize {
    i = i.min(src.len());
    while !src.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// 1-based line and column (in characters) of byte `offset`.
fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let offset = floor_char_boundary(src, offset);
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, src[line_start..offset].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_lines_and_characters() {
        let src = "ab\nçd x\n";
        let e = ParseError::at(src, 7..8, "m");
        assert_eq!((e.line, e.column), (2, 4));
        let e = ParseError::at(src, src.len()..src.len(), "m");
        assert_eq!((e.line, e.column), (3, 1));
    }

    proptest::proptest! {
        /// Rendering never panics, even against a source other than the parsed one.
        #[test]
        fn render_never_panics(src in "\\PC{0,40}", other in "\\PC{0,40}", a in 0usize..60, b in 0usize..60) {
            let e = ParseError::at(&src, a.min(b)..a.max(b), "m");
            proptest::prop_assert!(e.render(&src, "f").contains('^'));
            let _ = e.render(&other, "f");
        }
    }

    #[test]
    fn renders_a_caret_under_the_span() {
        let src = "graph @g() {\n\t%1 = rleu(%0)\n}\n";
        let start = src.find("rleu").unwrap();
        let e = ParseError::at(src, start..start + 4, "unknown op `rleu`");
        assert_eq!(
            e.render(src, "m.drt"),
            "unknown op `rleu`\n --> m.drt:2:7\n  |\n2 | \t%1 = rleu(%0)\n  | \t     ^^^^\n"
        );
    }
}
