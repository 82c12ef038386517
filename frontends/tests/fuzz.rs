//! Fuzzing the lexer, parser and lowering: arbitrary bytes, Python-looking token soup, and
//! task files with random edits must never panic; whatever lowers must verify.
//!
//! `PROPTEST_CASES` scales the runs (the default keeps `cargo test` fast); inputs that once
//! failed are kept as plain tests in `regressions.rs`.

mod common;

use drtc_frontends::python::{lexer::tokenize, parse};
use drtc_frontends::{lower, split_programs};
use proptest::prelude::*;
use std::sync::OnceLock;

/// Lowers `text`; a lowered graph must pass the verifier, and an error must render.
fn check(text: &str) {
    let _ = tokenize(text);
    let _ = parse(text);
    match lower(text) {
        Ok(l) => {
            let errors: Vec<_> = drtc_ir::verify(&l.graph)
                .into_iter()
                .filter(|e| e.is_error())
                .collect();
            assert!(
                errors.is_empty(),
                "lowered graph does not verify: {errors:?}\n{text}"
            );
            let _ = drtc_ir::text::print(&l.graph);
        }
        Err(e) => {
            let _ = e.render("fuzz.py", text);
        }
    }
    let _ = split_programs("fuzz.jsonl", text);
}

fn corpus() -> &'static [(String, String)] {
    static C: OnceLock<Vec<(String, String)>> = OnceLock::new();
    C.get_or_init(common::corpus)
}

/// Fragments that make edits look like real (broken) programs.
const FRAGMENTS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    ":",
    ",",
    "=",
    "\n",
    "    ",
    "\t",
    "*",
    "**",
    "-",
    "+",
    "/",
    "//",
    "@",
    ".",
    "'",
    "\"",
    "\"\"\"",
    "\\\n",
    "#",
    "0",
    "1",
    "-1",
    "2",
    "3",
    "1e400",
    "1e-5",
    "99999999999999999999",
    "9223372036854775807",
    "0x",
    "None",
    "True",
    "self.",
    "x",
    "torch.",
    "nn.",
    "F.",
    "def ",
    "class ",
    "return ",
    "import ",
    "lambda",
    "if ",
    "for ",
    "...",
    "torch.rand(",
    "torch.randn(",
    "torch.max(x, dim=1)",
    "[0]",
    ".values",
    ".view(-1)",
    ".view(",
    "float(\"-inf\")",
    "math.sqrt(",
    "super().__init__()",
    "nn.Conv2d(",
    "nn.Linear(",
    "nn.Dropout(0.5)",
    "torch.cat(",
    "(,)",
    "*args",
    "get_inputs",
    "Model",
    "forward",
    "fused_operator",
    "x[:, None, ..., 1:2:0]",
    "dim=",
    "keepdim=True",
    "groups=",
];

#[derive(Debug, Clone)]
enum Edit {
    Delete { at: usize, len: usize },
    Insert { at: usize, fragment: usize },
    Duplicate { at: usize, len: usize },
    Number { nth: usize, value: i64 },
}

fn edit_strategy() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 0usize..40).prop_map(|(at, len)| Edit::Delete { at, len }),
        (any::<usize>(), 0..FRAGMENTS.len())
            .prop_map(|(at, fragment)| Edit::Insert { at, fragment }),
        (any::<usize>(), 0usize..200).prop_map(|(at, len)| Edit::Duplicate { at, len }),
        (
            any::<usize>(),
            prop_oneof![
                -3i64..70,
                Just(0),
                Just(i64::MAX),
                Just(i64::MIN),
                Just(1 << 40),
                Just(1 << 62)
            ]
        )
            .prop_map(|(nth, value)| Edit::Number { nth, value }),
    ]
}

fn char_floor(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(text: &str, edit: &Edit) -> String {
    let n = text.len().max(1);
    match *edit {
        Edit::Delete { at, len } => {
            let a = char_floor(text, at % n);
            let b = char_floor(text, a + len);
            format!("{}{}", &text[..a], &text[b..])
        }
        Edit::Insert { at, fragment } => {
            let a = char_floor(text, at % n);
            format!("{}{}{}", &text[..a], FRAGMENTS[fragment], &text[a..])
        }
        Edit::Duplicate { at, len } => {
            let a = char_floor(text, at % n);
            let b = char_floor(text, a + len);
            format!("{}{}{}", &text[..b], &text[a..b], &text[b..])
        }
        Edit::Number { nth, value } => {
            // replace the nth run of digits
            let runs: Vec<(usize, usize)> = {
                let bytes = text.as_bytes();
                let mut v = vec![];
                let mut i = 0;
                while i < bytes.len() {
                    if bytes[i].is_ascii_digit() {
                        let s = i;
                        while i < bytes.len() && bytes[i].is_ascii_digit() {
                            i += 1;
                        }
                        v.push((s, i));
                    } else {
                        i += 1;
                    }
                }
                v
            };
            if runs.is_empty() {
                return text.to_string();
            }
            let (a, b) = runs[nth % runs.len()];
            format!("{}{}{}", &text[..a], value, &text[b..])
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        check(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn token_soup_never_panics(parts in proptest::collection::vec(0..FRAGMENTS.len(), 0..80)) {
        let text: String = parts.iter().map(|&i| FRAGMENTS[i]).collect();
        check(&text);
    }

    #[test]
    fn mutated_tasks_never_panic(task in any::<usize>(), edits in proptest::collection::vec(edit_strategy(), 1..6)) {
        let corpus = corpus();
        prop_assume!(!corpus.is_empty());
        let (_, text) = &corpus[task % corpus.len()];
        let mut t = text.clone();
        for e in &edits {
            t = apply(&t, e);
        }
        check(&t);
    }
}
