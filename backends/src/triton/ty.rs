//! Element types and literals in generated Triton code.

use drtc_ir::DType;

/// The type values of `dtype` are computed in inside a kernel: halves widen to f32.
pub fn compute_ty(d: DType) -> &'static str {
    match d {
        DType::F16 | DType::BF16 | DType::F32 => "tl.float32",
        DType::F64 => "tl.float64",
        DType::I32 => "tl.int32",
        DType::I64 => "tl.int64",
        DType::Bool => "tl.int1",
    }
}

/// The Triton element type of a stored `dtype`.
pub fn storage_ty(d: DType) -> &'static str {
    match d {
        DType::F16 => "tl.float16",
        DType::BF16 => "tl.bfloat16",
        DType::F32 => "tl.float32",
        DType::F64 => "tl.float64",
        DType::I32 => "tl.int32",
        DType::I64 => "tl.int64",
        DType::Bool => "tl.int1",
    }
}

/// A Python float literal that reads back exactly.
pub fn float_lit(x: f64) -> String {
    if x.is_nan() {
        "float('nan')".into()
    } else if x.is_infinite() {
        if x > 0.0 {
            "float('inf')"
        } else {
            "float('-inf')"
        }
        .into()
    } else {
        format!("{x:?}")
    }
}

/// A literal of `dtype` for a numeric value.
pub fn lit(x: f64, d: DType) -> String {
    match d {
        DType::Bool => if x != 0.0 { "True" } else { "False" }.into(),
        DType::I32 | DType::I64 => format!("{}", x as i64),
        _ => float_lit(x),
    }
}

/// Smallest power of two >= n (at least 1).
pub fn next_pow2(n: u64) -> u64 {
    n.max(1).next_power_of_two()
}
