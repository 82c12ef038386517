//! The text format: a printer and a parser that round-trip (`print(parse(s)) == s`).

mod printer;

pub use printer::print;
