//! The form of a generated module (`ModuleForm`: a KernelBench `ModelNew` or a seed
//! program) and the module state a generated `ModelNew` writes back after its kernels: the
//! tensors (buffers, plain tensor attributes such as an RNN's `self.hidden`) the
//! reference's forward changes, whose new values are the graph's last outputs, and the end
//! of the forward that sets them and returns the rest.

use std::fmt::Write;

/// What the generated module must expose.
#[derive(Clone, Debug)]
pub enum ModuleForm {
    /// A KernelBench file: the original source (defining `Model`) is kept, and
    /// `class ModelNew(Model)` calls the kernels with the model's own parameters. `state`:
    /// the module tensors the forward updates, whose new values are the graph's last
    /// outputs (after the ones forward returns), in this order.
    KernelBench {
        model_source: String,
        state: Vec<StateUpdate>,
    },
    /// A seed program: `triton_fused_operator(*inputs)` returning the list of outputs.
    Seed,
}

/// Python attribute access for a state_dict name (`layers.0.weight` -> `self.layers[0].weight`).
pub fn self_path(name: &str) -> String {
    let mut s = String::from("self");
    for part in name.split('.') {
        s.push_str(&attr_step(part));
    }
    s
}

/// One step of an attribute path: `[3]` for an index into a container, `.name` otherwise.
pub fn attr_step(part: &str) -> String {
    if part.chars().all(|c| c.is_ascii_digit()) && !part.is_empty() {
        format!("[{part}]")
    } else {
        format!(".{part}")
    }
}

/// A module tensor (a buffer, or a plain tensor attribute such as an RNN's `self.hidden`)
/// that `ModelNew.forward` sets to one of the graph's outputs after the kernels ran.
#[derive(Clone, Debug, PartialEq)]
pub struct StateUpdate {
    /// Its dotted name on the module (`hidden`, `layers.0.state`).
    pub name: String,
    /// `self.x = new` (the reference assigns a new tensor) rather than `self.x.copy_(new)`
    /// (the reference updates its tensor in place).
    pub assign: bool,
}

impl ModuleForm {
    /// The state a KernelBench module's forward updates (none for seed programs).
    pub fn state(&self) -> &[StateUpdate] {
        match self {
            ModuleForm::KernelBench { state, .. } => state,
            ModuleForm::Seed => &[],
        }
    }
}

/// The end of `ModelNew.forward` after `outs = <the kernels>(...)` of a graph with
/// `outputs` outputs, the last `state.len()` of them new state: the updates, then the
/// `return` of the others (one tensor, or a tuple). Lines start with `indent`.
pub fn forward_tail(state: &[StateUpdate], outputs: usize, indent: &str) -> String {
    let mut s = String::new();
    let user = outputs - state.len();
    for (k, u) in state.iter().enumerate() {
        let target = self_path(&u.name);
        if u.assign {
            writeln!(s, "{indent}{target} = outs[{}]", user + k).unwrap();
        } else {
            writeln!(s, "{indent}{target}.copy_(outs[{}])", user + k).unwrap();
        }
    }
    if user == 1 {
        writeln!(s, "{indent}return outs[0]").unwrap();
    } else if state.is_empty() {
        writeln!(s, "{indent}return outs").unwrap();
    } else {
        writeln!(s, "{indent}return tuple(outs[:{user}])").unwrap();
    }
    s
}
