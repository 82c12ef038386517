//! A recursive-descent parser for the text format (the inverse of `printer.rs`).
//!
//! It checks syntax and names only: unknown ops, undefined value names, redefinitions.
//! Types are taken as declared and not inferred, so a wrong file still parses and the
//! verifier can report every problem in it at once. Uses may refer to values defined
//! further down (the verifier reports use-before-def and cycles). Attributes are
//! normalized (defaults filled in) when they are valid for the op, and kept as written
//! otherwise, again for the verifier to report.

use super::error::ParseError;
use super::lexer::{lex, Tok};
use crate::{Attr, Attrs, DType, Graph, InputKind, NodeId, Op, TensorType, ValueId};
use std::collections::HashMap;
use std::ops::Range;

/// Parses one graph in the text format.
pub fn parse(src: &str) -> Result<Graph, ParseError> {
    Parser {
        src,
        toks: lex(src),
        pos: 0,
        graph: Graph::new(""),
        defs: HashMap::new(),
        pending: vec![],
    }
    .file()
}

/// How a value is referred to: `%x` and `%"x"` are the same name; `%0` is a node result
/// and differs from an input named `%"0"`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Name(String),
    Num(String),
}

/// A reference to a value, resolved once the whole body is known.
struct Use {
    key: Key,
    span: Range<usize>,
}

struct Parser<'s> {
    src: &'s str,
    toks: Vec<(Tok, Range<usize>)>,
    pos: usize,
    graph: Graph,
    defs: HashMap<Key, (ValueId, Range<usize>)>,
    /// Node inputs to fill in after the body: forward references are allowed.
    pending: Vec<(NodeId, Vec<Use>)>,
}

const MAX_FOUND_LEN: usize = 24;

impl Parser<'_> {
    // ------------------------------------------------------------ token access

    fn peek(&self) -> Option<Tok> {
        self.toks.get(self.pos).map(|(t, _)| *t)
    }

    fn span(&self) -> Range<usize> {
        match self.toks.get(self.pos) {
            Some((_, s)) => s.clone(),
            // point just after the last text, not at trailing blank lines
            None => {
                let end = self.src.trim_end().len();
                end..end
            }
        }
    }

    fn text(&self, span: &Range<usize>) -> &str {
        self.src.get(span.clone()).unwrap_or("")
    }

    fn bump(&mut self) -> Range<usize> {
        let s = self.span();
        self.pos += 1;
        s
    }

    fn error(&self, span: Range<usize>, message: impl Into<String>) -> ParseError {
        ParseError::at(self.src, span, message)
    }

    /// "found ..." for the current token.
    fn found(&self) -> String {
        let Some(tok) = self.peek() else {
            return "end of input".into();
        };
        let text = self.text(&self.span());
        if tok == Tok::Error {
            if ["\"", "%\"", "@\""].iter().any(|q| text.starts_with(q)) {
                return "unterminated string".into();
            }
            return match text.chars().next() {
                Some(c) => format!("unexpected character `{c}`"),
                None => "an unrecognized token".into(),
            };
        }
        if text.chars().count() > MAX_FOUND_LEN {
            let short: String = text.chars().take(MAX_FOUND_LEN).collect();
            format!("`{short}...`")
        } else {
            format!("`{text}`")
        }
    }

    fn unexpected(&self, expected: &str) -> ParseError {
        let found = self.found();
        let message = if self.peek() == Some(Tok::Error) {
            format!("{found}; expected {expected}")
        } else {
            format!("expected {expected}, found {found}")
        };
        self.error(self.span(), message)
    }

    fn expect(&mut self, tok: Tok) -> Result<Range<usize>, ParseError> {
        if self.peek() == Some(tok) {
            Ok(self.bump())
        } else {
            Err(self.unexpected(tok.describe()))
        }
    }

    fn at_keyword(&self, kw: &str) -> bool {
        self.peek() == Some(Tok::Ident) && self.text(&self.span()) == kw
    }

    fn expect_keyword(&mut self, kw: &str) -> Result<(), ParseError> {
        if self.at_keyword(kw) {
            self.bump();
            Ok(())
        } else {
            Err(self.unexpected(&format!("`{kw}`")))
        }
    }

    fn eat(&mut self, tok: Tok) -> bool {
        if self.peek() == Some(tok) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn at_value(&self) -> bool {
        matches!(
            self.peek(),
            Some(Tok::ValueName | Tok::ValueNum | Tok::ValueQuoted)
        )
    }

    // ------------------------------------------------------------ grammar

    /// `graph @name(inputs) { nodes return values }`
    fn file(mut self) -> Result<Graph, ParseError> {
        self.expect_keyword("graph")?;
        self.graph.name = match self.peek() {
            Some(Tok::GraphName) => {
                let span = self.bump();
                self.text(&span)[1..].to_string()
            }
            Some(Tok::GraphQuoted) => {
                let span = self.bump();
                self.unquote(span, 1)?
            }
            _ => return Err(self.unexpected("a graph name (`@name`)")),
        };
        self.expect(Tok::LParen)?;
        if !self.eat(Tok::RParen) {
            loop {
                self.input()?;
                if self.eat(Tok::RParen) {
                    break;
                }
                if !self.eat(Tok::Comma) {
                    return Err(self.unexpected("`,` or `)`"));
                }
            }
        }
        self.expect(Tok::LBrace)?;
        while !self.at_keyword("return") {
            if !self.at_value() {
                return Err(self.unexpected("a node (`%0 = op(...) : type`) or `return`"));
            }
            self.node()?;
        }
        self.bump();
        let mut outputs = vec![];
        if self.at_value() {
            outputs.push(self.value_use()?);
            while self.eat(Tok::Comma) {
                outputs.push(self.value_use()?);
            }
        }
        if !self.eat(Tok::RBrace) {
            return Err(self.unexpected(if outputs.is_empty() {
                "a value name or `}`"
            } else {
                "`,` or `}`"
            }));
        }
        if self.peek().is_some() {
            return Err(self.unexpected("end of input after the graph"));
        }
        // resolve uses now that every definition is known
        for (node, uses) in std::mem::take(&mut self.pending) {
            let inputs = uses
                .iter()
                .map(|u| self.resolve(u))
                .collect::<Result<_, _>>()?;
            self.graph.node_mut(node).inputs = inputs;
        }
        let outputs = outputs
            .iter()
            .map(|u| self.resolve(u))
            .collect::<Result<_, _>>()?;
        self.graph.set_outputs(outputs);
        Ok(self.graph)
    }

    /// `%name: [param | buffer] dtype[dims]`
    fn input(&mut self) -> Result<(), ParseError> {
        if !self.at_value() {
            return Err(self.unexpected("an input (`%name: f32[...]`)"));
        }
        let (key, span) = self.value_name()?;
        self.expect(Tok::Colon)?;
        let kind = if self.at_keyword("param") {
            self.bump();
            InputKind::Param
        } else if self.at_keyword("buffer") {
            self.bump();
            InputKind::Buffer
        } else {
            InputKind::Activation
        };
        let ty = self.ty()?;
        self.check_new(&key, &span)?;
        let name = match &key {
            Key::Name(n) | Key::Num(n) => n.clone(),
        };
        let id = self.graph.add_input(name, kind, ty);
        self.defs.insert(key, (id, span));
        Ok(())
    }

    /// `%a, %b = op(%x, %y) {k = v, ...} : t1, t2`
    fn node(&mut self) -> Result<(), ParseError> {
        let mut results = vec![self.value_name()?];
        while self.eat(Tok::Comma) {
            results.push(self.value_name()?);
        }
        for (i, (key, span)) in results.iter().enumerate() {
            self.check_new(key, span)?;
            if results[..i].iter().any(|(k, _)| k == key) {
                return Err(self.error(
                    span.clone(),
                    format!("`{}` is defined twice in this node", self.text(span)),
                ));
            }
        }
        if !self.eat(Tok::Equals) {
            return Err(self.unexpected("`,` or `=`"));
        }
        if self.peek() != Some(Tok::Ident) {
            return Err(self.unexpected("an op name"));
        }
        let op_span = self.bump();
        let op_name = self.text(&op_span);
        let op = Op::from_name(op_name).ok_or_else(|| {
            let message = match closest_op(op_name) {
                Some(s) => format!("unknown op `{op_name}` (did you mean `{s}`?)"),
                None => format!("unknown op `{op_name}`"),
            };
            self.error(op_span.clone(), message)
        })?;
        self.expect(Tok::LParen)?;
        let mut uses = vec![];
        if !self.eat(Tok::RParen) {
            loop {
                uses.push(self.value_use()?);
                if self.eat(Tok::RParen) {
                    break;
                }
                if !self.eat(Tok::Comma) {
                    return Err(self.unexpected("`,` or `)`"));
                }
            }
        }
        let raw = if self.peek() == Some(Tok::LBrace) {
            self.attrs()?
        } else {
            Attrs::new()
        };
        let attrs = op.normalize_attrs(&raw).unwrap_or(raw);
        self.expect(Tok::Colon)?;
        let types_start = self.span().start;
        let mut types = vec![self.ty()?];
        while self.eat(Tok::Comma) {
            types.push(self.ty()?);
        }
        if types.len() != results.len() {
            let end = self
                .toks
                .get(self.pos.wrapping_sub(1))
                .map_or(types_start, |(_, s)| s.end);
            return Err(self.error(
                types_start..end,
                format!(
                    "{} result name(s) but {} result type(s)",
                    results.len(),
                    types.len()
                ),
            ));
        }
        let node = self.graph.add_node_unchecked(op, vec![], attrs, types);
        let outputs = self.graph.node(node).outputs.clone();
        for ((key, span), v) in results.into_iter().zip(outputs) {
            self.defs.insert(key, (v, span));
        }
        self.pending.push((node, uses));
        Ok(())
    }

    /// `{name = value, ...}`
    fn attrs(&mut self) -> Result<Attrs, ParseError> {
        self.expect(Tok::LBrace)?;
        let mut attrs = Attrs::new();
        if self.eat(Tok::RBrace) {
            return Ok(attrs);
        }
        loop {
            if self.peek() != Some(Tok::Ident) {
                return Err(self.unexpected("an attribute name"));
            }
            let span = self.bump();
            let name = self.text(&span).to_string();
            self.expect(Tok::Equals)?;
            let value = self.attr_value()?;
            if attrs.insert(name.clone(), value).is_some() {
                return Err(self.error(span, format!("attribute `{name}` is given twice")));
            }
            if self.eat(Tok::RBrace) {
                return Ok(attrs);
            }
            if !self.eat(Tok::Comma) {
                return Err(self.unexpected("`,` or `}`"));
            }
        }
    }

    fn attr_value(&mut self) -> Result<Attr, ParseError> {
        let span = self.span();
        match self.peek() {
            Some(Tok::Int) => {
                self.bump();
                Ok(Attr::Int(self.int_at(span)?))
            }
            Some(Tok::Float) => {
                self.bump();
                self.text(&span)
                    .parse::<f64>()
                    .map(Attr::Float)
                    .map_err(|_| self.error(span, "invalid float"))
            }
            Some(Tok::Minus) => {
                self.bump();
                if self.at_keyword("inf") {
                    self.bump();
                    Ok(Attr::Float(f64::NEG_INFINITY))
                } else {
                    Err(self.unexpected("`inf` after `-`"))
                }
            }
            Some(Tok::Str) => {
                self.bump();
                Ok(Attr::Str(self.unquote(span, 0)?))
            }
            Some(Tok::LBracket) => {
                self.bump();
                let mut v = vec![];
                if self.eat(Tok::RBracket) {
                    return Ok(Attr::Ints(v));
                }
                loop {
                    if self.peek() != Some(Tok::Int) {
                        return Err(self.unexpected("an integer (lists hold integers only)"));
                    }
                    let s = self.bump();
                    v.push(self.int_at(s)?);
                    if self.eat(Tok::RBracket) {
                        return Ok(Attr::Ints(v));
                    }
                    if !self.eat(Tok::Comma) {
                        return Err(self.unexpected("`,` or `]`"));
                    }
                }
            }
            Some(Tok::Ident) => {
                let text = self.text(&span);
                let value =
                    match text {
                        "true" => Attr::Bool(true),
                        "false" => Attr::Bool(false),
                        "none" => Attr::None,
                        "inf" => Attr::Float(f64::INFINITY),
                        "nan" => Attr::Float(f64::NAN),
                        _ => match DType::from_name(text) {
                            Some(d) => Attr::DType(d),
                            None => return Err(self.unexpected(
                                "an attribute value (number, bool, `none`, string, list or dtype)",
                            )),
                        },
                    };
                self.bump();
                Ok(value)
            }
            _ => {
                Err(self
                    .unexpected("an attribute value (number, bool, `none`, string, list or dtype)"))
            }
        }
    }

    /// `f32[2, 3]`
    fn ty(&mut self) -> Result<TensorType, ParseError> {
        if self.peek() != Some(Tok::Ident) {
            return Err(self.unexpected("a type (`f32[...]`)"));
        }
        let span = self.bump();
        let name = self.text(&span);
        let dtype = DType::from_name(name).ok_or_else(|| {
            let valid: Vec<&str> = DType::ALL.iter().map(|d| d.name()).collect();
            self.error(
                span.clone(),
                format!("unknown dtype `{name}` (valid: {})", valid.join(", ")),
            )
        })?;
        self.expect(Tok::LBracket)?;
        let mut shape = vec![];
        if !self.eat(Tok::RBracket) {
            loop {
                if self.peek() != Some(Tok::Int) {
                    return Err(self.unexpected("a dimension size"));
                }
                let s = self.bump();
                shape.push(self.int_at(s)?);
                if self.eat(Tok::RBracket) {
                    break;
                }
                if !self.eat(Tok::Comma) {
                    return Err(self.unexpected("`,` or `]`"));
                }
            }
        }
        Ok(TensorType::new(dtype, shape))
    }

    // ------------------------------------------------------------ pieces

    fn int_at(&self, span: Range<usize>) -> Result<i64, ParseError> {
        self.text(&span)
            .parse::<i64>()
            .map_err(|_| self.error(span, "integer out of range for i64"))
    }

    /// A value name in a definition position.
    fn value_name(&mut self) -> Result<(Key, Range<usize>), ParseError> {
        let span = self.span();
        let key = match self.peek() {
            Some(Tok::ValueName) => Key::Name(self.text(&span)[1..].to_string()),
            Some(Tok::ValueNum) => Key::Num(self.text(&span)[1..].to_string()),
            Some(Tok::ValueQuoted) => Key::Name(self.unquote(span.clone(), 1)?),
            _ => return Err(self.unexpected("a value name (`%x`)")),
        };
        self.bump();
        Ok((key, span))
    }

    fn value_use(&mut self) -> Result<Use, ParseError> {
        let (key, span) = self.value_name()?;
        Ok(Use { key, span })
    }

    fn check_new(&self, key: &Key, span: &Range<usize>) -> Result<(), ParseError> {
        match self.defs.get(key) {
            Some((_, prev)) => {
                let line = ParseError::at(self.src, prev.clone(), "").line;
                Err(self.error(
                    span.clone(),
                    format!("`{}` is already defined (on line {line})", self.text(span)),
                ))
            }
            None => Ok(()),
        }
    }

    fn resolve(&self, u: &Use) -> Result<ValueId, ParseError> {
        match self.defs.get(&u.key) {
            Some((v, _)) => Ok(*v),
            None => Err(self.error(
                u.span.clone(),
                format!("undefined value `{}`", self.text(&u.span)),
            )),
        }
    }

    /// The contents of the quoted token at `span`, after `prefix` bytes (`%`, `@`), with
    /// Rust's escapes undone.
    fn unquote(&self, span: Range<usize>, prefix: usize) -> Result<String, ParseError> {
        let text = self.text(&span);
        let inner = text
            .get(prefix + 1..text.len().saturating_sub(1))
            .unwrap_or("");
        unescape(inner).map_err(|(offset, message)| {
            let at = span.start + prefix + 1 + offset;
            self.error(at..span.end.min(at + 2).max(at), message)
        })
    }
}

/// Undoes the escapes of Rust's `{:?}` for strings: `\n \r \t \\ \" \' \0 \u{...}`.
/// Errors carry the byte offset of the bad escape.
fn unescape(s: &str) -> Result<String, (usize, String)> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next().map(|(_, e)| e);
        out.push(match e {
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('\\') => '\\',
            Some('"') => '"',
            Some('\'') => '\'',
            Some('0') => '\0',
            Some('u') => {
                let rest = &s[i + 2..];
                let code = rest
                    .strip_prefix('{')
                    .and_then(|r| r.split_once('}'))
                    .map(|(hex, _)| hex)
                    .filter(|hex| !hex.is_empty() && hex.len() <= 6);
                let ch = code
                    .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                    .and_then(char::from_u32)
                    .ok_or((
                        i,
                        "invalid unicode escape (expected `\\u{XXXX}`)".to_string(),
                    ))?;
                // skip `{hex}`
                for _ in 0..code.map_or(0, |h| h.len() + 2) {
                    chars.next();
                }
                ch
            }
            Some(other) => return Err((i, format!("unknown escape `\\{other}`"))),
            None => return Err((i, "unfinished escape".to_string())),
        });
    }
    Ok(out)
}

/// The op name closest to `name` (edit distance), if close enough to be a likely typo.
fn closest_op(name: &str) -> Option<&'static str> {
    let (best, dist) = Op::ALL
        .iter()
        .map(|op| (op.name(), edit_distance(name, op.name())))
        .min_by_key(|&(_, d)| d)?;
    let limit = (name.chars().count() / 3).max(2);
    (dist <= limit).then_some(best)
}

/// Edit distance over characters where swapping two neighbours counts as one edit
/// (optimal string alignment), so `rleu` is closest to `relu`.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // d[i][j]: distance between a[..i] and b[..j]
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_allow_swapped_letters() {
        assert_eq!(edit_distance("rleu", "relu"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(closest_op("rleu"), Some("relu"));
        assert_eq!(closest_op("conv2"), Some("conv2d"));
        assert_eq!(closest_op("frobnicate_everything"), None);
    }

    #[test]
    fn unescapes_what_debug_escapes() {
        let s = "a\"b\\c\nd\te\r\0'é\u{1f600}\u{7f}";
        let quoted = format!("{s:?}");
        assert_eq!(unescape(&quoted[1..quoted.len() - 1]).as_deref(), Ok(s));
        assert!(unescape("\\q").is_err());
        assert!(unescape("\\u{110000}").is_err());
        assert!(unescape("\\").is_err());
    }
}
