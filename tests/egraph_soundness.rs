//! Soundness of the e-graph passes: random programs (generated here around the forms the
//! rules look for, plus every shared KernelBench level-2 task and the backend's program
//! corpus) are evaluated with PyTorch on CPU before and after `canonicalize,simplify` on
//! the same inputs, and must agree under semantics.md's rule. One Python process checks
//! them all (bounded time); a failure prints the program. Also prints, for the level-2
//! tasks, how many programs each rule family changes and the estimated cost before and
//! after.

use drtc::driver::load::load_programs;
use drtc::driver::shrink::shrink_overrides;
use drtc_backends::torch::emit_seed_program;
use drtc_ir::{Attr, DType, Graph, GraphBuilder, Op, TensorType, ValueId};
use drtc_passes::egraph::rules::{self, FAMILIES};
use drtc_passes::egraph::{graph_cost, rewrite_graph_within, Accept, Budget};
use drtc_passes::PassContext;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The per-op accept test (`Accept::PerOp`): soundness checks every rewrite the rules
/// find, not only those the planned cost keeps.
const PER_OP: Budget = Budget {
    accept: Accept::PerOp,
    ..Budget::DEFAULT
};

/// Generated programs per run.
const GENERATED: u64 = 60;

/// The interpreter drtc itself would use (`DRTC_PYTHON`, else the `drtc setup` venv).
fn python() -> PathBuf {
    let home = drtc::verifier::DrtcHome::from_env();
    drtc::verifier::PythonEnv::locate(&home)
        .unwrap_or_else(|e| panic!("{e}"))
        .python
}

/// A small deterministic generator (xorshift64*), so every run checks the same programs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// Builds programs out of motifs: written-out activations, scalar chains, clamps,
/// reductions over size-1 dims and softmax forms, sums of matrix products, layout chains.
struct Gen<'a> {
    b: GraphBuilder,
    rng: &'a mut Rng,
    rows: i64,
    cols: i64,
}

impl Gen<'_> {
    fn c(&mut self, v: f64) -> ValueId {
        self.b.constant(v, DType::F32)
    }
    fn op(&mut self, op: Op, ins: &[ValueId]) -> ValueId {
        self.b.op1(op, ins, []).expect("generated op type-checks")
    }
    fn opa(&mut self, op: Op, ins: &[ValueId], attrs: Vec<(&'static str, Attr)>) -> ValueId {
        self.b
            .op1(op, ins, attrs)
            .expect("generated op type-checks")
    }

    /// One motif applied to `x` (a [rows, cols] f32 value); returns a [rows, cols] value.
    fn motif(&mut self, x: ValueId, other: ValueId) -> ValueId {
        let (r, n) = (self.rows, self.cols);
        match self.rng.below(25) {
            0 => {
                let s = self.op(Op::Sigmoid, &[x]);
                if self.rng.below(2) == 0 {
                    self.op(Op::Mul, &[x, s])
                } else {
                    self.op(Op::Mul, &[s, x])
                }
            }
            1 => {
                // mish via log(1 + exp(x))
                let e = self.op(Op::Exp, &[x]);
                let one = self.c(1.0);
                let a = self.op(Op::Add, &[e, one]);
                let l = self.op(Op::Log, &[a]);
                let t = self.op(Op::Tanh, &[l]);
                self.op(Op::Mul, &[x, t])
            }
            2 => {
                // exact gelu
                let h = self.c(0.5);
                let s = self.c(std::f64::consts::SQRT_2);
                let one = self.c(1.0);
                let xh = self.op(Op::Mul, &[x, h]);
                let d = self.op(Op::Div, &[x, s]);
                let e = self.op(Op::Erf, &[d]);
                let a = self.op(Op::Add, &[one, e]);
                self.op(Op::Mul, &[xh, a])
            }
            3 => {
                // tanh gelu
                let h = self.c(0.5);
                let one = self.c(1.0);
                let k = self.c((2.0 / std::f64::consts::PI).sqrt());
                let cc = self.c(0.044715);
                let three = self.c(3.0);
                let p = self.op(Op::Pow, &[x, three]);
                let m = self.op(Op::Mul, &[cc, p]);
                let a = self.op(Op::Add, &[x, m]);
                let km = self.op(Op::Mul, &[k, a]);
                let t = self.op(Op::Tanh, &[km]);
                let a1 = self.op(Op::Add, &[one, t]);
                let hx = self.op(Op::Mul, &[h, x]);
                self.op(Op::Mul, &[hx, a1])
            }
            4 => {
                // hardswish with clamp(x + 3, 0, 6) / 6
                let three = self.c(3.0);
                let six = self.c(6.0);
                let a = self.op(Op::Add, &[x, three]);
                let cl = self.opa(
                    Op::Clamp,
                    &[a],
                    vec![("min", Attr::Float(0.0)), ("max", Attr::Float(6.0))],
                );
                let m = self.op(Op::Mul, &[x, cl]);
                self.op(Op::Div, &[m, six])
            }
            5 => {
                let s = self.op(Op::Sigmoid, &[x]);
                self.op(Op::Log, &[s])
            }
            6 => {
                let one = self.c(1.0);
                let a = self.op(Op::Abs, &[x]);
                let d = self.op(Op::Add, &[a, one]);
                self.op(Op::Div, &[x, d])
            }
            7 => {
                // scalar chains
                let av = self.rng.pick(&[2.0, 3.0, -1.5, 0.25]);
                let a = self.c(av);
                let bbv = self.rng.pick(&[4.0, 0.5, 1.0, -2.0]);
                let bb = self.c(bbv);
                let m = self.op(Op::Mul, &[x, a]);
                let op = self.rng.pick(&[Op::Div, Op::Mul, Op::Add, Op::Sub]);
                self.op(op, &[m, bb])
            }
            8 => {
                let one = self.c(1.0);
                let zero = self.c(0.0);
                let n1 = self.op(Op::Neg, &[x]);
                let n2 = self.op(Op::Neg, &[n1]);
                let m = self.op(Op::Mul, &[n2, one]);
                self.op(Op::Add, &[m, zero])
            }
            9 => {
                // clamp chains
                let lov = self.rng.pick(&[-0.5, 0.0, 0.25]);
                let lo = self.c(lov);
                let hiv = self.rng.pick(&[0.5, 1.0, 2.0]);
                let hi = self.c(hiv);
                let a = self.op(Op::Maximum, &[x, lo]);
                let b2 = self.op(Op::Minimum, &[a, hi]);
                let r = self.op(Op::Relu, &[b2]);
                self.opa(Op::Hardtanh, &[r], vec![])
            }
            10 => {
                // reductions over a size-1 dim
                let u = self.opa(Op::Unsqueeze, &[x], vec![("dim", Attr::Int(1))]);
                let op = self.rng.pick(&[Op::Sum, Op::Mean, Op::Max, Op::Logsumexp]);
                self.opa(op, &[u], vec![("dim", Attr::Ints(vec![1]))])
            }
            11 => {
                // shifted, written-out softmax
                let m = self.opa(
                    Op::Max,
                    &[x],
                    vec![("dim", Attr::Ints(vec![1])), ("keepdim", Attr::Bool(true))],
                );
                let s = self.op(Op::Sub, &[x, m]);
                let e = self.op(Op::Exp, &[s]);
                let sum = self.opa(
                    Op::Sum,
                    &[e],
                    vec![("dim", Attr::Ints(vec![1])), ("keepdim", Attr::Bool(true))],
                );
                self.op(Op::Div, &[e, sum])
            }
            12 => {
                // logsumexp written out, broadcast back
                let e = self.op(Op::Exp, &[x]);
                let s = self.opa(
                    Op::Sum,
                    &[e],
                    vec![("dim", Attr::Ints(vec![-1])), ("keepdim", Attr::Bool(true))],
                );
                let l = self.op(Op::Log, &[s]);
                self.op(Op::Sub, &[x, l])
            }
            13 => {
                // mean as sum / n
                let s = self.opa(
                    Op::Sum,
                    &[x],
                    vec![("dim", Attr::Ints(vec![1])), ("keepdim", Attr::Bool(true))],
                );
                let nn = self.c(n as f64);
                let m = self.op(Op::Div, &[s, nn]);
                self.op(Op::Sub, &[x, m])
            }
            14 => {
                // sum/mean of a matrix product over its output dim
                let w = self.b.param(
                    format!("w{}", self.rng.next() % 100_000),
                    TensorType::new(DType::F32, vec![n, 24]),
                );
                let mm = self.op(Op::Matmul, &[x, w]);
                let op = self.rng.pick(&[Op::Sum, Op::Mean]);
                let s = self.opa(
                    op,
                    &[mm],
                    vec![("dim", Attr::Ints(vec![-1])), ("keepdim", Attr::Bool(true))],
                );
                self.op(Op::Add, &[x, s])
            }
            15 => {
                // linear - bias, mean over features
                let w = self.b.param(
                    format!("lw{}", self.rng.next() % 100_000),
                    TensorType::new(DType::F32, vec![16, n]),
                );
                let bias = self.b.param(
                    format!("lb{}", self.rng.next() % 100_000),
                    TensorType::new(DType::F32, vec![16]),
                );
                let s = self.b.param(
                    format!("ls{}", self.rng.next() % 100_000),
                    TensorType::new(DType::F32, vec![16]),
                );
                let l = self.op(Op::Linear, &[x, w, bias]);
                let d = self.op(Op::Sub, &[l, s]);
                let m = self.opa(
                    Op::Mean,
                    &[d],
                    vec![("dim", Attr::Ints(vec![1])), ("keepdim", Attr::Bool(true))],
                );
                self.op(Op::Mul, &[x, m])
            }
            16 => {
                let t = self.opa(
                    Op::Transpose,
                    &[x],
                    vec![("dim0", Attr::Int(0)), ("dim1", Attr::Int(1))],
                );
                let e = self.op(Op::Exp, &[t]);
                self.opa(
                    Op::Transpose,
                    &[e],
                    vec![("dim0", Attr::Int(-1)), ("dim1", Attr::Int(-2))],
                )
            }
            17 => {
                let f = self.opa(Op::Reshape, &[x], vec![("shape", Attr::Ints(vec![r * n]))]);
                let u = self.opa(Op::Unsqueeze, &[f], vec![("dim", Attr::Int(0))]);
                self.opa(Op::Reshape, &[u], vec![("shape", Attr::Ints(vec![r, n]))])
            }
            18 => {
                let e = self.opa(
                    Op::Expand,
                    &[other],
                    vec![("shape", Attr::Ints(vec![r, n]))],
                );
                self.op(Op::Mul, &[x, e])
            }
            19 => {
                // softplus as log(1 + exp(x)), then logsigmoid as -softplus(-x)
                let nx = self.op(Op::Neg, &[x]);
                let sp = self.opa(Op::Softplus, &[nx], vec![]);
                self.op(Op::Neg, &[sp])
            }
            20 => {
                let one = self.c(1.0);
                let nx = self.op(Op::Neg, &[x]);
                let e = self.op(Op::Exp, &[nx]);
                let a = self.op(Op::Add, &[one, e]);
                self.op(Op::Div, &[x, a])
            }
            21 => {
                // a per-feature constant added after a linear layer, scaled after a norm
                let w = self.b.param(
                    format!("bw{}", self.rng.next() % 100_000),
                    TensorType::new(DType::F32, vec![n, n]),
                );
                let bias = self.b.param(
                    format!("bb{}", self.rng.next() % 100_000),
                    TensorType::new(DType::F32, vec![n]),
                );
                let l = self.op(Op::Linear, &[x, w, bias]);
                let k = self.c(0.75);
                let s = self.op(Op::Sub, &[l, k]);
                self.op(Op::Add, &[s, other])
            }
            22 => {
                let w = self.b.param(
                    format!("nw{}", self.rng.next() % 100_000),
                    TensorType::new(DType::F32, vec![n]),
                );
                let bias = self.b.param(
                    format!("nb{}", self.rng.next() % 100_000),
                    TensorType::new(DType::F32, vec![n]),
                );
                let bn = self.op(Op::BatchNorm, &[x, w, bias]);
                let k = self.c(-2.0);
                let m = self.op(Op::Mul, &[bn, k]);
                self.op(Op::Add, &[m, other])
            }
            23 => {
                // a mean of a group norm (4 channels of cols/4 positions), with or without
                // an affine, over the positions or over everything but the batch
                let xs = self.opa(
                    Op::Reshape,
                    &[x],
                    vec![("shape", Attr::Ints(vec![r, 4, n / 4]))],
                );
                let groups = self.rng.pick(&[1, 2, 4]);
                let mut ins = vec![xs];
                if self.rng.below(2) == 0 {
                    for p in ["gw", "gb"] {
                        let name = format!("{p}{}", self.rng.next() % 100_000);
                        ins.push(self.b.param(name, TensorType::new(DType::F32, vec![4])));
                    }
                }
                let gn = self.opa(Op::GroupNorm, &ins, vec![("num_groups", Attr::Int(groups))]);
                let dims = if self.rng.below(2) == 0 {
                    vec![2]
                } else {
                    vec![1, 2]
                };
                let m = self.opa(
                    Op::Mean,
                    &[gn],
                    vec![("dim", Attr::Ints(dims)), ("keepdim", Attr::Bool(true))],
                );
                let s = self.opa(
                    Op::Sum,
                    &[m],
                    vec![
                        ("dim", Attr::Ints(vec![1, 2])),
                        ("keepdim", Attr::Bool(false)),
                    ],
                );
                let col = self.opa(Op::Reshape, &[s], vec![("shape", Attr::Ints(vec![r, 1]))]);
                self.op(Op::Add, &[x, col])
            }
            _ => {
                let op = self.rng.pick(&[Op::Tanh, Op::Exp, Op::Sigmoid, Op::Relu]);
                let t = self.op(op, &[x]);
                self.op(Op::Add, &[t, other])
            }
        }
    }
}

fn generated(seed: u64) -> Graph {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let rows = rng.pick(&[2, 4, 8]);
    let cols = rng.pick(&[8, 16, 32]);
    let mut b = GraphBuilder::new(format!("gen{seed}"));
    let x = b.input("x", TensorType::new(DType::F32, vec![rows, cols]));
    let y = b.input("y", TensorType::new(DType::F32, vec![cols]));
    let mut g = Gen {
        b,
        rng: &mut rng,
        rows,
        cols,
    };
    let mut cur = x;
    let mut outs = vec![];
    let steps = 2 + g.rng.below(4);
    for _ in 0..steps {
        cur = g.motif(cur, y);
        if g.rng.below(4) == 0 {
            outs.push(cur);
        }
    }
    outs.push(cur);
    outs.dedup();
    g.b.finish(outs)
}

/// The level-2 tasks as graphs (those the frontend lowers), shrunk (for running on the
/// CPU) or at their own sizes (for cost estimates).
fn level2(shrink: bool) -> Vec<(String, Graph)> {
    kernelbench("level2", shrink)
}

/// The tasks of a KernelBench level that the frontend lowers.
fn kernelbench(level: &str, shrink: bool) -> Vec<(String, Graph)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/kernelbench")
        .join(level);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.sort();
    let mut out = vec![];
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let ov = if shrink {
            shrink_overrides(&text)
        } else {
            vec![]
        };
        if let Ok(programs) = load_programs(&f, &text, &ov, None) {
            for p in programs.into_iter().flatten() {
                let name = f.file_stem().unwrap().to_string_lossy().to_string();
                out.push((name, p.graph));
            }
        }
    }
    out
}

fn corpus() -> Vec<(String, Graph)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("backends/tests/programs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "drt"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let name = f.file_stem().unwrap().to_string_lossy().to_string();
            (name, drtc_ir::text::parse(&text).unwrap())
        })
        .collect()
}

/// The frontend's seed programs (`data/seeds/*.jsonl`), when present.
fn seeds() -> Vec<(String, Graph)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/seeds");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.retain(|f| f.extension().is_some_and(|e| e == "jsonl"));
    files.sort();
    let mut out = vec![];
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        if let Ok(programs) = load_programs(&f, &text, &[], None) {
            for p in programs.into_iter().flatten() {
                out.push((format!("{stem}_{}", p.line.unwrap_or(0)), p.graph));
            }
        }
    }
    out
}

fn has_random(g: &Graph) -> bool {
    g.body()
        .iter()
        .any(|&n| g.node(n).op.is_random(&g.node(n).attrs))
}

#[test]
fn simplify_preserves_program_meaning() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("egraph_soundness");
    std::fs::create_dir_all(&dir).unwrap();
    let mut programs: Vec<(String, Graph)> = (0..GENERATED)
        .map(|s| (format!("gen{s}"), generated(s)))
        .collect();
    programs.extend(level2(true));
    programs.extend(kernelbench("level1", true));
    programs.extend(corpus());
    let seed_programs = seeds();
    let n_seeds = seed_programs.len();
    programs.extend(seed_programs);
    let mut pairs = vec![];
    let mut changed = 0;
    let mut texts = std::collections::HashMap::new();
    for (name, g0) in &programs {
        // random programs cannot be compared draw for draw here
        if has_random(g0) {
            continue;
        }
        let mut g = g0.clone();
        // the per-op accept test: every rewrite the rules find is applied and checked,
        // including those the planned cost would not keep at these (shrunk) sizes
        let mut cx = PassContext::new();
        let mut any = false;
        for (pass, set) in [
            ("canonicalize", rules::canonical()),
            ("simplify", rules::all()),
        ] {
            let s = rewrite_graph_within(PER_OP, pass, &set, &mut g, &mut cx)
                .unwrap_or_else(|e| panic!("{name}: {e}\n{}", drtc_ir::text::print(g0)));
            any |= s.changed;
        }
        let errors: Vec<_> = drtc_ir::verify(&g)
            .into_iter()
            .filter(|e| e.is_error())
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
        if !any {
            continue;
        }
        changed += 1;
        assert!(
            graph_cost(&g).total() < graph_cost(g0).total(),
            "{name}: the cost got worse"
        );
        let r = dir.join(format!("{name}_ref.py"));
        let c = dir.join(format!("{name}_new.py"));
        std::fs::write(&r, emit_seed_program(g0)).unwrap();
        let cand = format!(
            "{}\ntriton_fused_operator = fused_operator\n",
            emit_seed_program(&g)
        );
        std::fs::write(&c, cand).unwrap();
        texts.insert(
            name.clone(),
            format!(
                "before:\n{}after:\n{}",
                drtc_ir::text::print(g0),
                drtc_ir::text::print(&g)
            ),
        );
        pairs.push(json!({"name": name, "reference": r, "candidate": c}));
    }
    let list = dir.join("pairs.json");
    std::fs::write(&list, serde_json::to_string(&pairs).unwrap()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("backends/tests/check_pairs.py");
    let out = Command::new(python())
        .arg(script)
        .arg(&list)
        .output()
        .expect("a Python with torch (set DRTC_PYTHON)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "checker failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut failed = vec![];
    let mut agreed = 0;
    for line in stdout.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["ok"] == true {
            agreed += 1;
        } else {
            let name = v["name"].as_str().unwrap_or("");
            failed.push(format!(
                "{name}: {}\n{}",
                v["detail"],
                texts.get(name).cloned().unwrap_or_default()
            ));
        }
    }
    println!(
        "{} programs ({GENERATED} generated, {n_seeds} seed programs, KernelBench levels 1 and 2), {changed} changed by canonicalize,simplify, {agreed} of them agree with the original",
        programs.len()
    );
    assert!(failed.is_empty(), "disagreements:\n{}", failed.join("\n"));
    assert_eq!(agreed, pairs.len());
    assert!(
        changed >= GENERATED as usize / 2,
        "the rules should change most generated programs"
    );
}

/// The rule-family table over the level-2 tasks: programs each family changes (run alone,
/// with commutativity), and the estimated cost before and after `simplify`.
#[test]
fn level2_rule_family_table() {
    let programs = level2(false);
    if programs.is_empty() {
        return;
    }
    let commute: Vec<_> = rules::algebra::rules()
        .into_iter()
        .filter(|r| r.name.starts_with("commute-"))
        .collect();
    println!("| family | programs changed | cost before | cost after |");
    println!("|---|---|---|---|");
    for f in FAMILIES {
        let mut set = (f.rules)();
        set.extend(
            commute
                .iter()
                .filter(|c| set.iter().all(|r| r.name != c.name))
                .copied()
                .collect::<Vec<_>>(),
        );
        let (mut n, mut before, mut after) = (0, 0u128, 0u128);
        for (_, g0) in &programs {
            let mut g = g0.clone();
            let s = rewrite_graph_within(PER_OP, "simplify", &set, &mut g, &mut PassContext::new())
                .unwrap();
            before += s.cost_before as u128;
            after += s.cost_after as u128;
            if s.changed {
                n += 1;
            }
        }
        println!(
            "| {} | {n} / {} | {before} | {after} |",
            f.name,
            programs.len()
        );
    }
    let (mut n, mut before, mut after) = (0, 0u128, 0u128);
    let mut per_task = vec![];
    for (name, g0) in &programs {
        let mut g = g0.clone();
        let s = rewrite_graph_within(
            PER_OP,
            "simplify",
            &rules::all(),
            &mut g,
            &mut PassContext::new(),
        )
        .unwrap();
        before += s.cost_before as u128;
        after += s.cost_after as u128;
        if s.changed {
            n += 1;
            per_task.push(format!(
                "{name}: {} -> {} ({})",
                s.cost_before,
                s.cost_after,
                s.applied.keys().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    println!(
        "| all (simplify) | {n} / {} | {before} | {after} |",
        programs.len()
    );
    for line in per_task {
        println!("  {line}");
    }
}
