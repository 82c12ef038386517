//! The `--signature` of a lowered program: input, parameter and output types in the JSON
//! shape the PyTorch reference helper prints, so the two can be compared exactly.

use drtc_ir::{Graph, InputKind, TensorType};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

/// A tensor's shape and PyTorch dtype name (`float32`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TensorSig {
    pub shape: Vec<i64>,
    pub dtype: &'static str,
}

impl From<&TensorType> for TensorSig {
    fn from(t: &TensorType) -> Self {
        TensorSig {
            shape: t.shape.clone(),
            dtype: t.dtype.torch_name(),
        }
    }
}

/// Inputs (activations in order), parameters and buffers (by state_dict name, in
/// state_dict order) and outputs of a program.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Signature {
    pub inputs: Vec<TensorSig>,
    #[serde(serialize_with = "ordered_map")]
    pub params: Vec<(String, TensorSig)>,
    pub outputs: Vec<TensorSig>,
}

fn ordered_map<S: Serializer>(items: &[(String, TensorSig)], s: S) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(Some(items.len()))?;
    for (k, v) in items {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

impl Signature {
    pub fn of(graph: &Graph) -> Signature {
        let mut inputs = vec![];
        let mut params = vec![];
        for &v in graph.inputs() {
            let value = graph.value(v);
            match &value.def {
                drtc_ir::ValueDef::Input {
                    kind: InputKind::Activation,
                    ..
                } => inputs.push(TensorSig::from(&value.ty)),
                _ => params.push((
                    value.name.clone().unwrap_or_default(),
                    TensorSig::from(&value.ty),
                )),
            }
        }
        let outputs = graph
            .outputs()
            .iter()
            .map(|&v| TensorSig::from(graph.ty(v)))
            .collect();
        Signature {
            inputs,
            params,
            outputs,
        }
    }

    /// One line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}
