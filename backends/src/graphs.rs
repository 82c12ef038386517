//! CUDA graphs for the stitched forward (`--cuda-graphs auto|on|off`): whether a module
//! captures its forward into CUDA graphs and replays them (the decision and the cost rule
//! `auto` uses), and the Python section that does it (`graph_runtime.py`, embedded in the
//! modules that use graphs).
//!
//! A replay re-runs the captured kernels on the memory the capture saw, so the module
//! replays only when everything the kernels read or write is where it was at capture:
//! every argument's (inputs', parameters' and buffers') data pointer, shape, dtype and
//! strides, the device and stream, and the global switches that change which kernels
//! PyTorch would run. Any difference captures a new graph (a few are kept, least recently
//! used first out); what cannot be captured runs the eager forward and says why.

use crate::guard::py_str;
use drtc_ir::{Graph, NodeId, Op};
use std::fmt::Write;

/// What `--cuda-graphs` asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GraphMode {
    /// Graphs where the cost rule says they pay (and the program can be captured).
    #[default]
    Auto,
    /// Graphs whenever the program can be captured, whatever the cost rule says.
    On,
    /// Never: every call runs the eager forward.
    Off,
}

impl GraphMode {
    pub fn name(self) -> &'static str {
        match self {
            GraphMode::Auto => "auto",
            GraphMode::On => "on",
            GraphMode::Off => "off",
        }
    }
}

/// Host time one launch costs the eager forward (Python, Triton's launcher, the driver);
/// a replay launches the whole graph at once.
pub const LAUNCH_US: f64 = 4.0;
/// Device bandwidth of the output copies a replay adds (read and write), bytes per second.
pub const CLONE_BANDWIDTH: f64 = 3.0e12;
/// Host time of one output copy's launch, and of the replay's own launch and key check.
pub const CLONE_LAUNCH_US: f64 = 4.0;

/// How many graphs a module keeps (one per key); the least recently used goes first.
pub const GRAPH_CACHE_SIZE: usize = 4;

/// The cost rule of `auto`, in microseconds: graphs pay when the launches they save cost
/// more host time than the output copies (and the replay launch) they add:
/// `LAUNCH_US * launches > CLONE_LAUNCH_US * (outputs + 1) + 2 * output_bytes / CLONE_BANDWIDTH`.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphCost {
    /// GPU launches of one eager forward (kernels, library calls, PyTorch ops, in-place
    /// running-statistics updates; views launch nothing).
    pub launches: usize,
    pub outputs: usize,
    pub output_bytes: u64,
}

impl GraphCost {
    /// Host time the eager forward spends launching, µs.
    pub fn saved_us(&self) -> f64 {
        LAUNCH_US * self.launches as f64
    }
    /// Time a replay adds: the output copies and the replay's own launch, µs.
    pub fn added_us(&self) -> f64 {
        CLONE_LAUNCH_US * (self.outputs as f64 + 1.0)
            + 2.0 * self.output_bytes as f64 / CLONE_BANDWIDTH * 1e6
    }
    pub fn pays(&self) -> bool {
        self.saved_us() > self.added_us()
    }
    pub fn describe(&self) -> String {
        format!(
            "{} launches x {LAUNCH_US} us = {:.1} us saved, {} output copies of {} bytes = \
             {:.1} us added",
            self.launches,
            self.saved_us(),
            self.outputs,
            self.output_bytes,
            self.added_us()
        )
    }
}

/// Whether a module uses CUDA graphs, and why (for the report).
#[derive(Clone, Debug, PartialEq)]
pub struct GraphDecision {
    pub mode: GraphMode,
    pub enabled: bool,
    pub reason: String,
    pub cost: GraphCost,
}

impl GraphDecision {
    /// The decision for reports.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "mode": self.mode.name(),
            "enabled": self.enabled,
            "reason": self.reason,
            "launches": self.cost.launches,
            "outputs": self.cost.outputs,
            "output_bytes": self.cost.output_bytes,
            "saved_us": self.cost.saved_us(),
            "added_us": self.cost.added_us(),
        })
    }
}

/// The recurrent layers PyTorch runs as one call on padded input (`aten.lstm.input`, ...):
/// cuDNN launches kernels per time step for them.
const RECURRENT_TARGETS: [&str; 4] = [
    "aten.lstm.input",
    "aten.gru.input",
    "aten.rnn_tanh.input",
    "aten.rnn_relu.input",
];

/// GPU launches of one node computed with PyTorch in the eager forward: one, except a
/// recurrent layer, which cuDNN computes as about two kernels (the recurrent product and
/// the gates) per time step, layer and direction, plus one input product per layer and
/// direction. The sizes come from the call's arguments (layers, directions, `batch_first`)
/// and its input's shape (`[T, B, F]`, `[B, T, F]` with `batch_first`), not from its
/// results: on the H200 (torch 2.11) the LSTM calls of 35_LSTM and 37_LSTMCn counted one
/// launch each from their results while the GRUs counted per step (the likely cause: an
/// exported call without the outputs nothing reads; not confirmed there). Measured: the
/// 6-layer, 512-step LSTM of KernelBench's 35_LSTM took 33.4 ms eager on the H200 and
/// 8.5 ms replayed from a graph, 4 us per launch of this estimate (6150).
pub fn torch_launches(g: &Graph, node: NodeId) -> usize {
    let n = g.node(node);
    let text = |k: &str| n.attrs.get(k).and_then(|a| a.as_str()).unwrap_or("");
    if n.op != Op::Aten || !RECURRENT_TARGETS.contains(&text("target")) {
        return 1;
    }
    // `(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    // batch_first)`: the scalars after the parameter list, and the input's shape (the call
    // may have dropped the outputs nothing reads, so they are not consulted)
    let args = text("args");
    let tail: Vec<&str> = args
        .rsplit(']')
        .next()
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .collect();
    let [_, layers, _, _, bidirectional, batch_first] = tail[..] else {
        return 1;
    };
    let (Ok(layers), Some(&x)) = (layers.parse::<usize>(), n.inputs.first()) else {
        return 1;
    };
    let shape = &g.ty(x).shape;
    let steps = match (shape.len(), batch_first) {
        (3, "True") => shape[1],
        (3, _) | (2, _) => shape[0],
        _ => return 1,
    }
    .max(0) as usize;
    let dirs = if bidirectional == "True" { 2 } else { 1 };
    (layers * dirs * (2 * steps + 1)).max(1)
}

/// Ops whose result is random at run time (a graph would replay the capture's draws
/// unless the generator is graph-safe; drtc does not rely on that for its own kernels).
/// Opaque ATen calls that draw (`aten.randn` for an initial state) are not listed: they
/// draw from PyTorch's default CUDA generator, which CUDA graphs replay safely (PyTorch's
/// note "CUDA Graph-safe RNG states": a replay advances the generator's offset by what the
/// capture drew, so it draws what the eager call would at the same generator state).
pub fn random_ops(g: &Graph) -> Vec<&'static str> {
    let mut v = vec![];
    for &n in g.body() {
        let node = g.node(n);
        let float = |k: &str| node.attrs.get(k).and_then(|a| a.as_float()).unwrap_or(0.0);
        let flag = |k: &str| node.attrs.get(k).and_then(|a| a.as_bool()).unwrap_or(false);
        // the two ops of the op set that can draw random numbers
        let random = match node.op {
            Op::Dropout => flag("training") && float("p") > 0.0,
            Op::Attention => float("dropout_p") > 0.0,
            _ => false,
        };
        if random {
            v.push(node.op.name());
        }
    }
    v
}

/// Decides for one module. `cuda`: the module is generated for CUDA (not the interpreter).
pub fn decide(mode: GraphMode, g: &Graph, cuda: bool, cost: GraphCost) -> GraphDecision {
    let random = random_ops(g);
    let (enabled, reason) = if mode == GraphMode::Off {
        (false, "--cuda-graphs off".to_string())
    } else if !cuda {
        (
            false,
            "generated for the CPU interpreter: CUDA graphs are a no-op there".to_string(),
        )
    } else if !random.is_empty() {
        (
            false,
            format!(
                "random ops ({}): a replay would repeat the captured draws",
                random.join(", ")
            ),
        )
    } else if mode == GraphMode::On {
        (true, format!("--cuda-graphs on ({})", cost.describe()))
    } else if cost.pays() {
        (true, format!("the cost rule: {}", cost.describe()))
    } else {
        (
            false,
            format!("the cost rule says they do not pay: {}", cost.describe()),
        )
    };
    GraphDecision {
        mode,
        enabled,
        reason,
        cost,
    }
}

/// The graph section of a module that uses graphs: its settings and the runtime
/// (`_drtc_graphed`, which the entry point calls instead of `_drtc_dispatch`).
pub fn graph_section(d: &GraphDecision) -> String {
    let mut s = String::new();
    s.push_str(include_str!("graph_runtime.py"));
    s.push_str("\n\n_DRTC_GRAPHS = _DrtcGraphCache(\n");
    writeln!(s, "    capacity={GRAPH_CACHE_SIZE},").unwrap();
    s.push_str("    capture=_drtc_graph_capture,\n");
    s.push_str("    replay=_drtc_graph_replay,\n");
    writeln!(s, "    reason={},", py_str(&d.reason)).unwrap();
    s.push_str(")\n\n\n");
    s
}
