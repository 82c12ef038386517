//! The text format round-trips: `print(parse(s)) == s` for printed graphs (random graphs
//! from the builder, every `.drt` file in the workspace), and the parser never panics.

use drtc_ir::text::{parse, print};
use drtc_ir::{verify, Attr, DType, Graph, GraphBuilder, Op, TensorType, ValueId};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------- random graphs

/// Builds a random graph from a list of steps; steps the builder rejects are skipped.
struct RandomGraph {
    b: GraphBuilder,
    values: Vec<ValueId>,
    inputs: usize,
}

const INPUT_NAMES: &[&str] = &[
    "x", "input.0", "odd name", "0", "_y", "w\"q", "é", "a\\b", "tab\t",
];
const GRAPH_NAMES: &[&str] = &["model", "Model.forward", "1st graph", "g_2"];

const UNARY: &[(Op, &[(&str, Attr)])] = &[
    (Op::Relu, &[]),
    (Op::Sigmoid, &[]),
    (Op::Tanh, &[]),
    (Op::Silu, &[]),
    (Op::Selu, &[]),
    (Op::Hardsigmoid, &[]),
    (Op::Hardswish, &[]),
    (Op::Softsign, &[]),
    (Op::Logsigmoid, &[]),
    (Op::Mish, &[]),
    (Op::Abs, &[]),
    (Op::Neg, &[]),
    (Op::Sign, &[]),
    (Op::Cos, &[]),
    (Op::Sin, &[]),
    (Op::Exp, &[]),
    (Op::Exp2, &[]),
    (Op::Log, &[]),
    (Op::Sqrt, &[]),
    (Op::Rsqrt, &[]),
    (Op::Erf, &[]),
    (Op::Reciprocal, &[]),
    (Op::Softmax, &[]),
    (Op::Gelu, &[]),
];

impl RandomGraph {
    fn new(name: usize, inputs: &[(u8, Vec<i64>)]) -> Self {
        let mut b = GraphBuilder::new(GRAPH_NAMES[name % GRAPH_NAMES.len()]);
        let mut values = vec![];
        for (i, (d, shape)) in inputs.iter().enumerate() {
            let dtype =
                [DType::F32, DType::F32, DType::F16, DType::F64, DType::I64][*d as usize % 5];
            let name = format!("{}{i}", INPUT_NAMES[i % INPUT_NAMES.len()]);
            values.push(b.input(name, TensorType::new(dtype, shape.clone())));
        }
        let n = values.len();
        RandomGraph {
            b,
            values,
            inputs: n,
        }
    }

    fn pick(&self, r: u32) -> ValueId {
        self.values[r as usize % self.values.len()]
    }

    fn param(&mut self, shape: Vec<i64>, dtype: DType) -> ValueId {
        self.inputs += 1;
        let name = format!("layer{}.weight", self.inputs);
        if self.inputs.is_multiple_of(3) {
            self.b.buffer(name, TensorType::new(dtype, shape))
        } else {
            self.b.param(name, TensorType::new(dtype, shape))
        }
    }

    /// One step: an op of the category `kind`, with operands and attributes from `r`.
    fn step(&mut self, kind: u8, r: u32) {
        let x = self.pick(r);
        let y = self.pick(r / 7);
        let t = self.b.ty(x).clone();
        let rank = t.rank() as i64;
        let p = (r >> 8) as i64;
        let dim = if rank > 0 {
            p % rank - (p / 5 % 2) * rank
        } else {
            0
        };
        let keepdim = Attr::Bool(p % 3 == 0);
        let res = match kind % 12 {
            0 => {
                let (op, attrs) = UNARY[p as usize % UNARY.len()];
                let mut attrs: Vec<(&'static str, Attr)> = attrs.to_vec();
                match op {
                    Op::Softmax => attrs.push(("dim", Attr::Int(dim))),
                    Op::Gelu if p % 2 == 0 => attrs.push(("approximate", Attr::Str("tanh".into()))),
                    _ => {}
                }
                self.b.op(op, &[x], attrs)
            }
            1 => {
                let ops = [
                    Op::Add,
                    Op::Sub,
                    Op::Mul,
                    Op::Div,
                    Op::Maximum,
                    Op::Minimum,
                    Op::Pow,
                    Op::Eq,
                    Op::Ne,
                    Op::Lt,
                    Op::Le,
                    Op::Gt,
                    Op::Ge,
                ];
                match p % 8 {
                    0 => self.b.op(Op::Lerp, &[x, y, x], []),
                    1 => match self.b.op1(Op::Gt, &[x, y], []) {
                        Ok(c) => self.b.op(Op::Where, &[c, x, y], []),
                        Err(e) => Err(e),
                    },
                    _ => self.b.op(ops[p as usize / 8 % ops.len()], &[x, y], []),
                }
            }
            2 => {
                let dtype = DType::ALL[p as usize / 7 % DType::ALL.len()];
                let attr_sets: [(Op, Vec<(&'static str, Attr)>); 7] = [
                    (Op::Cast, vec![("dtype", Attr::DType(dtype))]),
                    (Op::LeakyRelu, vec![("negative_slope", Attr::Float(0.2))]),
                    (
                        Op::Softplus,
                        vec![("beta", Attr::Float(2.0)), ("threshold", Attr::Float(1e-5))],
                    ),
                    (Op::Elu, vec![("alpha", Attr::Int(2))]),
                    (
                        Op::Hardtanh,
                        vec![("min_val", Attr::Float(f64::NEG_INFINITY))],
                    ),
                    (
                        Op::Clamp,
                        vec![
                            ("min", Attr::Float(0.0)),
                            ("max", Attr::Float(f64::INFINITY)),
                        ],
                    ),
                    (Op::Dropout, vec![("p", Attr::Float(0.0))]),
                ];
                let (op, attrs) = attr_sets[p as usize % attr_sets.len()].clone();
                self.b.op(op, &[x], attrs)
            }
            3 => {
                let ops = [
                    Op::Sum,
                    Op::Mean,
                    Op::Prod,
                    Op::Max,
                    Op::Min,
                    Op::Var,
                    Op::Std,
                    Op::Norm,
                ];
                let dims = if p % 4 == 0 {
                    Attr::None
                } else if p % 4 == 1 && rank >= 2 {
                    Attr::Ints(vec![0, -1])
                } else {
                    Attr::Ints(vec![dim])
                };
                if p % 9 == 8 {
                    self.b.op(
                        Op::Logsumexp,
                        &[x],
                        [("dim", Attr::Ints(vec![dim])), ("keepdim", keepdim)],
                    )
                } else {
                    self.b.op(
                        ops[p as usize % ops.len()],
                        &[x],
                        [("dim", dims), ("keepdim", keepdim)],
                    )
                }
            }
            4 => {
                let ops = [
                    Op::LogSoftmax,
                    Op::Cumsum,
                    Op::Cumprod,
                    Op::Cummax,
                    Op::Cummin,
                ];
                let r = self
                    .b
                    .op(ops[p as usize % ops.len()], &[x], [("dim", Attr::Int(dim))]);
                if p % 2 == 0 {
                    r
                } else {
                    let arg = [Op::Argmax, Op::Argmin][p as usize / 2 % 2];
                    self.b
                        .op(arg, &[x], [("dim", Attr::Int(dim)), ("keepdim", keepdim)])
                }
            }
            5 => {
                let d1 = if rank > 0 { (p / 3) % rank } else { 0 };
                match p % 14 {
                    0 => self.b.op(
                        Op::Transpose,
                        &[x],
                        [("dim0", Attr::Int(dim)), ("dim1", Attr::Int(d1))],
                    ),
                    1 => self.b.op(
                        Op::Permute,
                        &[x],
                        [("dims", Attr::Ints((0..rank).rev().collect()))],
                    ),
                    2 => self
                        .b
                        .op(Op::Reshape, &[x], [("shape", Attr::Ints(vec![-1]))]),
                    3 => self.b.op(Op::Flatten, &[x], [("start_dim", Attr::Int(d1))]),
                    4 => self
                        .b
                        .op(Op::Squeeze, &[x], [("dim", Attr::Ints(vec![dim]))]),
                    5 => self.b.op(Op::Unsqueeze, &[x], [("dim", Attr::Int(dim))]),
                    6 => self.b.op(
                        Op::Expand,
                        &[x],
                        [("shape", Attr::Ints([vec![2], t.shape.clone()].concat()))],
                    ),
                    7 => self.b.op(
                        Op::Narrow,
                        &[x],
                        [
                            ("dim", Attr::Int(dim)),
                            ("start", Attr::Int(0)),
                            ("length", Attr::Int(1)),
                        ],
                    ),
                    8 => self.b.op(
                        Op::Slice,
                        &[x],
                        [
                            ("dim", Attr::Int(dim)),
                            ("start", Attr::Int(1)),
                            ("step", Attr::Int(2)),
                        ],
                    ),
                    9 => self.b.op(
                        Op::Select,
                        &[x],
                        [("dim", Attr::Int(dim)), ("index", Attr::Int(0))],
                    ),
                    10 => self.b.op(Op::Flip, &[x], [("dims", Attr::Ints(vec![dim]))]),
                    11 => self.b.op(
                        [Op::Triu, Op::Tril, Op::Diag][p as usize / 14 % 3],
                        &[x],
                        [("diagonal", Attr::Int(p % 3 - 1))],
                    ),
                    12 => self.b.op(Op::Cat, &[x, y], [("dim", Attr::Int(dim))]),
                    _ => self.b.op(Op::Stack, &[x, x], [("dim", Attr::Int(dim))]),
                }
            }
            6 => {
                let k = t.shape.last().copied().unwrap_or(1);
                let n = 1 + p % 4;
                match p % 4 {
                    0 => {
                        let w = self.param(vec![k, n], t.dtype);
                        self.b.op(Op::Matmul, &[x, w], [])
                    }
                    1 => {
                        let w = self.param(vec![n, k], t.dtype);
                        let bias = self.param(vec![n], t.dtype);
                        self.b.op(Op::Linear, &[x, w, bias], [])
                    }
                    2 if rank == 3 => {
                        let w = self.param(vec![t.shape[0], k, n], t.dtype);
                        self.b.op(Op::Bmm, &[x, w], [])
                    }
                    2 => self.b.op(
                        Op::Einsum,
                        &[x, y],
                        [("equation", Attr::Str("ij,jk->ik".into()))],
                    ),
                    _ => self.b.op(
                        Op::Attention,
                        &[x, x, x],
                        [("is_causal", Attr::Bool(p % 8 == 3))],
                    ),
                }
            }
            7 => {
                // convolutions over [N, C, *spatial]
                let spatial = rank - 2;
                if !(1..=3).contains(&spatial) {
                    return;
                }
                let c = t.shape[1];
                let k = 1 + p % 2;
                let transposed = p % 3 == 0;
                let (op, w_shape) = match (spatial, transposed) {
                    (1, false) => (Op::Conv1d, vec![2, c, k]),
                    (2, false) => (Op::Conv2d, vec![2, c, k, k]),
                    (3, false) => (Op::Conv3d, vec![2, c, k, k, k]),
                    (1, true) => (Op::ConvTranspose1d, vec![c, 2, k]),
                    (2, true) => (Op::ConvTranspose2d, vec![c, 2, k, k]),
                    _ => (Op::ConvTranspose3d, vec![c, 2, k, k, k]),
                };
                let w = self.param(w_shape, t.dtype);
                let stride = Attr::Ints(vec![1 + p % 2; spatial as usize]);
                self.b.op(op, &[x, w], [("stride", stride)])
            }
            8 => {
                let spatial = rank - 2;
                let ops = match spatial {
                    1 => [Op::MaxPool1d, Op::AvgPool1d, Op::AdaptiveAvgPool1d],
                    2 => [Op::MaxPool2d, Op::AvgPool2d, Op::AdaptiveAvgPool2d],
                    3 => [Op::MaxPool3d, Op::AvgPool3d, Op::AdaptiveAvgPool3d],
                    _ => return,
                };
                let op = ops[p as usize % 3];
                if p % 3 == 2 {
                    self.b.op(op, &[x], [("output_size", Attr::Ints(vec![1]))])
                } else {
                    self.b.op(
                        op,
                        &[x],
                        [
                            ("kernel_size", Attr::Ints(vec![2])),
                            ("ceil_mode", Attr::Bool(p % 2 == 0)),
                        ],
                    )
                }
            }
            9 => {
                if rank < 2 {
                    return;
                }
                let c = t.shape[1];
                let last = t.shape[rank as usize - 1];
                match p % 5 {
                    0 => {
                        let w = self.param(vec![c], t.dtype);
                        self.b
                            .op(Op::BatchNorm, &[x, w], [("eps", Attr::Float(1e-3))])
                    }
                    1 => {
                        let w = self.param(vec![last], t.dtype);
                        self.b.op(
                            Op::LayerNorm,
                            &[x, w],
                            [("normalized_shape", Attr::Ints(vec![last]))],
                        )
                    }
                    2 => self
                        .b
                        .op(Op::GroupNorm, &[x], [("num_groups", Attr::Int(1))]),
                    3 => self.b.op(Op::InstanceNorm, &[x], []),
                    _ => self.b.op(
                        Op::RmsNorm,
                        &[x],
                        [("normalized_shape", Attr::Ints(vec![last]))],
                    ),
                }
            }
            10 => {
                let ops = [Op::MseLoss, Op::SmoothL1Loss, Op::KlDiv];
                let reduction = ["mean", "sum", "none"][p as usize / 3 % 3];
                if p % 4 == 3 && rank == 2 {
                    let target = self.param(vec![t.shape[0]], DType::I64);
                    self.b.op(Op::CrossEntropy, &[x, target], [])
                } else if p % 4 == 2 {
                    self.b.op(
                        Op::TripletMarginLoss,
                        &[x, y, x],
                        [("margin", Attr::Float(0.5))],
                    )
                } else {
                    self.b.op(
                        ops[p as usize % 3],
                        &[x, y],
                        [("reduction", Attr::Str(reduction.into()))],
                    )
                }
            }
            _ => {
                let v = self.b.constant(p as f64 / 8.0, DType::F32);
                self.b.op(Op::Mul, &[x, v], [])
            }
        };
        if let Ok(vs) = res {
            self.values.extend(vs);
        }
    }

    fn finish(self, outs: u32) -> Graph {
        let n = self.values.len();
        let k = (outs as usize % 3 + 1).min(n);
        let outputs = self.values[n - k..].to_vec();
        self.b.finish(outputs)
    }
}

fn shape_strategy() -> impl Strategy<Value = (u8, Vec<i64>)> {
    (any::<u8>(), prop::collection::vec(1i64..5, 0..6))
}

fn graph_strategy() -> impl Strategy<Value = Graph> {
    (
        any::<usize>(),
        prop::collection::vec(shape_strategy(), 1..4),
        prop::collection::vec((any::<u8>(), any::<u32>()), 1..24),
        any::<u32>(),
    )
        .prop_map(|(name, inputs, steps, outs)| {
            let mut g = RandomGraph::new(name, &inputs);
            for (kind, r) in steps {
                g.step(kind, r);
            }
            g.finish(outs)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Printing, parsing and printing again gives the same text and the same graph.
    #[test]
    fn random_graphs_round_trip(g in graph_strategy()) {
        let text = print(&g);
        let parsed = parse(&text).map_err(|e| TestCaseError::fail(e.render(&text, "printed")))?;
        prop_assert_eq!(print(&parsed), text.clone());
        let (mut a, mut b) = (g.clone(), parsed);
        a.compact();
        b.compact();
        prop_assert_eq!(&a, &b);
        // and so does JSON
        let json = serde_json::to_string(&g).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let from_json: Graph = serde_json::from_str(&json).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&from_json, &g);
        // the builder's graphs verify, and so do their parsed copies
        let errors: Vec<String> = verify(&g).iter().filter(|e| e.is_error()).map(|e| e.to_string()).collect();
        prop_assert!(errors.is_empty(), "{}\n{}", errors.join("\n"), text);
    }

    /// Attribute values of every kind print and parse back to the same value (bit for bit
    /// for floats), and names of any characters survive quoting.
    #[test]
    fn attribute_values_and_names_round_trip(
        x in any::<f64>().prop_filter("nan is not equal to itself", |x| !x.is_nan()),
        i in any::<i64>(),
        s in "\\PC{0,12}|[\\x00-\\x7f]{0,12}",
        v in prop::collection::vec(any::<i64>(), 0..4),
        name in "\\PC{0,8}|[\\x00-\\x7f]{0,8}",
    ) {
        let mut g = Graph::new(name.clone());
        let input = g.add_input(name.clone(), drtc_ir::InputKind::Buffer, TensorType::new(DType::F32, vec![2]));
        let attrs: drtc_ir::Attrs = [
            ("f", Attr::Float(x)),
            ("i", Attr::Int(i)),
            ("s", Attr::Str(s)),
            ("v", Attr::Ints(v)),
        ]
        .into_iter()
        .map(|(k, a)| (k.to_string(), a))
        .collect();
        let n = g.add_node_unchecked(Op::Relu, vec![input], attrs.clone(), vec![TensorType::new(DType::F32, vec![2])]);
        let out = g.node(n).outputs[0];
        g.set_outputs(vec![out, input]);
        let text = print(&g);
        let back = parse(&text).map_err(|e| TestCaseError::fail(e.render(&text, "printed")))?;
        prop_assert_eq!(&back.node(back.body()[0]).attrs, &attrs);
        if let Attr::Float(y) = back.node(back.body()[0]).attrs["f"] {
            prop_assert_eq!(y.to_bits(), x.to_bits());
        }
        prop_assert_eq!(&back, &g);
        prop_assert_eq!(print(&back), text);
    }

    /// The parser returns (never panics) on arbitrary text.
    #[test]
    fn parse_never_panics_on_strings(s in "\\PC{0,200}") {
        let _ = parse(&s);
    }

    /// ... on arbitrary bytes (decoded lossily).
    #[test]
    fn parse_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let s = String::from_utf8_lossy(&bytes);
        if let Err(e) = parse(&s) {
            let _ = e.render(&s, "bytes");
        }
    }

    /// ... on soups of the format's own tokens, which reach deeper into the grammar.
    #[test]
    fn parse_never_panics_on_token_soup(toks in prop::collection::vec(0usize..TOKENS.len(), 0..60)) {
        let s: Vec<&str> = toks.iter().map(|&i| TOKENS[i]).collect();
        let s = s.join(" ");
        match parse(&s) {
            Err(e) => {
                let rendered = e.render(&s, "soup");
                prop_assert!(rendered.contains('^'));
            }
            Ok(g) => {
                let _ = verify(&g);
                let _ = g.flops();
            }
        }
    }

    /// ... on valid text with one edit (a deletion, an insertion, or a truncation).
    #[test]
    fn parse_never_panics_on_edited_text(g in graph_strategy(), at in any::<usize>(), len in 0usize..8, ins in "\\PC{0,3}") {
        let text = print(&g);
        let mut at = at % (text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let mut end = (at + len).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let edited = format!("{}{}{}", &text[..at], ins, &text[end..]);
        match parse(&edited) {
            Err(e) => {
                prop_assert!(e.line >= 1 && e.column >= 1);
                let _ = e.render(&edited, "edited");
            }
            // whatever parses can be verified, counted and printed
            Ok(g) => {
                let _ = verify(&g);
                let _ = g.flops();
                let _ = print(&g);
            }
        }
        let _ = parse(&text[..at]);
    }
}

const TOKENS: &[&str] = &[
    "graph",
    "@g",
    "@\"q\"",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "=",
    "-",
    "%x",
    "%0",
    "%1",
    "%\"a b\"",
    "f32",
    "i64",
    "param",
    "buffer",
    "return",
    "relu",
    "add",
    "conv2d",
    "dim",
    "1",
    "-3",
    "1.5",
    "1e-5",
    "inf",
    "nan",
    "none",
    "true",
    "\"s\"",
    "\"\\u{zz}\"",
    "// c\n",
    "\n",
    "99999999999999999999",
    "#",
    "\"",
];

// ---------------------------------------------------------------- files

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn drt_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            drt_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "drt") {
            out.push(p);
        }
    }
}

/// Parses `path` and checks that its printed form is a fixpoint of parse + print and
/// describes the same graph. Returns the printed form.
fn round_trip_file(path: &Path) -> String {
    let src = std::fs::read_to_string(path).unwrap();
    let name = path.display().to_string();
    let g = parse(&src).unwrap_or_else(|e| panic!("{}", e.render(&src, &name)));
    let printed = print(&g);
    let again = parse(&printed).unwrap_or_else(|e| panic!("{}", e.render(&printed, &name)));
    assert_eq!(print(&again), printed, "{name}: printing is not a fixpoint");
    let (mut a, mut b) = (g, again);
    a.compact();
    b.compact();
    assert_eq!(a, b, "{name}: the reparsed graph differs");
    printed
}

/// Every `.drt` file under the workspace's `tests/` and `passes/tests/` folders parses and
/// round-trips (filetests may use comments and named results; their printed form is
/// compared with itself).
#[test]
fn workspace_drt_files_round_trip() {
    let mut files = vec![];
    drt_files(&workspace().join("tests"), &mut files);
    drt_files(&workspace().join("passes/tests"), &mut files);
    for f in &files {
        round_trip_file(f);
    }
}

/// This crate's own files are in printed form apart from `//` comment lines: printing
/// them gives back the text exactly.
#[test]
fn own_drt_files_round_trip_exactly() {
    let mut files = vec![];
    drt_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data"),
        &mut files,
    );
    assert!(
        files.len() >= 3,
        "expected the files of ir/tests/data, found {files:?}"
    );
    for f in &files {
        let printed = round_trip_file(f);
        let src = std::fs::read_to_string(f).unwrap();
        let without_comments: String = src
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(printed, without_comments, "{}", f.display());
    }
}

/// Hand-written text may name results freely and refer forward; printing renumbers.
#[test]
fn named_results_are_renumbered() {
    let src = "graph @g(%x: f32[2]) {\n  // a comment\n  %y = relu(%x) : f32[2]   // trailing\n  %\"z z\" = neg(%y) : f32[2]\n  return %\"z z\", %y\n}\n";
    let g = parse(src).unwrap();
    assert_eq!(
        print(&g),
        "graph @g(%x: f32[2]) {\n  %0 = relu(%x) : f32[2]\n  %1 = neg(%0) : f32[2]\n  return %1, %0\n}\n"
    );
}

/// Missing attributes take their defaults; invalid ones are kept for the verifier.
#[test]
fn attributes_are_normalized_when_valid() {
    let g = parse("graph @g(%x: f32[2, 3]) {\n  %0 = softmax(%x) {dim = 1} : f32[2, 3]\n  %1 = sum(%0) : f32[]\n  return %1\n}\n").unwrap();
    let text = print(&g);
    assert!(
        text.contains("sum(%0) {dim = none, keepdim = false}"),
        "{text}"
    );
    let g =
        parse("graph @g(%x: f32[2]) {\n  %0 = relu(%x) {alpha = 1.0} : f32[2]\n  return %0\n}\n")
            .unwrap();
    assert!(print(&g).contains("relu(%x) {alpha = 1.0}"));
    // an int given for a float attribute is stored as a float
    let g = parse("graph @g(%x: f32[2]) {\n  %0 = elu(%x) {alpha = 2} : f32[2]\n  return %0\n}\n")
        .unwrap();
    assert!(print(&g).contains("elu(%x) {alpha = 2.0}"));
}

/// Every attribute value form parses back to the same value.
#[test]
fn attribute_values_parse() {
    let src = "graph @g(%x: f32[2]) {\n  %0 = relu(%x) {a = 1, b = -2, c = 1.0, d = 1e-5, e = inf, f = -inf, g = nan, h = true, i = false, j = none, k = \"tanh\", l = [], m = [1, -2], n = bf16, o = \"q\\\"\\n\"} : f32[2]\n  return %0\n}\n";
    let g = parse(src).unwrap();
    let attrs = &g.node(g.body()[0]).attrs;
    assert_eq!(attrs["a"], Attr::Int(1));
    assert_eq!(attrs["b"], Attr::Int(-2));
    assert_eq!(attrs["c"], Attr::Float(1.0));
    assert_eq!(attrs["d"], Attr::Float(1e-5));
    assert_eq!(attrs["e"], Attr::Float(f64::INFINITY));
    assert_eq!(attrs["f"], Attr::Float(f64::NEG_INFINITY));
    assert!(attrs["g"].as_float().unwrap().is_nan());
    assert_eq!(attrs["h"], Attr::Bool(true));
    assert_eq!(attrs["i"], Attr::Bool(false));
    assert_eq!(attrs["j"], Attr::None);
    assert_eq!(attrs["k"], Attr::Str("tanh".into()));
    assert_eq!(attrs["l"], Attr::Ints(vec![]));
    assert_eq!(attrs["m"], Attr::Ints(vec![1, -2]));
    assert_eq!(attrs["n"], Attr::DType(DType::BF16));
    assert_eq!(attrs["o"], Attr::Str("q\"\n".into()));
    // unknown attributes are printed after the declared ones, in name order
    assert_eq!(print(&g), src);
}

/// Multi-result nodes, scalar types, no inputs, empty return.
#[test]
fn unusual_shapes_of_graphs_round_trip() {
    for src in [
        "graph @g() {\n  %0 = full() {shape = [], value = 2.5, dtype = f32} : f32[]\n  return %0\n}\n",
        "graph @g(%x: f32[2]) {\n  %0, %1 = relu(%x) : f32[2], i64[2]\n  return %1, %0, %1\n}\n",
        "graph @\"my graph\"(%\"a b\": buffer f32[1]) {\n  return \n}\n",
        "graph @g(%x: f32[0, 3]) {\n  return %x\n}\n",
    ] {
        let g = parse(src).unwrap();
        assert_eq!(print(&g), src);
    }
}

// ---------------------------------------------------------------- errors

fn error(src: &str) -> String {
    let e = parse(src).expect_err(src);
    e.render(src, "bad.drt")
}

/// Each kind of mistake gets a message and a caret under the right place.
#[test]
fn errors_point_at_the_mistake() {
    let cases = [
        "",
        "graph @g(%x: f32[2]) {\n  %0 = rleu(%x) : f32[2]\n  return %0\n}\n",
        "graph @g(%x: f32[2]) {\n  %0 = relu(%y) : f32[2]\n  return %0\n}\n",
        "graph @g(%x: f32[2]) {\n  %0 = relu(%x) : f32[2]\n  return %1\n}\n",
        "graph @g(%x: f32[2]) {\n  %0 = relu(%x) : f32[2]\n  %0 = neg(%0) : f32[2]\n  return %0\n}\n",
        "graph @g(%x: f32[2], %x: f32[3]) {\n  return %x\n}\n",
        "graph @g(%x: f32[2]) {\n  %0 = relu(%x) {a = 1, a = 2} : f32[2]\n  return %0\n}\n",
        "graph @g(%x: f32[2]) {\n  %0 = relu(%x) {a = \"open} : f32[2]\n  return %0\n}\n",
        "graph @g(%x: f32[2]) {\n  %0 = relu(%x) {a = [1.5]} : f32[2]\n  return %0\n}\n",
        "graph @g(%x: float8[2]) {\n  return %x\n}\n",
        "graph @g(%x: f32[2]) {\n  %0, %1 = relu(%x) : f32[2]\n  return %0\n}\n",
        "graph @g(%x: f32[99999999999999999999]) {\n  return %x\n}\n",
        "graph @g(%x: f32[2]) {\n  %0 = relu(%x) : f32[2]\n  return %0\n}\n}\n",
        "graph @g(%x: f32[2]) {\n  %0 = relu(%x) : f32[2]\n",
        "graph @g(%x: f32[2]) {\n  %0 = relu(%x) {a = \"\\q\"} : f32[2]\n  return %0\n}\n",
        "graph @g(%x: f32[2]) {\n  %0 = relu(%x) # f32[2]\n  return %0\n}\n",
    ];
    let rendered: Vec<String> = cases.iter().map(|s| error(s)).collect();
    insta::assert_snapshot!(rendered.join("\n"));
}

#[test]
fn error_positions() {
    let e =
        parse("graph @g(%x: f32[2]) {\n  %0 = rleu(%x) : f32[2]\n  return %0\n}\n").unwrap_err();
    assert_eq!((e.line, e.column), (2, 8));
    assert_eq!(e.message, "unknown op `rleu` (did you mean `relu`?)");
    assert_eq!(
        e.to_string(),
        "2:8: unknown op `rleu` (did you mean `relu`?)"
    );
}
