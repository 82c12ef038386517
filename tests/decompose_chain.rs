//! Subproblems compute what their program computes (issue 29): every program is decomposed
//! (`drtc decompose`'s records), each subproblem's emitted seed program is run in turn on
//! the CPU (PyTorch, `tests/check_chain.py`), values passed by the names the records read
//! and write, and the outputs must equal the original program's bit for bit. The programs:
//! the seed list `data/seeds/list_a.jsonl` (inputs `tensor_0 ...`, the names the emitter
//! once reused for results), freshly synthesized programs (`drtc synth`, many op families),
//! and random programs whose input names collide with every naming scheme of the emitters
//! (`tensor_k`, the stitcher's `v<id>`, subproblem inputs `t<k>`, `a.b` beside `a_b`,
//! keywords, `torch`). The `regions` dataset's ground truths are these same subproblems.
//! Needs a Python with torch (`DRTC_PYTHON`, or the environment `drtc setup` creates).

use drtc::dataset::{build, DatasetMode, DatasetOptions};
use drtc::driver::decompose::subproblem_records;
use drtc::driver::load::load_programs;
use drtc_ir::pytorch::{assign_targets, random_input, torch_expr, Dialect};
use drtc_ir::{Attr, DType, Graph, GraphBuilder, Op, TensorType, ValueId};
use drtc_passes::decompose::value_name;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

fn python() -> PathBuf {
    let home = drtc::verifier::DrtcHome::from_env();
    drtc::verifier::PythonEnv::locate(&home)
        .unwrap_or_else(|e| panic!("{e}"))
        .python
}

fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// One case of `check_chain.py`: `g` decomposed into subproblems of at most `max_ops` ops,
/// against `reference` (the program's own source, or [`reference_program`]).
fn case(name: &str, reference: &str, g: &Graph, max_ops: usize) -> Value {
    let names = |vs: &[ValueId]| -> Vec<String> { vs.iter().map(|&v| value_name(g, v)).collect() };
    let subproblems: Vec<Value> = subproblem_records(g, name, None, max_ops)
        .into_iter()
        .map(|r| json!({"pytorch": r["pytorch"], "reads": r["reads"], "writes": r["writes"]}))
        .collect();
    json!({
        "name": name,
        "reference": reference,
        "inputs": names(g.inputs()),
        "outputs": names(g.outputs()),
        "subproblems": subproblems,
    })
}

/// Runs the cases; returns how many there were, and the failures.
fn check(cases: &[Value], scratch: &Path) -> (usize, Vec<String>) {
    let list = scratch.join("cases.json");
    std::fs::write(&list, serde_json::to_string(cases).unwrap()).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(python())
        .arg(root.join("tests/check_chain.py"))
        .arg(&list)
        .output()
        .expect("a Python with torch (set DRTC_PYTHON)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "checker failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(results.len(), cases.len(), "a result per case");
    let failures = results
        .iter()
        .filter(|r| r["ok"] != true)
        .map(|r| format!("{}: {}", r["name"], r["detail"]))
        .collect();
    (cases.len(), failures)
}

/// The programs of a seed file, with their sources.
fn seed_programs(path: &Path) -> Vec<(String, Graph, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let sources: Vec<String> = text
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["pytorch"].as_str().unwrap().to_string()
        })
        .collect();
    load_programs(path, &text, &[], None)
        .unwrap()
        .into_iter()
        .map(|p| {
            let p = p.unwrap_or_else(|e| panic!("{}: {}", e.name, e.message));
            let line = p.line.expect("a .jsonl line");
            (p.name, p.graph, sources[line - 1].clone())
        })
        .collect()
}

/// The `regions` dataset of `path` at `max_ops`: every row's ground truth is the
/// subproblem `drtc decompose` writes for the same program and index (checked by the
/// chains), and no subproblem is missing but as a duplicate.
fn check_dataset(path: &Path, programs: &[(String, Graph, String)], max_ops: usize) {
    let ds = build(
        &[path.to_path_buf()],
        &DatasetOptions {
            mode: DatasetMode::Regions,
            max_ops,
            ..DatasetOptions::default()
        },
    );
    assert!(ds.skipped.is_empty(), "{:?}", ds.skipped);
    let mut expected: HashMap<String, String> = HashMap::new();
    for (name, g, _) in programs {
        let records = subproblem_records(g, name, None, max_ops);
        let k = records.len();
        for (i, r) in records.iter().enumerate() {
            let source = if k > 1 {
                format!("{name}#{i}")
            } else {
                name.clone()
            };
            expected.insert(source, r["pytorch"].as_str().unwrap().to_string());
        }
    }
    for row in &ds.rows {
        let want = expected
            .get(&row.source)
            .unwrap_or_else(|| panic!("no subproblem for row {}", row.source));
        assert_eq!(&row.ground_truth, want, "ground truth of {}", row.source);
    }
    assert_eq!(ds.rows.len() + ds.duplicates, expected.len());
}

#[test]
fn list_a_subproblems_compute_the_original_programs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let seeds = root.join("data/seeds/list_a.jsonl");
    let programs = seed_programs(&seeds);
    assert_eq!(programs.len(), 12);
    let mut cases = vec![];
    for max_ops in [1, 4, 8, 100] {
        for (name, g, source) in &programs {
            cases.push(case(&format!("{name} n{max_ops}"), source, g, max_ops));
        }
        check_dataset(&seeds, &programs, max_ops);
    }
    let (n, failures) = check(&cases, &dir("decompose_chain_list_a"));
    println!("list_a: {n} decompositions, {} wrong", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn synthesized_programs_decompose_into_subproblems_that_compute_them() {
    let scratch = dir("decompose_chain_synth");
    let mut cases = vec![];
    for (ops, op_set, seed) in [("2", "a", "11"), ("5", "a", "12"), ("10", "ab", "13")] {
        let file = scratch.join(format!("synth_{ops}.jsonl"));
        let out = Command::new(env!("CARGO_BIN_EXE_drtc"))
            .args(["synth", "--ops", ops, "--count", "25", "--seed", seed])
            .args(["--op-set", op_set, "--flops", "0..2^20"])
            .args(["--validate", "none", "--quiet", "-o"])
            .arg(&file)
            .output()
            .expect("drtc runs");
        assert!(
            out.status.success(),
            "drtc synth --ops {ops} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let programs = seed_programs(&file);
        assert!(programs.len() >= 20, "{} programs", programs.len());
        for max_ops in [1, 3, 8] {
            for (name, g, source) in &programs {
                cases.push(case(&format!("{name} n{max_ops}"), source, g, max_ops));
            }
        }
        check_dataset(&file, &programs, 3);
    }
    let (n, failures) = check(&cases, &scratch);
    println!("synthesized: {n} decompositions, {} wrong", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Input names colliding with each scheme the emitters use for their own names.
const NAME_SETS: [&[&str]; 5] = [
    &["tensor_0", "tensor_1", "tensor_2", "tensor_3"],
    &["v3", "t2", "v1", "t0"],
    &["a.b", "a_b", "a-b", "x"],
    &["lambda", "torch", "float", "_drtc_sms"],
    &["tensor_2", "tensor_0_1", "drtc_k0_pointwise", "t1"],
];

/// A random program over f32 tensors of shapes [4|1, 8|1] (each pair broadcasts), with
/// pointwise (unary, binary, lerp, scalar constants), reduction (sum, mean, max, softmax),
/// contraction (matmul) and layout (transpose, reshape) ops; every op reads any earlier
/// value, inputs included, so inputs are read after many results are named.
fn random_program(seed: u64) -> Graph {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let names = NAME_SETS[rng.random_range(0..NAME_SETS.len())];
    let mut b = GraphBuilder::new("fused_operator");
    let ty = |shape: Vec<i64>| TensorType::new(DType::F32, shape);
    let mut values = vec![];
    let n_inputs = rng.random_range(2..=names.len());
    for (i, name) in names.iter().take(n_inputs).enumerate() {
        let shape = match i {
            0 => vec![4, 8],
            _ => vec![
                if rng.random_bool(0.7) { 4 } else { 1 },
                if rng.random_bool(0.7) { 8 } else { 1 },
            ],
        };
        values.push(b.input(*name, ty(shape)));
    }
    let n_ops = rng.random_range(3..=12);
    for _ in 0..n_ops {
        let pick = |rng: &mut ChaCha8Rng, values: &[ValueId]| {
            // recent values more often, inputs still read late
            let k = values.len();
            if rng.random_bool(0.5) {
                values[rng.random_range(k.saturating_sub(3)..k)]
            } else {
                values[rng.random_range(0..k)]
            }
        };
        let a = pick(&mut rng, &values);
        let c = pick(&mut rng, &values);
        let dim = rng.random_range(0..2i64);
        let full: Vec<ValueId> = values
            .iter()
            .copied()
            .filter(|&v| b.ty(v).shape == [4, 8])
            .collect();
        let v = match rng.random_range(0..8) {
            0 => {
                let op = [Op::Relu, Op::Tanh, Op::Sigmoid, Op::Neg, Op::Abs, Op::Exp]
                    [rng.random_range(0..6)];
                b.op1(op, &[a], [])
            }
            1 | 2 => {
                let op = [Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Maximum, Op::Minimum]
                    [rng.random_range(0..6)];
                b.op1(op, &[a, c], [])
            }
            3 => {
                let w = pick(&mut rng, &values);
                b.op1(Op::Lerp, &[a, c, w], [])
            }
            4 => {
                let k = b.constant(rng.random_range(-3..=3) as f64 * 0.5, DType::F32);
                b.op1(Op::Mul, &[a, k], [])
            }
            5 => {
                let op = [Op::Sum, Op::Mean, Op::Max][rng.random_range(0..3)];
                b.op1(
                    op,
                    &[a],
                    [
                        ("dim", Attr::Ints(vec![dim])),
                        ("keepdim", Attr::Bool(true)),
                    ],
                )
            }
            6 => b.op1(Op::Softmax, &[a], [("dim", Attr::Int(dim))]),
            _ if full.len() >= 2 => {
                let (x, y) = (full[rng.random_range(0..full.len())], *full.last().unwrap());
                if rng.random_bool(0.5) {
                    // [4, 8] @ [8, 4] @ [4, 8]
                    let t = b
                        .op1(
                            Op::Transpose,
                            &[y],
                            [("dim0", Attr::Int(0)), ("dim1", Attr::Int(1))],
                        )
                        .unwrap();
                    let m = b.op1(Op::Matmul, &[x, t], []).unwrap();
                    b.op1(Op::Matmul, &[m, y], [])
                } else {
                    let t = b
                        .op1(
                            Op::Transpose,
                            &[x],
                            [("dim0", Attr::Int(0)), ("dim1", Attr::Int(1))],
                        )
                        .unwrap();
                    b.op1(Op::Reshape, &[t], [("shape", Attr::Ints(vec![4, 8]))])
                }
            }
            _ => b.op1(Op::Add, &[a, c], []),
        };
        values.push(v.unwrap_or_else(|e| panic!("seed {seed}: {e}")));
    }
    // one to three outputs among the results
    let results = &values[n_inputs..];
    let mut outs = vec![*results.last().unwrap()];
    for _ in 0..rng.random_range(0..3) {
        let v = results[rng.random_range(0..results.len())];
        if !outs.contains(&v) {
            outs.push(v);
        }
    }
    b.finish(outs)
}

/// The program as a seed program whose names cannot collide (`p<i>` parameters, `r<id>`
/// results): the reference the chains are compared with, independent of the emitters'
/// naming.
fn reference_program(g: &Graph) -> String {
    let mut s = String::from("import torch\n\n\ndef get_inputs():\n    return [\n");
    for &v in g.inputs() {
        writeln!(s, "        {},", random_input(g.ty(v))).unwrap();
    }
    s.push_str("    ]\n\n\n");
    let mut names: HashMap<ValueId, String> = HashMap::new();
    let params: Vec<String> = (0..g.inputs().len()).map(|i| format!("p{i}")).collect();
    for (&v, p) in g.inputs().iter().zip(&params) {
        names.insert(v, p.clone());
    }
    writeln!(s, "def fused_operator({}):", params.join(", ")).unwrap();
    for &n in g.body() {
        let node = g.node(n);
        let args: Vec<String> = node.inputs.iter().map(|v| names[v].clone()).collect();
        let tys: Vec<&TensorType> = node.inputs.iter().map(|&v| g.ty(v)).collect();
        let expr = torch_expr(
            node.op,
            &node.attrs,
            &args,
            &tys,
            "p0.device",
            Dialect::Reference,
        );
        let outs: Vec<String> = node.outputs.iter().map(|v| format!("r{}", v.0)).collect();
        writeln!(
            s,
            "    {} = {expr}",
            assign_targets(node.op, &node.attrs, &outs)
        )
        .unwrap();
        for (&v, o) in node.outputs.iter().zip(outs) {
            names.insert(v, o);
        }
    }
    let rets: Vec<String> = g.outputs().iter().map(|v| names[v].clone()).collect();
    writeln!(s, "    return [{}]", rets.join(", ")).unwrap();
    s
}

#[test]
fn random_programs_with_colliding_names_decompose_into_subproblems_that_compute_them() {
    let mut cases = vec![];
    for seed in 0..120u64 {
        let g = random_program(seed);
        let errors: Vec<_> = drtc_ir::verify(&g)
            .into_iter()
            .filter(|e| e.is_error())
            .collect();
        assert!(errors.is_empty(), "seed {seed}: {errors:?}");
        let reference = reference_program(&g);
        for max_ops in [1, 2, 4, 100] {
            cases.push(case(
                &format!("seed {seed} n{max_ops}"),
                &reference,
                &g,
                max_ops,
            ));
        }
    }
    let (n, failures) = check(&cases, &dir("decompose_chain_random"));
    println!("random: {n} decompositions, {} wrong", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
