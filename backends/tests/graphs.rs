//! CUDA graphs in generated modules: the decision (`--cuda-graphs auto|on|off`, the cost
//! rule, never on the CPU interpreter or with random ops), the code of a module that uses
//! them (snapshot: the graphed entry point and the training-mode BatchNorm updates inside
//! the captured forward), and the graph runtime's key and cache logic on CPU tensors
//! (`check_graphs.py`; needs the Python of `drtc setup` or `DRTC_PYTHON`).

use drtc_backends::graphs::{decide, torch_launches, GraphCost, GraphMode};
use drtc_backends::stitch::{generate_module, CodegenOptions, GeneratedModule, ModuleForm};
use drtc_ir::Graph;
use drtc_passes::fuse::{plan_fusion, FuseOptions};
use std::path::{Path, PathBuf};

fn python() -> PathBuf {
    if let Ok(p) = std::env::var("DRTC_PYTHON") {
        return PathBuf::from(p);
    }
    let root = std::env::var("DRTC_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/drtc")
        });
    root.join("venv/bin/python")
}

fn graph(name: &str) -> Graph {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/programs/{name}.drt"));
    drtc_ir::text::parse(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn module(g: &Graph, graphs: GraphMode, interpret: bool) -> GeneratedModule {
    let plan = plan_fusion(g, &FuseOptions::default());
    let opts = CodegenOptions {
        interpret,
        graphs,
        ..Default::default()
    };
    let form = ModuleForm::KernelBench {
        model_source: "# (the reference's source: class Model, get_inputs)".into(),
        state: vec![],
    };
    generate_module(g, &plan, &form, &opts)
}

fn cost(launches: usize, output_bytes: u64) -> GraphCost {
    GraphCost {
        launches,
        outputs: 1,
        output_bytes,
    }
}

#[test]
fn the_decision_and_its_cost_rule() {
    let g = graph("batch_norm");
    // many launches, a small output: graphs pay
    let d = decide(GraphMode::Auto, &g, true, cost(10, 4096));
    assert!(d.enabled, "{}", d.reason);
    assert!(d.reason.starts_with("the cost rule"), "{}", d.reason);
    // few launches, a large output: the copy a replay adds costs more than it saves
    let d = decide(GraphMode::Auto, &g, true, cost(3, 256 << 20));
    assert!(
        !d.enabled && d.reason.contains("do not pay"),
        "{}",
        d.reason
    );
    // on: whatever the rule says
    assert!(decide(GraphMode::On, &g, true, cost(3, 256 << 20)).enabled);
    // off, and the CPU interpreter, never
    let off = decide(GraphMode::Off, &g, true, cost(10, 4096));
    assert!(!off.enabled && off.reason == "--cuda-graphs off");
    let cpu = decide(GraphMode::On, &g, false, cost(10, 4096));
    assert!(
        !cpu.enabled && cpu.reason.contains("CPU interpreter"),
        "{}",
        cpu.reason
    );
    // random ops: a replay would repeat the captured draws, even when asked for
    let r = drtc_ir::text::parse(
        "graph @r(%x: f32[4, 8]) {\n  %0 = dropout(%x) {p = 0.5, training = true} : f32[4, 8]\n  return %0\n}\n",
    )
    .unwrap();
    let d = decide(GraphMode::On, &r, true, cost(10, 4096));
    assert!(!d.enabled && d.reason.contains("dropout"), "{}", d.reason);
    let eval = drtc_ir::text::parse(
        "graph @r(%x: f32[4, 8]) {\n  %0 = dropout(%x) {p = 0.5, training = false} : f32[4, 8]\n  return %0\n}\n",
    )
    .unwrap();
    assert!(decide(GraphMode::On, &eval, true, cost(10, 4096)).enabled);
    // the rule's two sides, in microseconds
    let c = cost(10, 3_000_000);
    assert_eq!(c.saved_us(), 40.0);
    assert!(
        (c.added_us() - (8.0 + 2.0)).abs() < 1e-9,
        "{}",
        c.added_us()
    );
}

/// A 2-layer LSTM run by PyTorch (an opaque ATen call): `batch_first` is the call's last
/// argument; the output is `[3, 16, 5]`.
fn lstm(batch_first: bool) -> Graph {
    let flag = if batch_first { "True" } else { "False" };
    drtc_ir::text::parse(&format!(
        "graph @l(%x: f32[3, 16, 4], %h: f32[2, 3, 5], %c: f32[2, 3, 5], %w: f32[20, 4]) {{\n  \
         %0, %1, %2 = aten(%x, %h, %c, %w) {{target = \"aten.lstm.input\", args = \"$0, [$1, \
         $2], [$3], False, 2, 0.0, True, False, {flag}\", types = \"(f32[3, 16, 5]; f32[2, 3, \
         5]; f32[2, 3, 5])\"}} : f32[3, 16, 5], f32[2, 3, 5], f32[2, 3, 5]\n  return %0\n}}\n"
    ))
    .unwrap()
}

#[test]
fn recurrent_library_calls_count_a_launch_per_step() {
    // cuDNN: about two kernels per time step and layer, and an input product per layer
    let g = lstm(true);
    assert_eq!(torch_launches(&g, g.body()[0]), 2 * (2 * 16 + 1));
    // sequence first: the steps are the output's first dim
    let g = lstm(false);
    assert_eq!(torch_launches(&g, g.body()[0]), 2 * (2 * 3 + 1));
    // the count does not need the outputs (a call whose unread outputs were dropped)
    let dropped = drtc_ir::text::parse(
        "graph @l(%x: f32[3, 16, 4], %h: f32[2, 3, 5], %c: f32[2, 3, 5], %w: f32[20, 4]) {\n  \
         %0 = aten(%x, %h, %c, %w) {target = \"aten.lstm.input\", args = \"$0, [$1, $2], [$3], \
         False, 2, 0.0, True, True, True\", types = \"(f32[3, 16, 10])\"} : f32[3, 16, 10]\n  \
         return %0\n}\n",
    )
    .unwrap();
    // bidirectional: two directions per layer
    assert_eq!(
        torch_launches(&dropped, dropped.body()[0]),
        2 * 2 * (2 * 16 + 1)
    );
    // other opaque calls launch once
    let r = drtc_ir::text::parse(
        "graph @r(%x: f32[3, 4]) {\n  %0, %1 = aten(%x) {target = \"aten.sort.default\", args = \"$0, -1\", types = \"(f32[3, 4]; i64[3, 4])\"} : f32[3, 4], i64[3, 4]\n  return %0\n}\n",
    )
    .unwrap();
    assert_eq!(torch_launches(&r, r.body()[0]), 1);
    // so a module that is one recurrent call replays a graph: its host launches are what
    // the eager forward spends (KernelBench's 35_LSTM: 33.4 ms eager, 8.5 ms replayed)
    let m = module(&lstm(true), GraphMode::Auto, false);
    assert!(m.graphs.enabled, "{}", m.graphs.reason);
    assert_eq!(m.graphs.cost.launches, 66, "{}", m.graphs.reason);
}

#[test]
fn modules_without_graphs_are_unchanged() {
    let g = graph("batch_norm");
    for (mode, interpret) in [(GraphMode::Off, false), (GraphMode::On, true)] {
        let m = module(&g, mode, interpret);
        assert!(!m.graphs.enabled);
        assert!(!m.source.contains("_drtc_graphed"), "{mode:?}");
        assert!(!m.source.contains("CUDAGraph"), "{mode:?}");
        assert!(m.source.contains("outs = _drtc_dispatch(_drtc_args)"));
    }
}

/// The part of a module a reviewer reads: the captured forward, the graph settings and the
/// entry point (the two runtimes, embedded verbatim, and the embedded source left out).
fn reviewed_part(src: &str) -> String {
    let start = src.find("def drtc_forward(").unwrap();
    let mut out = String::new();
    let mut skipping = false;
    for line in src[start..].lines() {
        if line.starts_with("# ---- drtc guards") || line.starts_with("# ---- drtc CUDA graphs") {
            skipping = true;
            out.push_str(line);
            out.push_str("\n# ...\n");
            continue;
        }
        if line.starts_with("_DRTC_GUARD = {") || line.starts_with("_DRTC_GRAPHS = ") {
            skipping = false;
        }
        if line.starts_with("_DRTC_SOURCE = ") {
            out.push_str("_DRTC_SOURCE = ...\n");
            continue;
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[test]
fn a_graphed_kernelbench_module() {
    let g = graph("batch_norm");
    let m = module(&g, GraphMode::On, false);
    assert!(m.graphs.enabled, "{}", m.graphs.reason);
    // the running statistics are updated inside the forward the graph captures
    let forward = &m.source[m.source.find("def drtc_forward(").unwrap()..];
    assert!(
        forward.contains("torch._foreach_mul_([bn_running_mean, bn_running_var], 0.9)"),
        "{forward}"
    );
    assert!(forward.contains("torch._foreach_add_([bn_num_batches_tracked], 1)"));
    insta::assert_snapshot!(reviewed_part(&m.source));
}

#[test]
fn graph_runtime_key_and_cache_on_cpu() {
    let py = python();
    if !py.exists() {
        panic!(
            "no Python at {} (run `drtc setup` or set DRTC_PYTHON)",
            py.display()
        );
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(&py)
        .arg(dir.join("tests/check_graphs.py"))
        .arg(dir.join("src/graph_runtime.py"))
        .arg(dir.join("src/guard_runtime.py"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "check_graphs.py failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default();
    let n: usize = last
        .strip_prefix("ok ")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(n >= 39, "{stdout}");
}
