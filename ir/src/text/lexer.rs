//! Tokens of the text format, produced by a `logos` lexer.
//!
//! Tokens carry no data: the parser reads each token's text from the source through its
//! byte span, so the lexer stays a pure classifier and cannot fail on bad numbers (the
//! parser reports those with a position).

use logos::Logos;
use std::ops::Range;

/// One token kind of the text format.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n\f]+")]
pub(crate) enum Tok {
    /// `// ...` to the end of the line.
    #[regex(r"//[^\n]*", logos::skip)]
    Comment,

    /// Keywords (`graph`, `return`, `param`, `buffer`), op names, attribute names, dtypes,
    /// `true`, `false`, `none`, `inf`, `nan`.
    #[regex(r"[A-Za-z_][A-Za-z0-9_.]*")]
    Ident,
    /// `%x`, `%conv.weight`.
    #[regex(r"%[A-Za-z_][A-Za-z0-9_.]*")]
    ValueName,
    /// `%0`: a node result.
    #[regex(r"%[0-9]+")]
    ValueNum,
    /// `%"odd name"`.
    #[regex(r#"%"([^"\\]|\\.)*""#)]
    ValueQuoted,
    /// `@model`.
    #[regex(r"@[A-Za-z_][A-Za-z0-9_.]*")]
    GraphName,
    /// `@"odd name"`.
    #[regex(r#"@"([^"\\]|\\.)*""#)]
    GraphQuoted,

    #[regex(r"-?[0-9]+")]
    Int,
    #[regex(r"-?[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?")]
    #[regex(r"-?[0-9]+[eE][+-]?[0-9]+")]
    Float,
    /// `"tanh"`, with Rust's escapes.
    #[regex(r#""([^"\\]|\\.)*""#)]
    Str,

    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token(",")]
    Comma,
    #[token(":")]
    Colon,
    #[token("=")]
    Equals,
    /// Only in `-inf`.
    #[token("-")]
    Minus,

    /// Something the lexer does not recognize (never produced by logos itself).
    Error,
}

impl Tok {
    /// How the parser names this token in "expected ..., found ..." messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Tok::Comment => "a comment",
            Tok::Ident => "a name",
            Tok::ValueName | Tok::ValueNum | Tok::ValueQuoted => "a value name",
            Tok::GraphName | Tok::GraphQuoted => "a graph name",
            Tok::Int => "an integer",
            Tok::Float => "a float",
            Tok::Str => "a string",
            Tok::LParen => "`(`",
            Tok::RParen => "`)`",
            Tok::LBrace => "`{`",
            Tok::RBrace => "`}`",
            Tok::LBracket => "`[`",
            Tok::RBracket => "`]`",
            Tok::Comma => "`,`",
            Tok::Colon => "`:`",
            Tok::Equals => "`=`",
            Tok::Minus => "`-`",
            Tok::Error => "an unrecognized character",
        }
    }
}

/// Splits `src` into tokens with their byte spans. Unrecognized input becomes
/// [`Tok::Error`] tokens, which the parser reports when it reaches them.
pub(crate) fn lex(src: &str) -> Vec<(Tok, Range<usize>)> {
    Tok::lexer(src)
        .spanned()
        .map(|(t, span)| (t.unwrap_or(Tok::Error), span))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok> {
        lex(src).into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn classifies_tokens() {
        use Tok::*;
        assert_eq!(
            kinds(r#"%x %0 %"a b" @m @"n" f32 1 -2 1.5 1e-5 -inf "s\"t" ( ) { } [ ] , : = // c"#),
            vec![
                ValueName,
                ValueNum,
                ValueQuoted,
                GraphName,
                GraphQuoted,
                Ident,
                Int,
                Int,
                Float,
                Float,
                Minus,
                Ident,
                Str,
                LParen,
                RParen,
                LBrace,
                RBrace,
                LBracket,
                RBracket,
                Comma,
                Colon,
                Equals
            ]
        );
    }

    #[test]
    fn dotted_names_are_one_token() {
        let toks = lex("%conv.weight");
        assert_eq!(toks, vec![(Tok::ValueName, 0..12)]);
    }

    #[test]
    fn bad_characters_become_error_tokens() {
        assert_eq!(kinds("# %"), vec![Tok::Error, Tok::Error]);
        assert_eq!(kinds("\"open"), vec![Tok::Error]);
    }
}
