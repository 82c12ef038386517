//! The JSON the export helper writes (`helper.py`), as serde types.

use serde::Deserialize;
use std::collections::BTreeMap;

/// One export: a graph, or the reason there is none.
#[derive(Debug, Clone, Deserialize)]
pub struct ExportFile {
    pub ok: bool,
    #[serde(default)]
    pub error: Option<HelperError>,
    /// `kernelbench` or `seed`.
    #[serde(default)]
    pub format: Option<String>,
    /// The torch version that exported it.
    #[serde(default)]
    pub torch: Option<String>,
    #[serde(default)]
    pub inputs: Vec<InputSpec>,
    #[serde(default)]
    pub nodes: Vec<NodeJson>,
    #[serde(default)]
    pub outputs: Vec<OutputSpec>,
}

/// The helper's error: `program` (the program failed to run) or `export`.
#[derive(Debug, Clone, Deserialize)]
pub struct HelperError {
    pub kind: String,
    pub message: String,
    #[serde(default)]
    pub line: Option<usize>,
}

/// One graph input: a placeholder and what it is.
#[derive(Debug, Clone, Deserialize)]
pub struct InputSpec {
    pub placeholder: String,
    /// `activation`, `parameter`, `buffer` or `constant`.
    pub kind: String,
    /// The state_dict name of a parameter or buffer (the constant's name for constants).
    #[serde(default)]
    pub target: Option<String>,
    /// The position in `get_inputs()` of an activation.
    #[serde(default)]
    pub index: Option<usize>,
    /// Whether a buffer is in the state_dict.
    #[serde(default)]
    pub persistent: Option<bool>,
    /// Whether a buffer is a plain tensor attribute of the model (neither parameter nor
    /// buffer there) that the helper registered as a buffer for export.
    #[serde(default)]
    pub attribute: Option<bool>,
    /// The value of a one-element constant tensor.
    #[serde(default)]
    pub value: Option<f64>,
}

/// One FX node.
#[derive(Debug, Clone, Deserialize)]
pub struct NodeJson {
    pub name: String,
    /// `placeholder`, `call_function`, `output`, `get_attr`.
    pub op: String,
    #[serde(default)]
    pub target: Option<String>,
    #[serde(default)]
    pub args: Vec<serde_json::Value>,
    #[serde(default)]
    pub kwargs: BTreeMap<String, serde_json::Value>,
    /// The result's metadata: a [`TensorMeta`] object, a list of them, or a scalar.
    #[serde(default)]
    pub meta: Option<serde_json::Value>,
    /// The line of the program the node came from (its stack trace's innermost frame in
    /// the program's file).
    #[serde(default)]
    pub line: Option<usize>,
}

/// A tensor result's metadata.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct TensorMeta {
    pub shape: Vec<i64>,
    pub dtype: String,
    pub stride: Vec<i64>,
}

/// One graph output.
#[derive(Debug, Clone, Deserialize)]
pub struct OutputSpec {
    /// `user`, `buffer_mutation`, `input_mutation`.
    pub kind: String,
    /// The mutated buffer or input.
    #[serde(default)]
    pub target: Option<String>,
    /// The node whose value it is.
    #[serde(default)]
    pub arg: Option<String>,
    /// A buffer mutation by assignment (`self.x = ...`) rather than in place.
    #[serde(default)]
    pub assigned: Option<bool>,
}
