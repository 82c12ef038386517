//! Loading the programs `drtc compile` takes: Python files (KernelBench or seed format,
//! with `--set` overrides), `.jsonl` files of seed programs, and `.drt` IR files.

use super::constants::{apply_overrides, ConstantOverride};
use super::export::export_program;
use super::frontend::{Frontend, FrontendUsed};
use drtc_backends::stitch::ModuleForm;
use drtc_frontends::export::{LibraryCall, StateUpdate};
use drtc_frontends::{lower_with_input_types, split_programs, Format};
use drtc_ir::{Graph, TensorType};
use std::path::Path;

/// One program to compile: its graph, the module form to generate, and the Python source
/// of its reference (what verification compares against), when there is one.
pub struct LoadedProgram {
    /// `file.py`, `file.jsonl:3`.
    pub name: String,
    /// 1-based line of a `.jsonl` file.
    pub line: Option<usize>,
    pub graph: Graph,
    pub form: ModuleForm,
    pub reference_source: Option<String>,
    /// The frontend that read it.
    pub frontend: FrontendUsed,
    /// Ops the export frontend left to PyTorch as opaque ATen calls (with source lines).
    pub library_calls: Vec<LibraryCall>,
    /// Module tensors the forward updates (the export frontend's; see `ModuleForm`).
    pub state_updates: Vec<StateUpdate>,
    /// The export frontend's notes (mapped ops PyTorch runs instead), and, under `auto`,
    /// why the native parser did not read the program.
    pub notes: Vec<String>,
}

impl LoadedProgram {
    /// The frontend facts of a report: which one, its library calls and notes.
    pub fn frontend_json(&self) -> serde_json::Value {
        serde_json::json!({
            "name": self.frontend.name(),
            "library_calls": self.library_calls,
            "state_updates": self.state_updates,
            "notes": self.notes,
        })
    }
}

/// A program that could not be loaded, with the rendered reason.
pub struct LoadError {
    pub name: String,
    pub line: Option<usize>,
    pub message: String,
}

/// The module form generated for a program of `format` whose source is `text`: a
/// KernelBench `Model` gets a `ModelNew` (updating `state` after each forward: the export
/// frontend's state updates, whose values are the graph's last outputs), a seed program a
/// `triton_fused_operator`.
pub fn module_form(format: Format, text: &str, state: &[StateUpdate]) -> ModuleForm {
    match format {
        Format::KernelBench => ModuleForm::KernelBench {
            model_source: text.to_string(),
            state: state
                .iter()
                .map(|u| drtc_backends::stitch::StateUpdate {
                    name: u.name.clone(),
                    assign: u.assigned,
                })
                .collect(),
        },
        Format::Seed => ModuleForm::Seed,
    }
}

/// Loads every program of `path` (one, or one per `.jsonl` line), applying overrides.
pub fn load_programs(
    path: &Path,
    contents: &str,
    overrides: &[ConstantOverride],
    only_line: Option<usize>,
) -> Result<Vec<Result<LoadedProgram, LoadError>>, String> {
    load_programs_with_types(path, contents, overrides, only_line, None, Frontend::Native)
}

/// [`load_programs`], with the activations of Python programs bound to `input_types`
/// (one per `get_inputs()` item) instead of the types `get_inputs()` gives, read by
/// `frontend` (`auto`: native when it accepts the program, export otherwise).
pub fn load_programs_with_types(
    path: &Path,
    contents: &str,
    overrides: &[ConstantOverride],
    only_line: Option<usize>,
    input_types: Option<&[TensorType]>,
    frontend: Frontend,
) -> Result<Vec<Result<LoadedProgram, LoadError>>, String> {
    let name = path.display().to_string();
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if ext == "drt" {
        if input_types.is_some() {
            return Err(format!(
                "{name}: input types can only be given for Python programs (an IR file's \
                 inputs are typed in the file)"
            ));
        }
        let graph = drtc_ir::text::parse(contents).map_err(|e| e.render(contents, &name))?;
        let errors: Vec<String> = drtc_ir::verify(&graph)
            .into_iter()
            .filter(|e| e.is_error())
            .map(|e| format!("  {e}"))
            .collect();
        if !errors.is_empty() {
            return Err(format!("{name} does not verify:\n{}", errors.join("\n")));
        }
        let reference_source = Some(drtc_backends::torch::emit_seed_program(&graph));
        return Ok(vec![Ok(LoadedProgram {
            name,
            line: None,
            graph,
            form: ModuleForm::Seed,
            reference_source,
            frontend: FrontendUsed::Native,
            library_calls: vec![],
            state_updates: vec![],
            notes: vec![],
        })]);
    }
    if ext != "py" && ext != "jsonl" {
        return Err(format!(
            "{name}: unsupported input (expected .py, .jsonl or .drt)"
        ));
    }
    let mut out = vec![];
    for p in split_programs(&name, contents) {
        let program = match p {
            Ok(p) => p,
            Err((e, p)) => {
                out.push(Err(LoadError {
                    message: e.render(&p.name, &p.text),
                    name: p.name,
                    line: p.line,
                }));
                continue;
            }
        };
        if only_line.is_some() && program.line != only_line {
            continue;
        }
        let text = if overrides.is_empty() {
            program.text.clone()
        } else {
            match apply_overrides(&program.text, overrides) {
                Ok(t) => t,
                Err(missing) => {
                    out.push(Err(LoadError {
                        message: format!(
                            "--set names no module-level constant of this program: {}",
                            missing.join(", ")
                        ),
                        name: program.name,
                        line: program.line,
                    }));
                    continue;
                }
            }
        };
        let (name, line) = (program.name, program.line);
        out.push(load_one(&text, &name, line, input_types, frontend));
    }
    if only_line.is_some() && out.is_empty() {
        return Err(format!(
            "{name} has no program on line {}",
            only_line.unwrap_or(0)
        ));
    }
    Ok(out)
}

/// One Python program given as text (named `name` in messages) through `frontend`: what
/// the Python package's `parse` and `compile` share with the CLI.
pub fn load_source(text: &str, name: &str, frontend: Frontend) -> Result<LoadedProgram, LoadError> {
    load_one(text, name, None, None, frontend)
}

/// One Python program through the chosen frontend.
fn load_one(
    text: &str,
    name: &str,
    line: Option<usize>,
    input_types: Option<&[TensorType]>,
    frontend: Frontend,
) -> Result<LoadedProgram, LoadError> {
    let native = match frontend {
        Frontend::Export => None,
        Frontend::Native | Frontend::Auto => Some(lower_with_input_types(text, input_types)),
    };
    let refused = match native {
        Some(Ok(lowered)) => {
            return Ok(LoadedProgram {
                name: name.to_string(),
                line,
                graph: lowered.graph,
                form: module_form(lowered.format, text, &[]),
                reference_source: Some(text.to_string()),
                frontend: FrontendUsed::Native,
                library_calls: vec![],
                state_updates: vec![],
                notes: vec![],
            })
        }
        Some(Err(e)) if frontend == Frontend::Native => {
            return Err(LoadError {
                message: e.render(name, text),
                name: name.to_string(),
                line,
            })
        }
        Some(Err(e)) => Some(e.to_string()),
        None => None,
    };
    match export_program(text, name, input_types) {
        Ok(im) => {
            let mut notes = im.notes;
            if let Some(why) = refused {
                notes.insert(
                    0,
                    format!("the native parser does not read it ({why}): exported"),
                );
            }
            Ok(LoadedProgram {
                name: name.to_string(),
                line,
                graph: im.graph,
                form: module_form(im.format, text, &im.state_updates),
                reference_source: Some(text.to_string()),
                frontend: FrontendUsed::Export,
                library_calls: im.library_calls,
                state_updates: im.state_updates,
                notes,
            })
        }
        Err(e) => {
            let mut message = e.render(name, text);
            if let Some(why) = refused {
                message.push_str(&format!(
                    "\n(the native parser does not read it either: {why})"
                ));
            }
            Err(LoadError {
                message,
                name: name.to_string(),
                line,
            })
        }
    }
}
