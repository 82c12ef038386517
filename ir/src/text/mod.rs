//! The text format: a printer and a parser that round-trip (`print(parse(s)) == s`).

mod error;
mod lexer;
mod parser;
mod printer;

pub use error::ParseError;
pub use parser::parse;
pub use printer::print;
