//! Element types and PyTorch's type-promotion rules.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The element type of a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    Bool,
    I32,
    I64,
    F16,
    BF16,
    F32,
    F64,
}

/// The coarse kind of a dtype, used by promotion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DTypeKind {
    Bool,
    Int,
    Float,
}

impl DType {
    pub const ALL: [DType; 7] = [
        DType::Bool,
        DType::I32,
        DType::I64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
    ];

    /// The short name used by the text format (`f32`).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    /// The name PyTorch gives it, without the `torch.` prefix (`float32`).
    pub fn torch_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
        }
    }

    /// Parses either the short name or PyTorch's name (with aliases such as `float`, `long`).
    pub fn from_name(s: &str) -> Option<DType> {
        Some(match s {
            "bool" => DType::Bool,
            "i32" | "int32" | "int" => DType::I32,
            "i64" | "int64" | "long" => DType::I64,
            "f16" | "float16" | "half" => DType::F16,
            "bf16" | "bfloat16" => DType::BF16,
            "f32" | "float32" | "float" => DType::F32,
            "f64" | "float64" | "double" => DType::F64,
            _ => return None,
        })
    }

    pub fn kind(self) -> DTypeKind {
        match self {
            DType::Bool => DTypeKind::Bool,
            DType::I32 | DType::I64 => DTypeKind::Int,
            _ => DTypeKind::Float,
        }
    }

    pub fn is_float(self) -> bool {
        self.kind() == DTypeKind::Float
    }

    /// Size of one element in bytes.
    pub fn size_bytes(self) -> u64 {
        match self {
            DType::Bool => 1,
            DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::F32 => 4,
            DType::I64 | DType::F64 => 8,
        }
    }

    /// The dtype a float-only op (sigmoid, mean, true division) returns for this input:
    /// floats keep theirs, integers and bools become the default float, f32.
    pub fn to_float(self) -> DType {
        if self.is_float() {
            self
        } else {
            DType::F32
        }
    }

    /// The dtype sum/prod/cumsum give: integers and bools accumulate in i64.
    pub fn accumulate(self) -> DType {
        if self.is_float() {
            self
        } else {
            DType::I64
        }
    }
}

/// `torch.promote_types` for two dtypes of tensors of the same "priority".
pub fn promote_types(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    match (a.kind(), b.kind()) {
        (DTypeKind::Bool, _) => b,
        (_, DTypeKind::Bool) => a,
        (DTypeKind::Int, DTypeKind::Float) => b,
        (DTypeKind::Float, DTypeKind::Int) => a,
        (DTypeKind::Int, DTypeKind::Int) => I64,
        (DTypeKind::Float, DTypeKind::Float) => match (a, b) {
            (F64, _) | (_, F64) => F64,
            (F32, _) | (_, F32) => F32,
            // f16 with bf16
            _ => F32,
        },
    }
}

/// PyTorch's result type for a binary op on tensors, where a zero-dimensional operand only
/// decides the result when it is of a higher kind (bool < int < float) than the
/// dimensioned one, and then it gives its own dtype: `i64[3] + tensor(1.5, f64)` is f64.
/// (Python scalars are wrapped as zero-dimensional tensors of the default dtype, f32 or
/// i64, by the frontends, which gives PyTorch's rule for them too.)
pub fn result_type(a: DType, a_rank0: bool, b: DType, b_rank0: bool) -> DType {
    if a_rank0 == b_rank0 {
        return promote_types(a, b);
    }
    let (dim, zero) = if a_rank0 { (b, a) } else { (a, b) };
    if zero.kind() > dim.kind() {
        zero
    } else {
        dim
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in DType::ALL {
            assert_eq!(DType::from_name(d.name()), Some(d));
            assert_eq!(DType::from_name(d.torch_name()), Some(d));
        }
    }

    #[test]
    fn promotion_matches_torch() {
        // torch.promote_types values
        assert_eq!(promote_types(DType::F16, DType::BF16), DType::F32);
        assert_eq!(promote_types(DType::I32, DType::F16), DType::F16);
        assert_eq!(promote_types(DType::I32, DType::I64), DType::I64);
        assert_eq!(promote_types(DType::Bool, DType::I32), DType::I32);
        // torch.ones(3, dtype=torch.float16) + torch.tensor(1.0, dtype=torch.float64) -> float16
        assert_eq!(result_type(DType::F16, false, DType::F64, true), DType::F16);
        // torch.ones(3, dtype=torch.int32) + torch.tensor(1.5) -> float32
        assert_eq!(result_type(DType::I32, false, DType::F32, true), DType::F32);
        // torch.ones(3, dtype=torch.int64) + torch.tensor(1.5, dtype=torch.float64) -> float64
        assert_eq!(result_type(DType::I64, false, DType::F64, true), DType::F64);
        // torch.ones(3, dtype=torch.bool) + torch.tensor(1, dtype=torch.int32) -> int32
        assert_eq!(
            result_type(DType::Bool, false, DType::I32, true),
            DType::I32
        );
        // torch.tensor(1, dtype=torch.int32) + torch.tensor(1.0, dtype=torch.float16) -> float16
        assert_eq!(result_type(DType::I32, true, DType::F16, true), DType::F16);
    }
}
