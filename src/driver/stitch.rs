//! Stitching: one whole program from one kernel module per subproblem. Every kernel
//! module defines `triton_fused_operator(*inputs)` returning the list of its subproblem's
//! outputs; the stitched module loads each one in its own namespace and calls them in
//! order, passing values by the names the subproblems read and write (`drtc stitch` and
//! the LLM backend's region mode share it).

use drtc_backends::guard::{guard_section, GuardInput, GuardMode, GuardOptions};
use drtc_backends::module_paths::Slot;
use drtc_backends::stitch::{forward_tail, ModuleForm};
use drtc_passes::decompose::value_name;
use serde_json::Value;
use std::fmt::Write;

use crate::driver::load::LoadedProgram;

/// One subproblem line, with its kernel.
pub struct Piece {
    pub index: usize,
    pub reads: Vec<String>,
    pub writes: Vec<String>,
    pub module: String,
}

/// A Python string literal holding `s` (JSON string syntax is valid Python).
fn py_str(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// The stitched module for one program.
///
/// `guard` says what the module does with inputs its kernels were not written for;
/// `drtc_bin` is the drtc binary a recompiling guard calls.
pub fn stitched_module(
    p: &LoadedProgram,
    pieces: &[Piece],
    guard: GuardMode,
    drtc_bin: Option<String>,
) -> String {
    let g = &p.graph;
    let mut out = String::new();
    if let ModuleForm::KernelBench { model_source, .. } = &p.form {
        out.push_str(model_source);
        out.push_str("\n\n");
    }
    out.push_str(
        "# ---- stitched by drtc: one kernel module per subproblem ----\n\
import linecache as _drtc_linecache\nimport types as _drtc_types\n\n\n\
def _drtc_load(index, source):\n    \
name = f\"<drtc-subproblem-{index}>\"\n    \
_drtc_linecache.cache[name] = (len(source), None, source.splitlines(True), name)\n    \
module = _drtc_types.ModuleType(f\"drtc_subproblem_{index}\")\n    \
module.__file__ = name\n    \
exec(compile(source, name, \"exec\"), module.__dict__)\n    \
return module\n\n\n",
    );
    for piece in pieces {
        let _ = writeln!(
            out,
            "_drtc_sub{} = _drtc_load({}, {})",
            piece.index,
            piece.index,
            py_str(&piece.module)
        );
    }
    let params: Vec<String> = (0..g.inputs().len()).map(|i| format!("in{i}")).collect();
    // `drtc_forward` is what the guards call for inputs that match
    let _ = writeln!(
        out,
        "\n\ndef drtc_forward({}):\n    env = {{}}",
        params.join(", ")
    );
    for (i, &v) in g.inputs().iter().enumerate() {
        let _ = writeln!(out, "    env[{}] = in{i}", py_str(&value_name(g, v)));
    }
    for piece in pieces {
        let args: Vec<String> = piece
            .reads
            .iter()
            .map(|r| format!("env[{}]", py_str(r)))
            .collect();
        let _ = writeln!(
            out,
            "    outs = _drtc_sub{}.triton_fused_operator({})",
            piece.index,
            args.join(", ")
        );
        for (j, w) in piece.writes.iter().enumerate() {
            let _ = writeln!(out, "    env[{}] = outs[{j}]", py_str(w));
        }
    }
    let rets: Vec<String> = g
        .outputs()
        .iter()
        .map(|&v| format!("env[{}]", py_str(&value_name(g, v))))
        .collect();
    let _ = writeln!(out, "    return [{}]", rets.join(", "));
    out.push_str("\n\n");
    let names: Vec<String> = g
        .inputs()
        .iter()
        .map(|&v| value_name(g, v).to_string())
        .collect();
    let source = p.reference_source.clone().unwrap_or_default();
    let opts = GuardOptions {
        mode: guard,
        drtc_bin,
        compile_args: vec![],
        reference_source: Some(source.clone()),
    };
    out.push_str(&guard_section(
        &GuardInput::of_graph(g, &names),
        None,
        &source,
        &opts,
    ));
    match &p.form {
        ModuleForm::Seed => {
            out.push_str(
                "def triton_fused_operator(*inputs):\n    outs = _drtc_dispatch(inputs)\n    \
if outs is None:\n        return _drtc_reference_operator(*inputs)\n    return list(outs)\n",
            );
        }
        ModuleForm::KernelBench { .. } => {
            let mut next_arg = 0;
            let slots: Vec<Slot> = g
                .inputs()
                .iter()
                .map(|&v| {
                    Slot::of(g, v, || {
                        next_arg += 1;
                        format!("args[{}]", next_arg - 1)
                    })
                })
                .collect();
            let bound = drtc_backends::module_paths::bind("_drtc_args", &slots, "        ");
            let mut tail = forward_tail(p.form.state(), g.outputs().len(), "        ");
            if p.form.state().is_empty() && g.outputs().len() > 1 {
                tail = "        return tuple(outs)\n".into();
            }
            let _ = write!(
                out,
                "class ModelNew(Model):\n    def forward(self, *args):\n{bound}        \
outs = _drtc_dispatch(_drtc_args)\n        if outs is None:\n            \
return Model.forward(self, *args)\n{tail}"
            );
        }
    }
    out
}

/// The canonical path of the running drtc binary (what generated modules call to compile
/// again for new input shapes).
pub fn this_drtc() -> Option<String> {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok())
        .map(|p| p.display().to_string())
}
