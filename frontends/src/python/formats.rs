//! The two program formats and their lowering: KernelBench files (`class Model`,
//! `get_inputs`, `get_init_inputs`) and seed programs (`get_inputs` + `fused_operator`),
//! either a single file or a `.jsonl` file with one program per line (field `pytorch`).

use super::args::Args;
use super::emitter::Phase;
use super::error::{FrontendError, Span};
use super::interp::{find_method, Interp};
use super::parser::parse;
use super::value::Val;
use drtc_ir::{DType, Graph, GraphBuilder, InputKind, TensorType, ValueId};

type R<T> = Result<T, FrontendError>;

/// Which format a program is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    KernelBench,
    Seed,
}

/// One program's text and the name to show in messages (`file.py`, `file.jsonl:3`).
#[derive(Debug, Clone, PartialEq)]
pub struct SourceProgram {
    pub name: String,
    pub text: String,
    /// 1-based line of a `.jsonl` file, if it came from one.
    pub line: Option<usize>,
}

/// A lowered program: its graph and format.
#[derive(Debug, Clone)]
pub struct Lowered {
    pub graph: Graph,
    pub format: Format,
}

/// Splits a file into programs: every non-empty line of a `.jsonl` file, or the file itself.
/// A line that is not a JSON object with a string field `pytorch` gives an error (with the
/// line as its source).
pub fn split_programs(
    name: &str,
    contents: &str,
) -> Vec<Result<SourceProgram, (FrontendError, SourceProgram)>> {
    if !name.ends_with(".jsonl") {
        return vec![Ok(SourceProgram {
            name: name.to_string(),
            text: contents.to_string(),
            line: None,
        })];
    }
    let mut out = vec![];
    for (i, line) in contents.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let label = format!("{name}:{}", i + 1);
        let raw = SourceProgram {
            name: label.clone(),
            text: line.to_string(),
            line: Some(i + 1),
        };
        let parsed: Result<serde_json::Value, _> = serde_json::from_str(line);
        let text = match parsed {
            Ok(v) => match v.get("pytorch").and_then(|p| p.as_str()) {
                Some(t) => t.to_string(),
                None => {
                    out.push(Err((
                        FrontendError::format(
                            "this JSON line has no string field `pytorch`",
                            0..line.len(),
                        ),
                        raw,
                    )));
                    continue;
                }
            },
            Err(e) => {
                let col = e.column().saturating_sub(1).min(line.len());
                let start = line
                    .char_indices()
                    .map(|(b, _)| b)
                    .take_while(|&b| b <= col)
                    .last()
                    .unwrap_or(0);
                out.push(Err((
                    FrontendError::format(format!("invalid JSON: {e}"), start..start),
                    raw,
                )));
                continue;
            }
        };
        out.push(Ok(SourceProgram {
            name: label,
            text,
            line: Some(i + 1),
        }));
    }
    out
}

/// Parses and lowers one program, detecting its format.
pub fn lower(source: &str) -> R<Lowered> {
    lower_with_input_types(source, None)
}

/// Like [`lower`], but the activations take the given types instead of those of
/// `get_inputs()` (one per item it returns, in order): how a generated module's guard
/// compiles the same program again for the inputs it was called with.
pub fn lower_with_input_types(source: &str, input_types: Option<&[TensorType]>) -> R<Lowered> {
    let module = parse(source)?;
    let mut interp = Interp::new();
    interp.em.phase = Phase::Inputs;
    interp.run_module(&module)?;
    let whole: Span = 0..source.len().min(1);
    if let Some(Val::Class(_)) = interp.globals.get("Model") {
        Ok(Lowered {
            graph: lower_kernelbench(&mut interp, &whole, input_types)?,
            format: Format::KernelBench,
        })
    } else if let Some(Val::Function(_)) = interp.globals.get("fused_operator") {
        Ok(Lowered {
            graph: lower_seed(&mut interp, &whole, input_types)?,
            format: Format::Seed,
        })
    } else {
        Err(FrontendError::format(
            "not a KernelBench program (no `class Model`) nor a seed program (no `def fused_operator`)",
            whole,
        ))
    }
}

/// Calls a module-level function with no arguments.
fn call_global(interp: &mut Interp, name: &str, whole: &Span) -> R<Option<Val>> {
    match interp.globals.get(name).cloned() {
        None => Ok(None),
        Some(Val::Function(f)) => {
            let span = f.span.clone();
            Ok(Some(interp.call_function(
                &f,
                Args::new(span.clone()),
                None,
                &span,
            )?))
        }
        Some(other) => Err(FrontendError::format(
            format!("`{name}` must be a function, got {}", other.type_name()),
            whole.clone(),
        )),
    }
}

/// The graph-input types of `get_inputs()`: tensors, or Python numbers as 0-dim tensors;
/// `overrides`, when given, replace them (and must be as many).
fn input_types(
    interp: &mut Interp,
    whole: &Span,
    overrides: Option<&[TensorType]>,
) -> R<Vec<TensorType>> {
    let span = match interp.globals.get("get_inputs") {
        Some(Val::Function(f)) => f.span.clone(),
        _ => whole.clone(),
    };
    let v = call_global(interp, "get_inputs", whole)?.ok_or_else(|| {
        FrontendError::format("the program has no `get_inputs()` function", whole.clone())
    })?;
    let items = v
        .items()
        .ok_or_else(|| {
            FrontendError::format(
                format!("`get_inputs()` must return a list, got {}", v.type_name()),
                span.clone(),
            )
        })?
        .to_vec();
    let mut out = vec![];
    for it in items {
        let it = interp.em.read(it, &span)?;
        out.push(match it {
            Val::Tensor(t) => interp.em.ty(t).clone(),
            Val::Float(_) => TensorType::scalar(DType::F32),
            Val::Int(_) => TensorType::scalar(DType::I64),
            Val::Bool(_) => TensorType::scalar(DType::Bool),
            other => {
                return Err(FrontendError::unsupported(
                    format!(
                        "`get_inputs()` returns {}; only tensors and numbers are supported",
                        other.type_name()
                    ),
                    span,
                ))
            }
        });
    }
    if let Some(types) = overrides {
        if types.len() != out.len() {
            return Err(FrontendError::lowering(
                format!(
                    "{} input types given, but `get_inputs()` returns {} inputs",
                    types.len(),
                    out.len()
                ),
                span,
            ));
        }
        return Ok(types.to_vec());
    }
    Ok(out)
}

/// Graph inputs named after the function's parameters (`*args` become `args_0`, ...).
fn bind_inputs(
    builder: &mut GraphBuilder,
    f: &super::ast::FunctionDef,
    skip_self: bool,
    types: Vec<TensorType>,
) -> R<Vec<ValueId>> {
    use super::ast::ParamKind;
    let params: Vec<&super::ast::Param> = f.params.iter().skip(usize::from(skip_self)).collect();
    let mut out = vec![];
    let mut k = 0;
    for (i, ty) in types.into_iter().enumerate() {
        let name = match params.get(k) {
            Some(p) if p.kind == ParamKind::Normal => {
                k += 1;
                p.name.clone()
            }
            Some(p) if p.kind == ParamKind::VarArgs => format!("{}_{}", p.name, i),
            _ => {
                return Err(FrontendError::lowering(
                    format!(
                        "`{}` takes {} inputs but `get_inputs()` returns more",
                        f.name,
                        params.len()
                    ),
                    f.span.clone(),
                ))
            }
        };
        out.push(builder.input(name, ty));
    }
    Ok(out)
}

/// The graph outputs of a returned value: a tensor or a list/tuple of tensors.
fn outputs(interp: &mut Interp, v: Val, span: &Span) -> R<Vec<ValueId>> {
    let items = match v {
        Val::Tuple(items) | Val::List(items) => items.to_vec(),
        other => vec![other],
    };
    let mut out = vec![];
    for it in items {
        let it = interp.em.read(it, span)?;
        match it {
            Val::Tensor(t) => out.push(t),
            other => {
                return Err(FrontendError::unsupported(
                    format!("the program returns {}; only tensors (or lists of tensors) can be graph outputs", other.type_name()),
                    span.clone(),
                ))
            }
        }
    }
    Ok(out)
}

fn lower_kernelbench(
    interp: &mut Interp,
    whole: &Span,
    overrides: Option<&[TensorType]>,
) -> R<Graph> {
    let types = input_types(interp, whole, overrides)?;
    let init = match call_global(interp, "get_init_inputs", whole)? {
        None => vec![],
        Some(v) => v
            .items()
            .ok_or_else(|| {
                FrontendError::format(
                    format!(
                        "`get_init_inputs()` must return a list, got {}",
                        v.type_name()
                    ),
                    whole.clone(),
                )
            })?
            .to_vec(),
    };
    let Some(Val::Class(class)) = interp.globals.get("Model").cloned() else {
        return Err(FrontendError::format("no `class Model`", whole.clone()));
    };
    let forward = find_method(&class, "forward").ok_or_else(|| {
        FrontendError::format("`Model` has no `forward` method", class.span.clone())
    })?;
    interp.em.phase = Phase::Init;
    let mut args = Args::new(class.span.clone());
    args.pos = init.into_iter().map(|v| (v, class.span.clone())).collect();
    let model = interp.call(Val::Class(class.clone()), args, &class.span.clone())?;
    let Val::Object(id) = model else {
        return Err(FrontendError::format(
            "`Model(...)` did not produce an object",
            class.span.clone(),
        ));
    };

    // the graph: activations, then parameters and buffers in state_dict order
    let mut builder = GraphBuilder::new("model");
    let inputs = bind_inputs(&mut builder, &forward, true, types)?;
    let obj = interp.objects[id].clone();
    let mut order: Vec<(String, TensorType, InputKind)> = vec![];
    for kind in [InputKind::Param, InputKind::Buffer] {
        for m in obj.members.iter().filter(|m| m.kind == kind) {
            order.push((m.name.clone(), m.ty.clone(), m.kind.clone()));
        }
    }
    for (prefix, layer) in &obj.children {
        for m in &interp.em.layers[*layer].members {
            order.push((format!("{prefix}.{}", m.name), m.ty.clone(), m.kind.clone()));
        }
    }
    for (name, ty, kind) in order {
        let v = match kind {
            InputKind::Buffer => builder.buffer(name.clone(), ty),
            _ => builder.param(name.clone(), ty),
        };
        interp.em.params.insert(name, v);
    }
    interp.em.builder = builder;
    interp.em.phase = Phase::Forward;
    let span = forward.span.clone();
    let mut args = Args::new(span.clone());
    args.pos = inputs
        .into_iter()
        .map(|v| (Val::Tensor(v), span.clone()))
        .collect();
    let result = interp.call_function(&forward, args, Some(Val::Object(id)), &span)?;
    let outs = outputs(interp, result, &span)?;
    let builder = std::mem::replace(&mut interp.em.builder, GraphBuilder::new("scratch"));
    Ok(builder.finish(outs))
}

fn lower_seed(interp: &mut Interp, whole: &Span, overrides: Option<&[TensorType]>) -> R<Graph> {
    let types = input_types(interp, whole, overrides)?;
    let Some(Val::Function(f)) = interp.globals.get("fused_operator").cloned() else {
        return Err(FrontendError::format("no `fused_operator`", whole.clone()));
    };
    let mut builder = GraphBuilder::new("fused_operator");
    let inputs = bind_inputs(&mut builder, &f, false, types)?;
    interp.em.builder = builder;
    interp.em.phase = Phase::Forward;
    let span = f.span.clone();
    let mut args = Args::new(span.clone());
    args.pos = inputs
        .into_iter()
        .map(|v| (Val::Tensor(v), span.clone()))
        .collect();
    let result = interp.call_function(&f, args, None, &span)?;
    let outs = outputs(interp, result, &span)?;
    let builder = std::mem::replace(&mut interp.em.builder, GraphBuilder::new("scratch"));
    Ok(builder.finish(outs))
}
