//! The importer: the helper's JSON into a typed, verified IR graph. Inputs keep their
//! roles and state_dict names; each ATen node becomes IR ops (`aten.rs`) whose inferred
//! types must equal the export metadata, or else one opaque `Op::Aten` call
//! (`opaque.rs`), listed in [`Imported::library_calls`].

use super::aten::{self, Arg, Call};
use super::opaque;
use super::schema::{ExportFile, NodeJson, TensorMeta};
use super::ExportError;
use crate::python::Format;
use drtc_ir::{Attr, DType, Graph, GraphBuilder, Op, TensorType, ValueId};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// An imported program.
#[derive(Debug, Clone)]
pub struct Imported {
    pub graph: Graph,
    pub format: Format,
    /// ATen ops PyTorch executes as opaque calls, with the source line of each call.
    pub library_calls: Vec<LibraryCall>,
    /// Mapped ops whose IR form disagreed with export's types (run by PyTorch instead).
    pub notes: Vec<String>,
    /// The torch version that exported the program.
    pub torch: Option<String>,
    /// Module state the forward updates (besides batch-norm statistics, which the
    /// stitcher updates from the batch-norm op): the graph's outputs after the user
    /// outputs are these tensors' new values, in this order.
    pub state_updates: Vec<StateUpdate>,
}

/// A tensor of the module that the forward changes: a buffer updated in place, or a
/// tensor attribute (`self.hidden`, made in `__init__`, neither parameter nor buffer)
/// updated in place or assigned (`self.hidden = ...`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StateUpdate {
    /// Its dotted name on the module (`hidden`, `cell.state`, `bn.running_mean`).
    pub name: String,
    /// A plain tensor attribute rather than a registered buffer.
    pub attribute: bool,
    /// Assigned in forward (`self.x = ...`, the module then holds a new tensor), rather
    /// than only updated in place.
    pub assigned: bool,
    /// The program line of the value it gets.
    pub line: Option<usize>,
}

/// One opaque call.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LibraryCall {
    pub target: String,
    pub line: Option<usize>,
}

/// What an FX node's name stands for.
#[derive(Debug, Clone)]
enum NodeVal {
    One(ValueId),
    /// A tuple or list result; `None` for results the IR form does not compute.
    Many(Vec<Option<ValueId>>),
}

type R<T> = Result<T, ExportError>;

fn json_err(message: impl Into<String>) -> ExportError {
    ExportError::Json {
        message: message.into(),
    }
}

/// The IR type of one tensor's metadata.
fn tensor_type(m: &TensorMeta) -> Result<TensorType, String> {
    let dtype = DType::from_name(&m.dtype)
        .ok_or_else(|| format!("a result of dtype {} (drtc's IR has bool, int32, int64, float16, bfloat16, float32, float64)", m.dtype))?;
    if let Some(d) = m
        .shape
        .iter()
        .find(|&&d| !(0..=drtc_ir::op::MAX_DIM).contains(&d))
    {
        return Err(format!("a result with dimension {d}"));
    }
    Ok(TensorType::new(dtype, m.shape.clone()))
}

/// A node's result types: one tensor, or a tuple/list of them (`None`: not a tensor).
enum MetaTypes {
    One(TensorType),
    Many(Vec<Option<TensorType>>),
}

fn meta_types(meta: &Option<Value>) -> Result<MetaTypes, String> {
    let one = |v: &Value| -> Result<Option<TensorType>, String> {
        if v.get("shape").is_some() {
            let m: TensorMeta = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
            tensor_type(&m).map(Some)
        } else {
            Ok(None)
        }
    };
    match meta {
        Some(Value::Array(items)) => Ok(MetaTypes::Many(
            items.iter().map(one).collect::<Result<_, _>>()?,
        )),
        Some(v) => one(v)?
            .map(MetaTypes::One)
            .ok_or_else(|| "a result that is not a tensor".into()),
        None => Err("a node without metadata".into()),
    }
}

struct Importer<'a> {
    b: GraphBuilder,
    vals: HashMap<String, NodeVal>,
    /// Per multi-result node, the result indices something reads.
    used: HashMap<String, BTreeSet<usize>>,
    calls: Vec<LibraryCall>,
    notes: Vec<String>,
    /// State_dict prefixes (`bn1.`) of batch norms computed by the IR op, whose running
    /// statistics the generated module updates (the stitcher's `running_stats`).
    bn_prefixes: HashSet<String>,
    /// Placeholder name -> state_dict name of parameters and buffers.
    state_names: &'a HashMap<String, String>,
}

impl Importer<'_> {
    fn err_op(&self, n: &NodeJson, message: impl Into<String>) -> ExportError {
        ExportError::Op {
            target: n.target.clone().unwrap_or_default(),
            message: message.into(),
            line: n.line,
        }
    }

    /// A JSON argument with node references resolved.
    fn arg(&self, v: &Value) -> Arg {
        match v {
            Value::Null => Arg::None,
            Value::Bool(b) => Arg::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Arg::Int(i),
                None => n.as_f64().map_or(Arg::Other, Arg::Float),
            },
            Value::String(s) => Arg::Str(s.clone()),
            Value::Array(items) => {
                if items.is_empty() {
                    return Arg::Ints(vec![]);
                }
                if let Some(ints) = items
                    .iter()
                    .map(Value::as_i64)
                    .collect::<Option<Vec<i64>>>()
                {
                    return Arg::Ints(ints);
                }
                let tensors: Option<Vec<ValueId>> = items
                    .iter()
                    .map(|x| match self.arg(x) {
                        Arg::Tensor(t) => Some(t),
                        _ => None,
                    })
                    .collect();
                tensors.map_or(Arg::Other, Arg::Tensors)
            }
            Value::Object(o) => {
                if let Some(Value::String(n)) = o.get("node") {
                    match self.vals.get(n) {
                        Some(NodeVal::One(v)) => Arg::Tensor(*v),
                        _ => Arg::Other,
                    }
                } else if let Some(Value::String(d)) = o.get("dtype") {
                    DType::from_name(d).map_or(Arg::Other, Arg::DType)
                } else if let Some(Value::String(f)) = o.get("float") {
                    match f.as_str() {
                        "inf" => Arg::Float(f64::INFINITY),
                        "-inf" => Arg::Float(f64::NEG_INFINITY),
                        _ => Arg::Float(f64::NAN),
                    }
                } else {
                    Arg::Other
                }
            }
        }
    }

    fn node(&mut self, n: &NodeJson) -> R<()> {
        let target = n.target.clone().unwrap_or_default();
        if target == "operator.getitem" {
            let src = n
                .args
                .first()
                .and_then(|a| a.get("node"))
                .and_then(Value::as_str);
            let idx = n.args.get(1).and_then(Value::as_u64);
            let (Some(src), Some(idx)) = (src, idx) else {
                return Err(self.err_op(n, "getitem of something that is not a node result"));
            };
            match self.vals.get(src) {
                Some(NodeVal::Many(items)) => {
                    if let Some(Some(v)) = items.get(idx as usize) {
                        self.vals.insert(n.name.clone(), NodeVal::One(*v));
                    }
                    // a result not computed is never read (`used` made the producer opaque)
                    Ok(())
                }
                _ => Err(self.err_op(n, format!("getitem {idx} of `{src}`, which is not a tuple"))),
            }
        } else if target == "aten._assert_tensor_metadata.default" {
            self.assert_metadata(n)
        } else if target.starts_with("aten.") {
            let meta = meta_types(&n.meta).map_err(|m| self.err_op(n, m))?;
            let args: Vec<Arg> = n.args.iter().map(|a| self.arg(a)).collect();
            let kwargs: BTreeMap<String, Arg> = n
                .kwargs
                .iter()
                .map(|(k, v)| (k.clone(), self.arg(v)))
                .collect();
            let call = Call {
                args: &args,
                kwargs: &kwargs,
            };
            if let Some(results) = aten::map(&mut self.b, &target, &call) {
                match self.check(n, &meta, &results) {
                    Ok(()) => {
                        if target == "aten._native_batch_norm_legit_functional.default" {
                            self.note_batch_norm(n);
                        }
                        let v = match meta {
                            MetaTypes::One(_) => NodeVal::One(results[0].expect("checked")),
                            MetaTypes::Many(_) => NodeVal::Many(results),
                        };
                        self.vals.insert(n.name.clone(), v);
                        return Ok(());
                    }
                    Err(Some(why)) => self.notes.push(format!(
                        "{target}{}: {why}; PyTorch runs it",
                        n.line.map(|l| format!(" (line {l})")).unwrap_or_default()
                    )),
                    Err(None) => {}
                }
            }
            self.opaque(n, &target, meta)
        } else {
            Err(self.err_op(
                n,
                "not an ATen op: drtc imports ATen graphs (a Python function in the graph \
                 cannot be compiled or called from generated code)",
            ))
        }
    }

    /// `_assert_tensor_metadata(x, size, stride, dtype, device=, layout=)`, which export
    /// records for `.to(...)` calls it elides: a check, computing nothing. The IR's static
    /// types decide size and dtype here (a disagreement is an error); devices are the
    /// generated module's guard's business (every input on the kernels' device), and
    /// layouts are always strided.
    fn assert_metadata(&self, n: &NodeJson) -> R<()> {
        let v = match n.args.first().map(|a| self.arg(a)) {
            Some(Arg::Tensor(v)) => v,
            _ => return Err(self.err_op(n, "an assertion about something that is not a tensor")),
        };
        let ty = self.b.ty(v);
        let get = |i: usize, k: &str| {
            n.args
                .get(i)
                .or_else(|| n.kwargs.get(k))
                .map(|a| self.arg(a))
        };
        if let Some(Arg::DType(d)) = get(3, "dtype") {
            if d != ty.dtype {
                return Err(self.err_op(n, format!("export asserts dtype {d} of a {ty} value")));
            }
        }
        if let Some(Arg::Ints(size)) = get(1, "size") {
            if size != ty.shape {
                return Err(self.err_op(n, format!("export asserts size {size:?} of a {ty} value")));
            }
        }
        Ok(())
    }

    /// Whether the mapped results match export's types and cover every result read.
    /// `Err(None)`: a read result is not computed; `Err(Some(why))`: a type disagrees.
    fn check(
        &self,
        n: &NodeJson,
        meta: &MetaTypes,
        results: &[Option<ValueId>],
    ) -> Result<(), Option<String>> {
        let expect: Vec<Option<&TensorType>> = match meta {
            MetaTypes::One(t) => vec![Some(t)],
            MetaTypes::Many(ts) => ts.iter().map(Option::as_ref).collect(),
        };
        if expect.len() != results.len() {
            return Err(Some(format!(
                "{} results in IR, {} in the export",
                results.len(),
                expect.len()
            )));
        }
        let used = self.used.get(&n.name);
        for (i, (r, e)) in results.iter().zip(&expect).enumerate() {
            match (r, e) {
                (Some(v), Some(e)) => {
                    let got = self.b.ty(*v);
                    if got != *e {
                        return Err(Some(format!("IR infers {got}, the export says {e}")));
                    }
                }
                (Some(_), None) => {
                    return Err(Some(format!("result {i} is not a tensor in the export")))
                }
                (None, _) => {
                    let read =
                        matches!(meta, MetaTypes::One(_)) || used.is_some_and(|u| u.contains(&i));
                    if read {
                        return Err(None);
                    }
                }
            }
        }
        Ok(())
    }

    /// Records the module prefix of a batch norm whose weight is its own parameter.
    fn note_batch_norm(&mut self, n: &NodeJson) {
        let name_of = |i: usize| {
            n.args
                .get(i)
                .and_then(|a| a.get("node"))
                .and_then(Value::as_str)
                .and_then(|p| self.state_names.get(p))
                .cloned()
        };
        if let (Some(w), Some(rm)) = (name_of(1), name_of(3)) {
            if let Some(prefix) = rm.strip_suffix("running_mean") {
                if w == format!("{prefix}weight") {
                    self.bn_prefixes.insert(prefix.to_string());
                }
            }
        }
    }

    /// One `Op::Aten` node for `n`.
    fn opaque(&mut self, n: &NodeJson, target: &str, meta: MetaTypes) -> R<()> {
        let t = opaque::template(&n.args, &n.kwargs).map_err(|m| {
            self.err_op(
                n,
                format!("neither an IR op nor callable from generated code: {m}"),
            )
        })?;
        let mut inputs = vec![];
        for name in &t.inputs {
            match self.vals.get(name) {
                Some(NodeVal::One(v)) => inputs.push(*v),
                _ => {
                    return Err(self.err_op(n, format!("an argument `{name}` that is not a tensor")))
                }
            }
        }
        let (types, tuple) = match &meta {
            MetaTypes::One(t) => (vec![t.clone()], false),
            MetaTypes::Many(ts) => {
                let all: Option<Vec<TensorType>> = ts.iter().cloned().collect();
                let Some(all) = all else {
                    return Err(self.err_op(n, "neither an IR op nor callable from generated code: a result that is not a tensor"));
                };
                (all, true)
            }
        };
        let mut spelled = drtc_ir::op::aten::format_types(&types);
        if tuple {
            spelled = format!("({spelled})");
        }
        let outs = self
            .b
            .op(
                Op::Aten,
                &inputs,
                [
                    ("target", Attr::Str(target.to_string())),
                    ("args", Attr::Str(t.args)),
                    ("types", Attr::Str(spelled)),
                ],
            )
            .map_err(|e| self.err_op(n, e.to_string()))?;
        self.calls.push(LibraryCall {
            target: target.to_string(),
            line: n.line,
        });
        let v = if tuple {
            NodeVal::Many(outs.into_iter().map(Some).collect())
        } else {
            NodeVal::One(outs[0])
        };
        self.vals.insert(n.name.clone(), v);
        Ok(())
    }
}

/// Every node name an argument refers to.
fn refs(v: &Value, out: &mut HashSet<String>) {
    match v {
        Value::Array(items) => items.iter().for_each(|x| refs(x, out)),
        Value::Object(o) => {
            if let Some(Value::String(n)) = o.get("node") {
                out.insert(n.clone());
            }
        }
        _ => {}
    }
}

/// Imports the helper's JSON (`json`) into IR.
pub fn import(json: &str) -> R<Imported> {
    let file: ExportFile = serde_json::from_str(json).map_err(|e| json_err(e.to_string()))?;
    if !file.ok {
        let e = file
            .error
            .ok_or_else(|| json_err("`ok` is false and there is no `error`"))?;
        return Err(match e.kind.as_str() {
            "export" => ExportError::Export {
                message: e.message,
                line: e.line,
            },
            _ => ExportError::Program {
                message: e.message,
                line: e.line,
            },
        });
    }
    let format = match file.format.as_deref() {
        Some("kernelbench") => Format::KernelBench,
        Some("seed") => Format::Seed,
        other => return Err(json_err(format!("unknown format {other:?}"))),
    };
    let by_name: HashMap<&str, &NodeJson> =
        file.nodes.iter().map(|n| (n.name.as_str(), n)).collect();
    // what is read: arguments of calls and user outputs (not buffer mutations)
    let mut read = HashSet::new();
    for n in &file.nodes {
        if n.op == "call_function" {
            n.args.iter().for_each(|a| refs(a, &mut read));
            n.kwargs.values().for_each(|a| refs(a, &mut read));
        }
    }
    // the new values of buffers and attributes other than batch-norm statistics (which
    // the stitcher updates from an IR batch norm) are state outputs: read too
    let stat = ["running_mean", "running_var", "num_batches_tracked"];
    for o in &file.outputs {
        let state = o.kind == "buffer_mutation"
            && !o
                .target
                .as_deref()
                .is_some_and(|t| stat.iter().any(|s| t.ends_with(s)));
        if o.kind == "user" || state {
            if let Some(a) = &o.arg {
                read.insert(a.clone());
            }
        }
    }
    let mut used: HashMap<String, BTreeSet<usize>> = HashMap::new();
    for n in &file.nodes {
        if n.target.as_deref() == Some("operator.getitem") && read.contains(&n.name) {
            if let (Some(src), Some(i)) = (
                n.args
                    .first()
                    .and_then(|a| a.get("node"))
                    .and_then(Value::as_str),
                n.args.get(1).and_then(Value::as_u64),
            ) {
                used.entry(src.to_string()).or_default().insert(i as usize);
            }
        }
    }
    let state_names: HashMap<String, String> = file
        .inputs
        .iter()
        .filter(|i| i.kind == "parameter" || i.kind == "buffer")
        .filter_map(|i| Some((i.placeholder.clone(), i.target.clone()?)))
        .collect();
    let mut im = Importer {
        b: GraphBuilder::new("model"),
        vals: HashMap::new(),
        used,
        calls: vec![],
        notes: vec![],
        bn_prefixes: HashSet::new(),
        state_names: &state_names,
    };
    // inputs: activations in get_inputs() order, then parameters and buffers
    let placeholder_type = |name: &str| -> R<TensorType> {
        let n = by_name
            .get(name)
            .ok_or_else(|| json_err(format!("no placeholder node `{name}`")))?;
        match meta_types(&n.meta) {
            Ok(MetaTypes::One(t)) => Ok(t),
            Ok(MetaTypes::Many(_)) | Err(_) => Err(ExportError::Unsupported {
                message: format!("input `{name}` is not a tensor"),
                line: n.line,
            }),
        }
    };
    let mut acts: Vec<_> = file
        .inputs
        .iter()
        .filter(|i| i.kind == "activation")
        .collect();
    acts.sort_by_key(|i| i.index.unwrap_or(usize::MAX));
    for i in acts {
        let ty = placeholder_type(&i.placeholder)?;
        let v = im.b.input(i.placeholder.clone(), ty);
        im.vals.insert(i.placeholder.clone(), NodeVal::One(v));
    }
    let activation_names: HashSet<&str> = file
        .inputs
        .iter()
        .filter(|i| i.kind == "activation")
        .map(|i| i.placeholder.as_str())
        .collect();
    for i in file.inputs.iter().filter(|i| i.kind != "activation") {
        if i.attribute == Some(true) && !read.contains(&i.placeholder) {
            // a tensor attribute the forward neither reads nor changes: not an input
            continue;
        }
        let ty = placeholder_type(&i.placeholder)?;
        let name = i.target.clone().unwrap_or_else(|| i.placeholder.clone());
        if activation_names.contains(name.as_str()) {
            return Err(ExportError::Unsupported {
                message: format!(
                    "forward's argument `{name}` has the name of the module's tensor \
                     `self.{name}`, which forward also uses (drtc names the generated \
                     module's inputs after both)"
                ),
                line: None,
            });
        }
        let v = match i.kind.as_str() {
            "parameter" => im.b.param(name, ty),
            "buffer" => im.b.buffer(name, ty),
            "constant" => match i.value {
                Some(x) if ty.rank() == 0 => im.b.constant(x, ty.dtype),
                _ => {
                    return Err(ExportError::Unsupported {
                        message: format!(
                            "a tensor constant `{name}` of type {ty} made in forward (only one-element constants are read)"
                        ),
                        line: None,
                    })
                }
            },
            other => return Err(json_err(format!("unknown input kind `{other}`"))),
        };
        im.vals.insert(i.placeholder.clone(), NodeVal::One(v));
    }
    for n in &file.nodes {
        match n.op.as_str() {
            "placeholder" | "output" => {}
            "call_function" => im.node(n)?,
            other => {
                return Err(ExportError::Unsupported {
                    message: format!("an FX `{other}` node `{}`", n.name),
                    line: n.line,
                })
            }
        }
    }
    // buffer mutations: the statistics of a batch norm computed by the IR op are
    // updated by the stitcher; every other buffer or tensor attribute the forward changes
    // is a state update, its new value a graph output after the user outputs
    let attributes: HashSet<&str> = file
        .inputs
        .iter()
        .filter(|i| i.attribute == Some(true))
        .filter_map(|i| i.target.as_deref())
        .collect();
    let mut state_updates = vec![];
    let mut state_values = vec![];
    for o in &file.outputs {
        if o.kind == "user" {
            continue;
        }
        let target = o.target.clone().unwrap_or_default();
        let line = o
            .arg
            .as_deref()
            .and_then(|a| by_name.get(a))
            .and_then(|n| n.line);
        if o.kind != "buffer_mutation" {
            return Err(ExportError::Unsupported {
                message: format!(
                    "forward mutates `{target}` ({}); drtc's modules reproduce updates of \
                     the module's buffers and tensor attributes, not of their inputs",
                    o.kind
                ),
                line,
            });
        }
        let batch_stat = stat.iter().any(|s| {
            target
                .strip_suffix(s)
                .is_some_and(|p| im.bn_prefixes.contains(p))
        });
        if batch_stat {
            continue;
        }
        let value = o
            .arg
            .as_deref()
            .and_then(|a| im.vals.get(a))
            .and_then(|v| match v {
                NodeVal::One(v) => Some(*v),
                NodeVal::Many(_) => None,
            })
            .ok_or_else(|| ExportError::Unsupported {
                message: format!(
                    "the new value of `{target}` is not a tensor drtc computes (a result \
                     the IR form of its op leaves out)"
                ),
                line,
            })?;
        state_updates.push(StateUpdate {
            attribute: attributes.contains(target.as_str()),
            name: target,
            assigned: o.assigned == Some(true),
            line,
        });
        state_values.push(value);
    }
    let mut outputs = vec![];
    for o in file.outputs.iter().filter(|o| o.kind == "user") {
        let a = o.arg.clone().ok_or_else(|| ExportError::Unsupported {
            message: "an output that is not a tensor (a Python number or None)".into(),
            line: None,
        })?;
        match im.vals.get(&a) {
            Some(NodeVal::One(v)) => outputs.push(*v),
            _ => {
                return Err(ExportError::Unsupported {
                    message: format!("output `{a}` is not a tensor"),
                    line: by_name.get(a.as_str()).and_then(|n| n.line),
                })
            }
        }
    }
    if outputs.is_empty() {
        return Err(ExportError::Unsupported {
            message: "the program returns no tensor".into(),
            line: None,
        });
    }
    outputs.extend(state_values);
    let graph = im.b.finish(outputs);
    let errors: Vec<String> = drtc_ir::verify(&graph)
        .into_iter()
        .filter(|e| e.is_error())
        .map(|e| e.to_string())
        .collect();
    if !errors.is_empty() {
        return Err(json_err(format!(
            "the imported graph does not verify: {}",
            errors.join("; ")
        )));
    }
    Ok(Imported {
        graph,
        format,
        library_calls: im.calls,
        notes: im.notes,
        torch: file.torch,
        state_updates,
    })
}
