//! Python names for emitted code, fresh by construction. Every emitter of Python from the IR
//! (seed programs, the stitcher's host code, synthesized programs) names its values through
//! one [`PyNames`]: the names the code refers to (keywords, `torch`, the builtins it calls,
//! module-level helpers) are reserved, the inputs are registered first (two inputs whose
//! identifiers coincide get distinct ones), and every intermediate value gets a name never
//! handed out before, so an emitted name is never an input's, and no assignment overwrites a
//! value that is still read.

use std::collections::{HashMap, HashSet};

/// Python identifier for an input name (`conv.weight` -> `conv_weight`): other characters
/// become `_`, a leading digit gets a `_` before it, a keyword (or `torch`) one after it.
pub fn py_ident(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    // a keyword, or the module every emitted program imports
    if KEYWORDS.contains(&s.as_str()) || s == "torch" {
        s.push('_');
    }
    s
}

/// Python's keywords (hard ones: soft keywords such as `match` are valid names).
const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Names emitted code refers to inside a function body: the module it imports and the
/// builtins it calls (`float('inf')` literals, a grid's `min`, the prologue's `isinstance`).
const REFERENCED: [&str; 16] = [
    "torch",
    "float",
    "int",
    "bool",
    "min",
    "max",
    "abs",
    "len",
    "list",
    "tuple",
    "range",
    "isinstance",
    "hasattr",
    "getattr",
    "super",
    "self",
];

/// A name allocator for one emitted Python scope (a function and the globals it reads).
#[derive(Clone, Debug)]
pub struct PyNames {
    used: HashSet<String>,
    /// Reserved name prefixes (compared case-insensitively), e.g. `_drtc` for helpers.
    prefixes: Vec<String>,
    /// The next number to try for each stem of [`PyNames::numbered`].
    next: HashMap<String, usize>,
}

impl Default for PyNames {
    fn default() -> Self {
        Self::new()
    }
}

impl PyNames {
    /// An allocator with the keywords, `torch` and the builtins emitted code calls reserved.
    pub fn new() -> Self {
        let mut n = PyNames {
            used: HashSet::new(),
            prefixes: vec![],
            next: HashMap::new(),
        };
        for k in KEYWORDS.iter().chain(&REFERENCED) {
            n.reserve(k);
        }
        n
    }

    /// Reserves a name the emitted code refers to (a module, a helper, a kernel).
    pub fn reserve(&mut self, name: &str) {
        self.used.insert(name.to_string());
    }

    /// Reserves every name starting with `prefix` (case-insensitively): generated helpers
    /// and kernels (`_drtc_library`, `drtc_k0_pointwise`) whose names are made elsewhere.
    pub fn reserve_prefix(&mut self, prefix: &str) {
        self.prefixes.push(prefix.to_ascii_lowercase());
    }

    /// Whether `name` is still free: neither handed out nor reserved.
    pub fn is_free(&self, name: &str) -> bool {
        let lower = name.to_ascii_lowercase();
        !self.used.contains(name) && !self.prefixes.iter().any(|p| lower.starts_with(p))
    }

    /// The parameter name of an input called `name` (`conv.weight` -> `conv_weight`, see
    /// [`py_ident`]): that identifier when free, else the first free `{ident}_{k}`. Inputs
    /// are registered before any intermediate is named.
    pub fn input(&mut self, name: &str) -> String {
        self.fresh(&py_ident(name))
    }

    /// A fresh name based on `base` (an identifier): `base` itself when free, else the first
    /// free `{base}_{k}`, k = 1, 2, ...
    pub fn fresh(&mut self, base: &str) -> String {
        // no suffix frees a reserved prefix: a letter before it does
        let base = if self.has_reserved_prefix(base) {
            format!("x{base}")
        } else {
            base.to_string()
        };
        let name = if self.is_free(&base) {
            base
        } else {
            (1..)
                .map(|k| format!("{base}_{k}"))
                .find(|c| self.is_free(c))
                .expect("some suffix is free")
        };
        self.used.insert(name.clone());
        name
    }

    /// The next free name of the sequence `{stem}0`, `{stem}1`, ... (`tensor_0`,
    /// `tensor_1`, ...): numbers taken by inputs or reserved are skipped.
    pub fn numbered(&mut self, stem: &str) -> String {
        let mut k = self.next.get(stem).copied().unwrap_or(0);
        while !self.is_free(&format!("{stem}{k}")) {
            k += 1;
        }
        self.next.insert(stem.to_string(), k + 1);
        let name = format!("{stem}{k}");
        self.used.insert(name.clone());
        name
    }

    fn has_reserved_prefix(&self, name: &str) -> bool {
        let lower = name.to_ascii_lowercase();
        self.prefixes.iter().any(|p| lower.starts_with(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_intermediate_never_takes_an_input_name() {
        let mut n = PyNames::new();
        assert_eq!(n.input("v3"), "v3");
        assert_eq!(n.fresh("v2"), "v2");
        assert_eq!(n.fresh("v3"), "v3_1");
        assert_eq!(n.fresh("v3"), "v3_2");
        // seed-format inputs and the sequence of intermediates
        let mut n = PyNames::new();
        for i in 0..3 {
            assert_eq!(n.input(&format!("tensor_{i}")), format!("tensor_{i}"));
        }
        assert_eq!(n.numbered("tensor_"), "tensor_3");
        assert_eq!(n.numbered("tensor_"), "tensor_4");
        let mut n = PyNames::new();
        n.input("tensor_1");
        let got: Vec<String> = (0..3).map(|_| n.numbered("tensor_")).collect();
        assert_eq!(got, ["tensor_0", "tensor_2", "tensor_3"]);
    }

    #[test]
    fn inputs_with_one_identifier_get_distinct_ones() {
        let mut n = PyNames::new();
        assert_eq!(n.input("a.b"), "a_b");
        assert_eq!(n.input("a_b"), "a_b_1");
        assert_eq!(n.input("a-b"), "a_b_2");
        assert_eq!(n.fresh("a_b_1"), "a_b_1_1");
        // an input named like a suffixed one
        let mut n = PyNames::new();
        assert_eq!(n.input("x_1"), "x_1");
        assert_eq!(n.input("x"), "x");
        assert_eq!(n.input("x"), "x_2");
    }

    #[test]
    fn keywords_builtins_and_reserved_names_are_never_handed_out() {
        let mut n = PyNames::new();
        assert_eq!(n.input("def"), "def_");
        assert_eq!(n.input("lambda"), "lambda_");
        assert_eq!(n.input("torch"), "torch_");
        assert_eq!(n.input("None"), "None_");
        assert_eq!(n.input("float"), "float_1");
        assert_eq!(n.input("3d"), "_3d");
        assert_eq!(n.input(""), "_");
        assert_eq!(n.fresh("min"), "min_1");
        // soft keywords are names
        assert_eq!(n.input("match"), "match");
        let mut n = PyNames::new();
        n.reserve("triton");
        n.reserve_prefix("_drtc");
        n.reserve_prefix("drtc_");
        assert_eq!(n.input("triton"), "triton_1");
        assert_eq!(n.input("_drtc_sms"), "x_drtc_sms");
        assert_eq!(n.input("_DRTC_TMA"), "x_DRTC_TMA");
        assert_eq!(n.input("drtc_k0_pointwise"), "xdrtc_k0_pointwise");
        assert_eq!(n.fresh("drtc_k0_pointwise"), "xdrtc_k0_pointwise_1");
        assert!(!n.is_free("drtc_forward"));
        assert!(n.is_free("x"));
    }
}
