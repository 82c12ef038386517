//! `--input-type DTYPE[DIMS]`: compiling a program for other activation types than its
//! `get_inputs()` gives (what a generated module's guard asks for when it is called with
//! other shapes or dtypes). The frontend binds the given types; the reference that
//! verification runs gets a `get_inputs()` that returns inputs of those types, resampled
//! from the values the original `get_inputs()` draws (so value domains such as positive
//! numbers or index ranges are kept).

use drtc_ir::{DType, TensorType};

/// One `--input-type`: the type of one `get_inputs()` item, e.g. `f32[4, 3, 8, 8]`.
#[derive(Clone, Debug, PartialEq)]
pub struct InputType(pub TensorType);

impl std::str::FromStr for InputType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let (name, rest) = s
            .split_once('[')
            .ok_or_else(|| format!("`{s}` is not DTYPE[DIMS] (e.g. f32[4, 3, 8, 8])"))?;
        let dtype = DType::from_name(name.trim()).ok_or_else(|| {
            format!("`{name}` is not a dtype (bool, i32, i64, f16, bf16, f32, f64)")
        })?;
        let dims = rest
            .strip_suffix(']')
            .ok_or_else(|| format!("`{s}` does not end with `]`"))?;
        let mut shape = vec![];
        for d in dims.split(',').map(str::trim).filter(|d| !d.is_empty()) {
            let n: i64 = d
                .parse()
                .map_err(|_| format!("`{d}` in `{s}` is not a dimension"))?;
            if n < 0 {
                return Err(format!("negative dimension {n} in `{s}`"));
            }
            shape.push(n);
        }
        Ok(InputType(TensorType::new(dtype, shape)))
    }
}

/// Python appended to a reference program so that its `get_inputs()` returns inputs of
/// `types`: each tensor is resampled (with the same random generator) from the values of
/// the original input, then cast; Python numbers are kept.
pub fn resampled_inputs_appendix(types: &[InputType]) -> String {
    let mut s = String::from(
        "\n\n# ---- appended by drtc compile --input-type: get_inputs() at the compiled types ----\n\
import torch as _drtc_torch\n\n\
_drtc_original_get_inputs = get_inputs\n\
_DRTC_INPUT_TYPES = [\n",
    );
    for InputType(t) in types {
        let dims: Vec<String> = t.shape.iter().map(i64::to_string).collect();
        s.push_str(&format!(
            "    ([{}], _drtc_torch.{}),\n",
            dims.join(", "),
            t.dtype.torch_name()
        ));
    }
    s.push_str(
        "]\n\n\n\
def _drtc_resample(value, shape, dtype):\n    \
if not isinstance(value, _drtc_torch.Tensor):\n        \
return value\n    \
flat = value.reshape(-1)\n    \
if flat.numel() == 0:\n        \
return _drtc_torch.zeros(shape, dtype=dtype)\n    \
index = _drtc_torch.randint(0, flat.numel(), shape)\n    \
return flat[index].to(dtype)\n\n\n\
def get_inputs():\n    \
values = list(_drtc_original_get_inputs())\n    \
return [_drtc_resample(v, s, d) for v, (s, d) in zip(values, _DRTC_INPUT_TYPES)]\n",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_types() {
        let t: InputType = "f32[4, 3, 8, 8]".parse().unwrap();
        assert_eq!(t.0, TensorType::new(DType::F32, vec![4, 3, 8, 8]));
        let t: InputType = "float64[]".parse().unwrap();
        assert_eq!(t.0, TensorType::scalar(DType::F64));
        assert!("f32".parse::<InputType>().is_err());
        assert!("q8[2]".parse::<InputType>().is_err());
        assert!("f32[2, x]".parse::<InputType>().is_err());
        assert!("f32[-2]".parse::<InputType>().is_err());
    }
}
