//! Input guards of generated modules: before launching, every call checks each input's
//! shape, dtype and device against what the kernels were compiled for, makes
//! non-contiguous inputs contiguous, and on a mismatch recompiles through drtc, computes
//! the reference, or raises (see `guard_runtime.py`, which every module embeds).

use crate::torch::torch_dtype;
use drtc_ir::{Graph, InputKind, TensorType, ValueDef};
use std::fmt::Write;

/// What a generated module does with inputs its kernels were not compiled for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GuardMode {
    /// Compile again for the new activation types through drtc (cached); where that is
    /// not possible, compute the reference and warn once.
    #[default]
    Recompile,
    /// Raise a `ValueError` naming the expected and the given inputs.
    Error,
    /// Compute the reference program and warn once.
    Reference,
}

impl GuardMode {
    pub fn name(self) -> &'static str {
        match self {
            GuardMode::Recompile => "recompile",
            GuardMode::Error => "error",
            GuardMode::Reference => "reference",
        }
    }
}

/// How a module's guard behaves and how it recompiles.
#[derive(Clone, Debug, Default)]
pub struct GuardOptions {
    pub mode: GuardMode,
    /// The drtc binary recorded in the module (tried after `$DRTC_BIN`, before `PATH`).
    pub drtc_bin: Option<String>,
    /// `drtc compile` options that recompiling repeats (precision, fusion, rewrites);
    /// `--device` and `--input-type` are added by the guard.
    pub compile_args: Vec<String>,
    /// The program source to recompile and to compute the reference from, for seed
    /// modules (KernelBench modules use their `Model` source).
    pub reference_source: Option<String>,
}

/// One argument of the guarded function.
#[derive(Clone, Debug)]
pub struct GuardInput {
    pub name: String,
    pub kind: InputKind,
    pub ty: TensorType,
    /// The torch memory format the kernels want this argument in when not the contiguous
    /// one (`torch.channels_last` for weights of channels-last convolutions): the guard
    /// accepts it dense in that format and converts it to it otherwise.
    pub memory_format: Option<&'static str>,
}

impl GuardInput {
    /// Every graph input, in order, with the Python argument names given.
    pub fn of_graph(g: &Graph, names: &[String]) -> Vec<GuardInput> {
        g.inputs()
            .iter()
            .zip(names)
            .map(|(&v, n)| GuardInput {
                name: n.clone(),
                kind: match &g.value(v).def {
                    ValueDef::Input { kind, .. } => kind.clone(),
                    ValueDef::Node { .. } => InputKind::Activation,
                },
                ty: g.ty(v).clone(),
                memory_format: None,
            })
            .collect()
    }
}

/// A Python string literal holding `s` (JSON string syntax is valid Python).
pub fn py_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

fn kind_name(k: &InputKind) -> &'static str {
    match k {
        InputKind::Activation => "activation",
        InputKind::Param => "param",
        InputKind::Buffer => "buffer",
    }
}

/// The guard section of a module: its signature, the embedded source, and the runtime.
/// `device` is the device type the kernels run on (`cpu` under the interpreter, `cuda`),
/// or `None` when the module cannot know (stitched kernels).
pub fn guard_section(
    inputs: &[GuardInput],
    device: Option<&str>,
    source: &str,
    opts: &GuardOptions,
) -> String {
    let mut s = String::new();
    s.push_str(include_str!("guard_runtime.py"));
    s.push_str("\n\n_DRTC_GUARD = {\n");
    writeln!(s, "    \"mode\": {},", py_str(opts.mode.name())).unwrap();
    writeln!(
        s,
        "    \"device\": {},",
        device.map(py_str).unwrap_or_else(|| "None".into())
    )
    .unwrap();
    writeln!(
        s,
        "    \"drtc\": {},",
        opts.drtc_bin
            .as_deref()
            .map(py_str)
            .unwrap_or_else(|| "None".into())
    )
    .unwrap();
    writeln!(s, "    \"version\": {},", py_str(env!("CARGO_PKG_VERSION"))).unwrap();
    let args: Vec<String> = opts.compile_args.iter().map(|a| py_str(a)).collect();
    writeln!(s, "    \"compile_args\": [{}],", args.join(", ")).unwrap();
    s.push_str("    \"inputs\": [\n");
    for i in inputs {
        let dims: Vec<String> = i.ty.shape.iter().map(i64::to_string).collect();
        let shape = match dims.len() {
            1 => format!("({},)", dims[0]),
            _ => format!("({})", dims.join(", ")),
        };
        writeln!(
            s,
            "        ({}, {}, {shape}, {}),",
            py_str(&i.name),
            py_str(kind_name(&i.kind)),
            torch_dtype(i.ty.dtype)
        )
        .unwrap();
    }
    s.push_str("    ],\n}\n");
    let formats: Vec<String> = inputs
        .iter()
        .enumerate()
        .filter_map(|(k, i)| i.memory_format.map(|f| format!("{k}: {f}")))
        .collect();
    if !formats.is_empty() {
        writeln!(s, "_DRTC_LAYOUTS = {{{}}}", formats.join(", ")).unwrap();
    }
    s.push_str("_DRTC_DENSE = _drtc_dense_spec()\n");
    writeln!(s, "_DRTC_SOURCE = {}\n\n", py_str(source)).unwrap();
    s
}

#[cfg(test)]
mod tests {
    /// `_drtc_matches` answers the inputs' CUDA device index, which is 0 on the first GPU:
    /// a caller that read it as a truth value would send every call on device 0 down the
    /// slow path (the CUDA-graph runtime did once). Every caller compares with None.
    #[test]
    fn the_fast_path_answer_is_never_read_as_a_truth_value() {
        for (name, text) in [
            ("guard_runtime.py", include_str!("guard_runtime.py")),
            ("graph_runtime.py", include_str!("graph_runtime.py")),
        ] {
            for line in text.lines().filter(|l| l.contains("_drtc_matches(args)")) {
                let l = line.trim();
                assert!(
                    l.starts_with("def ")
                        || l.contains("_drtc_matches(args) is None")
                        || l.starts_with("index = _drtc_matches(args)"),
                    "{name}: {l}"
                );
            }
        }
    }
}
