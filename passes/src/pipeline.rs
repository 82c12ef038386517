//! Pipelines as strings: `dce,cse,fuse{max-ops=6}` parses into a [`Pipeline`] and prints
//! back identically, so a pipeline can be passed on a command line, logged and replayed.
//! Parsing checks syntax only; [`crate::registry`] checks names and options against the
//! registered passes, pointing at the offending column through the recorded spans.
//!
//! Grammar (whitespace allowed between tokens, printed without):
//! `pipeline = [entry {"," entry}]`, `entry = name ["{" option {"," option} "}"]`,
//! `option = name "=" value`, names of `[A-Za-z0-9_-]`, values of anything but `,{}=` and
//! whitespace.

use crate::PipelineError;
use std::fmt;
use std::ops::Range;

/// A parsed pipeline: passes in the order they run, each with its options as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pipeline {
    /// The string it was parsed from (for error messages); empty when built in code.
    pub source: String,
    pub entries: Vec<PipelineEntry>,
}

/// One pass of a pipeline: `fuse{max-ops=6}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelineEntry {
    pub name: String,
    /// Byte range of the name in [`Pipeline::source`].
    pub name_span: Range<usize>,
    pub options: Vec<PipelineOption>,
}

/// One option of a pass, as written: `max-ops=6`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelineOption {
    pub key: String,
    pub key_span: Range<usize>,
    pub value: String,
    pub value_span: Range<usize>,
}

impl Pipeline {
    /// Parses a pipeline string, checking syntax only.
    pub fn parse(source: &str) -> Result<Pipeline, PipelineError> {
        Parser {
            src: source,
            pos: 0,
        }
        .pipeline()
    }

    /// The pass names, in order.
    pub fn pass_names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.name.as_str()).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl std::str::FromStr for Pipeline {
    type Err = PipelineError;
    fn from_str(s: &str) -> Result<Pipeline, PipelineError> {
        Pipeline::parse(s)
    }
}

impl fmt::Display for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.entries.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl fmt::Display for PipelineEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if !self.options.is_empty() {
            f.write_str("{")?;
            for (i, o) in self.options.iter().enumerate() {
                if i > 0 {
                    f.write_str(",")?;
                }
                write!(f, "{}={}", o.key, o.value)?;
            }
            f.write_str("}")?;
        }
        Ok(())
    }
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn is_value_char(c: char) -> bool {
    !c.is_whitespace() && !matches!(c, ',' | '{' | '}' | '=')
}

struct Parser<'s> {
    src: &'s str,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek().filter(|c| c.is_whitespace()) {
            self.pos += c.len_utf8();
        }
    }

    /// Consumes `c` if it comes next (after whitespace).
    fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    /// An error at the current position: the next character, or the end.
    fn unexpected(&self, expected: &str) -> PipelineError {
        match self.peek() {
            Some(c) => PipelineError::at(
                self.src,
                self.pos,
                self.pos + c.len_utf8(),
                format!("expected {expected}, found `{c}`"),
            ),
            None => PipelineError::at(
                self.src,
                self.pos,
                self.pos,
                format!("expected {expected}, found the end of the pipeline"),
            ),
        }
    }

    /// Takes a maximal run of characters accepted by `ok`.
    fn take(&mut self, ok: fn(char) -> bool) -> (String, Range<usize>) {
        self.skip_ws();
        let start = self.pos;
        while let Some(c) = self.peek().filter(|&c| ok(c)) {
            self.pos += c.len_utf8();
        }
        (self.src[start..self.pos].to_string(), start..self.pos)
    }

    fn pipeline(mut self) -> Result<Pipeline, PipelineError> {
        let mut entries = vec![];
        self.skip_ws();
        if self.pos < self.src.len() {
            loop {
                entries.push(self.entry()?);
                if !self.eat(',') {
                    break;
                }
            }
            self.skip_ws();
            if self.pos < self.src.len() {
                return Err(self.unexpected("`,` or the end of the pipeline"));
            }
        }
        Ok(Pipeline {
            source: self.src.to_string(),
            entries,
        })
    }

    fn entry(&mut self) -> Result<PipelineEntry, PipelineError> {
        let (name, name_span) = self.take(is_name_char);
        if name.is_empty() {
            return Err(self.unexpected("a pass name"));
        }
        let mut options: Vec<PipelineOption> = vec![];
        if self.eat('{') {
            loop {
                let (key, key_span) = self.take(is_name_char);
                if key.is_empty() {
                    return Err(self.unexpected("an option name"));
                }
                if options.iter().any(|o| o.key == key) {
                    return Err(PipelineError::at(
                        self.src,
                        key_span.start,
                        key_span.end,
                        format!("option `{key}` of `{name}` is given twice"),
                    ));
                }
                if !self.eat('=') {
                    return Err(self.unexpected(&format!("`=` and a value after option `{key}`")));
                }
                let (value, value_span) = self.take(is_value_char);
                if value.is_empty() {
                    return Err(self.unexpected(&format!("a value for option `{key}`")));
                }
                options.push(PipelineOption {
                    key,
                    key_span,
                    value,
                    value_span,
                });
                if self.eat('}') {
                    break;
                }
                if !self.eat(',') {
                    return Err(self.unexpected("`,` or `}` after an option"));
                }
            }
        }
        Ok(PipelineEntry {
            name,
            name_span,
            options,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for s in [
            "",
            "dce",
            "dce,cse",
            "dce,cse,fuse{max-ops=6}",
            "cse{commutative=false},dce,cse{commutative=true}",
            "a{x=1,y=-2.5,z=abc},b_c-d",
        ] {
            let p = Pipeline::parse(s).unwrap();
            assert_eq!(p.to_string(), s, "{p:?}");
        }
    }

    #[test]
    fn whitespace_is_allowed_and_normalized_away() {
        let p = Pipeline::parse("  dce , cse { commutative = false } ").unwrap();
        assert_eq!(p.to_string(), "dce,cse{commutative=false}");
        assert_eq!(p.pass_names(), vec!["dce", "cse"]);
        assert_eq!(&p.source[p.entries[1].name_span.clone()], "cse");
        assert_eq!(
            &p.source[p.entries[1].options[0].value_span.clone()],
            "false"
        );
    }

    #[test]
    fn parts_are_recorded() {
        let p = Pipeline::parse("dce,fuse{max-ops=6}").unwrap();
        assert_eq!(p.entries.len(), 2);
        let fuse = &p.entries[1];
        assert_eq!(fuse.name, "fuse");
        assert_eq!(fuse.name_span, 4..8);
        assert_eq!(fuse.options[0].key, "max-ops");
        assert_eq!(fuse.options[0].value, "6");
        assert_eq!(fuse.options[0].value_span, 17..18);
    }

    fn err(s: &str) -> PipelineError {
        Pipeline::parse(s).unwrap_err()
    }

    #[test]
    fn syntax_errors_point_at_the_column() {
        let e = err("dce,,cse");
        assert_eq!((e.column, e.width), (5, 1));
        assert_eq!(e.message, "expected a pass name, found `,`");

        let e = err("dce,");
        assert_eq!(e.column, 5);
        assert_eq!(
            e.message,
            "expected a pass name, found the end of the pipeline"
        );

        let e = err("dce cse");
        assert_eq!(e.column, 5);
        assert_eq!(
            e.message,
            "expected `,` or the end of the pipeline, found `c`"
        );

        let e = err("fuse{max-ops}");
        assert_eq!(e.column, 13);
        assert_eq!(
            e.message,
            "expected `=` and a value after option `max-ops`, found `}`"
        );

        let e = err("fuse{max-ops=6");
        assert_eq!(e.column, 15);
        assert!(
            e.message.starts_with("expected `,` or `}`"),
            "{}",
            e.message
        );

        let e = err("fuse{}");
        assert_eq!(e.column, 6);
        assert_eq!(e.message, "expected an option name, found `}`");

        let e = err("fuse{a=1,a=2}");
        assert_eq!((e.column, e.width), (10, 1));
        assert_eq!(e.message, "option `a` of `fuse` is given twice");

        let e = err("dce;cse");
        assert_eq!(e.column, 4);
    }

    #[test]
    fn render_puts_a_caret_under_the_problem() {
        let e = err("dce,,cse");
        assert_eq!(
            e.render(),
            "invalid pipeline: expected a pass name, found `,`\n  dce,,cse\n      ^"
        );
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let e = err("dcé");
        assert_eq!(e.column, 3);
        assert_eq!(
            e.message,
            "expected `,` or the end of the pipeline, found `é`"
        );
    }
}
