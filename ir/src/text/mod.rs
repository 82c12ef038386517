//! The text format: a printer and a parser that round-trip (`print(parse(s)) == s` for
//! every printed graph), so graphs can be written by hand, diffed and snapshot-tested.
//!
//! ```text
//! graph @model(%x: f32[128, 64, 32, 32], %conv.weight: param f32[128, 64, 3, 3], %b: buffer f32[128]) {
//!   %0 = conv2d(%x, %conv.weight, %b) {stride = [1, 1], padding = [1, 1], dilation = [1, 1], groups = 1} : f32[128, 128, 32, 32]
//!   %1 = relu(%0) : f32[128, 128, 32, 32]
//!   return %1
//! }
//! ```
//!
//! Grammar (`//` comments run to the end of a line):
//!
//! ```text
//! graph  := "graph" "@" name "(" [input ("," input)*] ")" "{" node* "return" [value ("," value)*] "}"
//! input  := value ":" ["param" | "buffer"] type
//! node   := value ("," value)* "=" op "(" [value ("," value)*] ")" ["{" [attr ("," attr)*] "}"] ":" type ("," type)*
//! type   := dtype "[" [int ("," int)*] "]"                      f32[2, 3], i64[] (a scalar)
//! value  := "%" (identifier | digits | quoted)                  %x, %conv.weight, %0, %"odd name"
//! attr   := identifier "=" (int | float | "true" | "false" | "none" | string | "[" ints "]" | dtype)
//! float  := 1.0 | 1e-5 | inf | -inf | nan                       (Rust's shortest round-trip form)
//! ```
//!
//! The printer numbers node results `%0, %1, ...` in program order; the parser also accepts
//! other names and forward references (the verifier reports use-before-def).

mod error;
mod lexer;
mod parser;
mod printer;

pub use error::ParseError;
pub use parser::parse;
pub use printer::print;
