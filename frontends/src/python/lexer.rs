//! The lexer: Python source to tokens, with `logos` for the raw tokens and a second pass
//! that turns line starts into NEWLINE / INDENT / DEDENT like CPython's tokenizer.
//!
//! Comments, blank lines and line continuations (backslash, open brackets) produce no
//! tokens. Every token keeps its byte span so later errors can point at the source.

use super::error::{FrontendError, Span};
use logos::Logos;

/// A raw token, as `logos` sees it (no layout yet).
#[derive(Logos, Debug, Clone, PartialEq)]
#[logos(skip r"[ \t\f]+")]
#[logos(skip r"#[^\r\n]*")]
#[logos(skip r"\\\r?\n")]
enum Raw {
    #[regex(r"\r?\n")]
    Newline,
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice().to_string(), priority = 2)]
    Name(String),
    #[regex(r"[0-9][0-9_]*", |lex| lex.slice().to_string())]
    #[regex(r"0[xX][0-9a-fA-F_]+", |lex| lex.slice().to_string())]
    Int(String),
    #[regex(r"[0-9][0-9_]*\.[0-9_]*([eE][+-]?[0-9]+)?", |lex| lex.slice().to_string())]
    #[regex(r"\.[0-9][0-9_]*([eE][+-]?[0-9]+)?", |lex| lex.slice().to_string())]
    #[regex(r"[0-9][0-9_]*[eE][+-]?[0-9]+", |lex| lex.slice().to_string())]
    Float(String),
    #[regex(r#"[rRbBuUfF]{0,2}"([^"\\\r\n]|\\.)*""#, |lex| lex.slice().to_string())]
    #[regex(r#"[rRbBuUfF]{0,2}'([^'\\\r\n]|\\.)*'"#, |lex| lex.slice().to_string())]
    #[regex(r#"[rRbBuUfF]{0,2}""""#, triple_quoted)]
    #[regex(r#"[rRbBuUfF]{0,2}'''"#, triple_quoted)]
    Str(String),
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[regex(r"\*\*=|//=|>>=|<<=|->|\+=|-=|\*=|/=|%=|@=|&=|\|=|\^=|==|!=|<=|>=|\*\*|//|<<|>>|:=|\.\.\.|[-+*/%@&|^~<>=.,:;!]", |lex| lex.slice().to_string())]
    Op(String),
}

/// Bumps the lexer past the closing triple quote; returns the whole literal.
fn triple_quoted(lex: &mut logos::Lexer<Raw>) -> Option<String> {
    let opener = lex.slice();
    let quote = &opener[opener.len() - 3..];
    let rest = lex.remainder().as_bytes();
    let quote = quote.as_bytes();
    let mut i = 0;
    while i < rest.len() {
        if rest[i] == b'\\' {
            i += 2;
            continue;
        }
        if rest[i..].starts_with(quote) {
            lex.bump(i + 3);
            return Some(lex.slice().to_string());
        }
        i += 1;
    }
    None
}

/// A token of the layout-aware stream the parser reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Name(String),
    Int(i64),
    Float(f64),
    /// The decoded value of a string literal.
    Str(String),
    /// Punctuation and operators, spelled as in the source (`(`, `**`, `->` ...).
    Op(&'static str),
    Newline,
    Indent,
    Dedent,
    Eof,
}

/// A token and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

const OPS: &[&str] = &[
    "**=", "//=", ">>=", "<<=", "->", "+=", "-=", "*=", "/=", "%=", "@=", "&=", "|=", "^=", "==",
    "!=", "<=", ">=", "**", "//", "<<", ">>", ":=", "...", "-", "+", "*", "/", "%", "@", "&", "|",
    "^", "~", "<", ">", "=", ".", ",", ":", ";", "!", "(", ")", "[", "]", "{", "}",
];

fn intern(op: &str) -> &'static str {
    OPS.iter().find(|o| **o == op).copied().unwrap_or("?")
}

/// Decodes a string literal (with optional prefix) into its value.
fn decode_string(lit: &str, span: Span) -> Result<String, FrontendError> {
    let prefix_len = lit.find(['"', '\'']).unwrap_or(0);
    let prefix = lit[..prefix_len].to_ascii_lowercase();
    let body = &lit[prefix_len..];
    if prefix.contains('b') {
        return Err(FrontendError::unsupported(
            "bytes literals are not in the supported Python subset",
            span,
        ));
    }
    let q = if body.starts_with("\"\"\"") || body.starts_with("'''") {
        3
    } else {
        1
    };
    if body.len() < 2 * q {
        return Err(FrontendError::syntax("unterminated string literal", span));
    }
    let inner = &body[q..body.len() - q];
    if prefix.contains('r') {
        return Ok(inner.to_string());
    }
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('\\') => out.push('\\'),
            Some('\'') => out.push('\''),
            Some('"') => out.push('"'),
            Some('\n') => {}
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    Ok(out)
}

fn parse_int(text: &str, span: Span) -> Result<i64, FrontendError> {
    let clean: String = text.chars().filter(|&c| c != '_').collect();
    let parsed = if let Some(hex) = clean
        .strip_prefix("0x")
        .or_else(|| clean.strip_prefix("0X"))
    {
        i64::from_str_radix(hex, 16)
    } else {
        clean.parse::<i64>()
    };
    parsed.map_err(|_| {
        FrontendError::unsupported(
            format!("integer literal `{text}` does not fit in 64 bits"),
            span,
        )
    })
}

fn parse_float(text: &str, span: Span) -> Result<f64, FrontendError> {
    let clean: String = text.chars().filter(|&c| c != '_').collect();
    clean
        .parse::<f64>()
        .map_err(|_| FrontendError::syntax(format!("malformed number `{text}`"), span))
}

/// Splits `source` into tokens, with NEWLINE/INDENT/DEDENT, ending in `Eof`.
pub fn tokenize(source: &str) -> Result<Vec<Token>, FrontendError> {
    let mut out: Vec<Token> = Vec::new();
    let mut indents: Vec<usize> = vec![0];
    let mut depth: usize = 0;
    // whether the current logical line has produced a token yet
    let mut line_open = false;
    let mut lexer = Raw::lexer(source);
    while let Some(raw) = lexer.next() {
        let span: Span = lexer.span();
        let raw = match raw {
            Ok(r) => r,
            Err(()) => {
                let text = &source[span.clone()];
                let msg = if text.starts_with(['"', '\'']) {
                    "unterminated string literal".to_string()
                } else {
                    format!(
                        "unexpected character `{}`",
                        text.chars().next().unwrap_or('?')
                    )
                };
                return Err(FrontendError::syntax(msg, span));
            }
        };
        if raw == Raw::Newline {
            if depth == 0 && line_open {
                out.push(Token {
                    tok: Tok::Newline,
                    span,
                });
                line_open = false;
            }
            continue;
        }
        if !line_open && depth == 0 {
            // first token of a logical line: compare its indentation with the stack
            let line_start = source[..span.start].rfind('\n').map_or(0, |i| i + 1);
            let prefix = &source[line_start..span.start];
            let width: usize = prefix.chars().map(|c| if c == '\t' { 8 } else { 1 }).sum();
            let top = *indents.last().unwrap_or(&0);
            if width > top {
                indents.push(width);
                out.push(Token {
                    tok: Tok::Indent,
                    span: span.start..span.start,
                });
            } else if width < top {
                while indents.last().is_some_and(|&t| t > width) {
                    indents.pop();
                    out.push(Token {
                        tok: Tok::Dedent,
                        span: span.start..span.start,
                    });
                }
                if indents.last() != Some(&width) {
                    return Err(FrontendError::syntax(
                        "unindent does not match any outer indentation level",
                        line_start..span.start.max(line_start + 1).min(source.len()),
                    ));
                }
            }
        }
        line_open = true;
        let tok = match raw {
            Raw::Newline => Tok::Newline,
            Raw::Name(n) => Tok::Name(n),
            Raw::Int(t) => Tok::Int(parse_int(&t, span.clone())?),
            Raw::Float(t) => Tok::Float(parse_float(&t, span.clone())?),
            Raw::Str(t) => Tok::Str(decode_string(&t, span.clone())?),
            Raw::LParen | Raw::LBracket | Raw::LBrace => {
                depth += 1;
                Tok::Op(match raw {
                    Raw::LParen => "(",
                    Raw::LBracket => "[",
                    _ => "{",
                })
            }
            Raw::RParen | Raw::RBracket | Raw::RBrace => {
                depth = depth.saturating_sub(1);
                Tok::Op(match raw {
                    Raw::RParen => ")",
                    Raw::RBracket => "]",
                    _ => "}",
                })
            }
            Raw::Op(o) => Tok::Op(intern(&o)),
        };
        out.push(Token { tok, span });
    }
    let end = source.len();
    if line_open {
        out.push(Token {
            tok: Tok::Newline,
            span: end..end,
        });
    }
    while indents.len() > 1 {
        indents.pop();
        out.push(Token {
            tok: Tok::Dedent,
            span: end..end,
        });
    }
    out.push(Token {
        tok: Tok::Eof,
        span: end..end,
    });
    Ok(out)
}
