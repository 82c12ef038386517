//! Inference tests for every op; values for the tricky ones are written down from
//! PyTorch's documentation formulas.

use super::*;
use crate::attr::AttrKind;
use crate::DType;
use proptest::prelude::*;

// ---------------------------------------------------------------- robustness

const INT_POOL: &[i64] = &[
    0,
    1,
    -1,
    2,
    3,
    -2,
    4,
    7,
    1 << 40,
    -(1 << 40),
    i64::MAX,
    i64::MIN,
];
const DIM_POOL: &[i64] = &[0, 1, 2, 3, 4, 5, 1 << 31, 1 << 40, i64::MAX, -1];
const FLOAT_POOL: &[f64] = &[0.0, 1.0, -1.0, 0.5, 2.0, f64::NAN, f64::INFINITY, 1e300];
const STR_POOL: &[&str] = &[
    "none",
    "mean",
    "sum",
    "batchmean",
    "tanh",
    "ij,jk->ik",
    "bij,bjk->bik",
    "i,i",
    "ii->i",
    "a->b",
    "",
    "...,i",
    "ij",
    "ij->jj",
    "é->é",
    "i,,j",
];

fn pick<T: Copy>(pool: &[T], r: u64) -> T {
    pool[(r % pool.len() as u64) as usize]
}

/// An arbitrary value of `kind` (or of a wrong kind, sometimes), from `r`.
fn arbitrary_attr(kind: AttrKind, r: u64) -> Attr {
    let s = r >> 4;
    match (r % 16, kind) {
        (0, _) => Attr::None,
        (1, _) => Attr::Str(pick(STR_POOL, s).into()),
        (2, _) => Attr::Int(pick(INT_POOL, s)),
        (_, AttrKind::Bool) => Attr::Bool(s.is_multiple_of(2)),
        (_, AttrKind::Int | AttrKind::OptInt) => Attr::Int(pick(INT_POOL, s)),
        (_, AttrKind::Float | AttrKind::OptFloat) => Attr::Float(pick(FLOAT_POOL, s)),
        (_, AttrKind::Str) => Attr::Str(pick(STR_POOL, s).into()),
        (_, AttrKind::Ints | AttrKind::OptInts) => {
            let len = s % 5;
            Attr::Ints(
                (0..len)
                    .map(|i| pick(INT_POOL, s / 5 + i * 3 + (s >> 20)))
                    .collect(),
            )
        }
        (_, AttrKind::DType) => Attr::DType(pick(&DType::ALL, s)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// Inference and FLOP counting return (an error or types) on any input types and
    /// attributes, for every op; they never panic or overflow.
    #[test]
    fn inference_never_panics(
        inputs in prop::collection::vec((any::<u8>(), prop::collection::vec(any::<u64>(), 0..6)), 5),
        count in any::<u8>(),
        attrs in prop::collection::vec((any::<u8>(), any::<u64>()), 8),
    ) {
        let types: Vec<TensorType> = inputs
            .iter()
            .map(|(d, dims)| {
                // mostly small dims, sometimes extreme ones
                let shape = dims
                    .iter()
                    .map(|&r| if r.is_multiple_of(8) { pick(DIM_POOL, r >> 3) } else { (r % 5) as i64 })
                    .collect::<Vec<_>>();
                TensorType::new(pick(&DType::ALL, *d as u64), shape)
            })
            .collect();
        for &op in Op::ALL {
            let mut raw = Attrs::new();
            for (def, &(present, r)) in op.def().attrs.iter().zip(&attrs) {
                if present % 4 != 0 {
                    raw.insert(def.name.to_string(), arbitrary_attr(def.kind, r));
                }
            }
            // usually an accepted number of inputs, sometimes any
            let n = match (count % 4, op.def().arity) {
                (0, _) => count as usize / 4 % 6,
                (_, Arity::Exact(k)) => k,
                (c, Arity::Range(lo, hi)) => (lo + c as usize).min(hi),
                (c, Arity::AtLeast(lo)) => lo + c as usize,
            }
            .min(types.len());
            let ins: Vec<&TensorType> = types[..n].iter().collect();
            let attrs = op.normalize_attrs(&raw).unwrap_or(raw);
            let result = op.infer(&ins, &attrs);
            if op.def().arity.accepts(ins.len()) {
                let outs = result.unwrap_or_else(|_| types.clone());
                let _ = op.flops(&ins, &outs, &attrs);
            }
        }
    }
}

// ---------------------------------------------------------------- the case table

/// One inference case: op name, input types separated by `;`, attributes in the text
/// format, and the expected result types, or `!` followed by part of the expected error.
type Case = (&'static str, &'static str, &'static str, &'static str);

#[rustfmt::skip]
const CASES: &[Case] = &[
    // ---- creation and casts
    ("full", "", "shape = [2, 3], value = 1.5", "f32[2, 3]"),
    ("full", "", "shape = [], value = 1, dtype = i64", "i64[]"),
    ("full", "", "shape = [-1], value = 0.0", "!negative dimension"),
    ("full", "", "value = 0.0", "!missing required attribute `shape`"),
    ("arange", "", "end = 5", "i64[5]"),
    ("arange", "", "end = 3, dtype = f32", "f32[3]"),
    ("arange", "", "end = -2", "!negative"),
    ("cast", "f32[2]", "dtype = bf16", "bf16[2]"),
    ("cast", "f32[2]", "", "!missing required attribute `dtype`"),
    ("dropout", "f32[4, 4]", "p = 0.5, training = true", "f32[4, 4]"),
    ("dropout", "f32[4]", "p = 1.5", "!probability"),

    // ---- broadcasting: shapes align at the trailing dim; each pair is equal or has a 1
    ("add", "f32[4, 1, 3]; f32[5, 1]", "", "f32[4, 5, 3]"),
    ("add", "f32[3]; f32[4]", "", "!do not broadcast"),
    ("add", "f32[2, 3]; f32[3, 3]", "", "!do not broadcast"),
    ("add", "f32[0, 3]; f32[1, 3]", "", "f32[0, 3]"),
    // a 0-dim operand decides the dtype only when of a higher kind (bool < int < float), and
    // then gives its own: int32 + tensor(1.5) -> float32, int64 + tensor(1.5, f64) -> float64,
    // but float16 + tensor(1.0, f64) -> float16
    ("add", "i32[3]; f32[]", "", "f32[3]"),
    ("add", "i64[3]; f64[]", "", "f64[3]"),
    ("add", "bool[3]; i32[]", "", "i32[3]"),
    ("add", "f16[3]; f64[]", "", "f16[3]"),
    ("add", "i32[3]; i64[]", "", "i32[3]"),
    ("add", "i32[]; i64[]", "", "i64[]"),
    ("sub", "f32[2, 3]; f32[3]", "", "f32[2, 3]"),
    ("sub", "bool[2]; f32[2]", "", "!bool"),
    ("mul", "bool[2]; i32[2]", "", "i32[2]"),
    // true division of integers gives the default float dtype
    ("div", "i64[2]; i64[2]", "", "f32[2]"),
    ("div", "f64[2]; i64[]", "", "f64[2]"),
    ("maximum", "f16[2]; bf16[2]", "", "f32[2]"),
    ("minimum", "i32[1, 2]; i64[3, 1]", "", "i64[3, 2]"),
    ("pow", "f32[2]; f32[]", "", "f32[2]"),
    ("pow", "bool[2]; f32[]", "", "f32[2]"),
    ("pow", "bool[2]; bool[2]", "", "!two bool"),
    ("lerp", "f32[2, 1]; f32[3]; f32[]", "", "f32[2, 3]"),
    ("lerp", "f16[2]; f32[2]; f32[]", "", "!one dtype"),
    ("lerp", "f16[2]; f16[2]; f32[]", "", "f16[2]"),
    ("lerp", "f16[2]; f16[2]; f32[2]", "", "!one dtype"),
    ("eq", "f32[2, 3]; i64[3]", "", "bool[2, 3]"),
    ("ne", "f32[2]; f32[2]", "", "bool[2]"),
    ("lt", "f32[2, 1]; f32[1, 2]", "", "bool[2, 2]"),
    ("le", "i32[2]; f32[]", "", "bool[2]"),
    ("gt", "f32[2]; f32[3]", "", "!do not broadcast"),
    ("gt", "i64[2, 1]; f32[2]", "", "bool[2, 2]"),
    ("ge", "f32[]; f32[]", "", "bool[]"),
    ("where", "bool[2, 1]; f32[3]; f32[]", "", "f32[2, 3]"),
    ("where", "bool[2, 1]; i64[3]; f64[]", "", "f64[2, 3]"),
    ("where", "bool[2, 1]; f16[3]; f32[]", "", "f16[2, 3]"),
    ("where", "f32[2]; f32[2]; f32[2]", "", "!must be bool"),

    // ---- pointwise unary
    ("relu", "i64[2, 3]", "", "i64[2, 3]"),
    ("relu", "bool[2]", "", "!bool"),
    ("leaky_relu", "f32[2, 3]", "negative_slope = 0.2", "f32[2, 3]"),
    ("sigmoid", "i64[4]", "", "f32[4]"),
    ("tanh", "f16[4]", "", "f16[4]"),
    ("silu", "f32[4]", "", "f32[4]"),
    // activation kernels exist for floats only, unlike torch.sigmoid's integer promotion
    ("silu", "i64[4]", "", "!floating-point"),
    ("gelu", "bf16[4]", "approximate = \"tanh\"", "bf16[4]"),
    ("gelu", "f32[4]", "approximate = 1", "!must be a string"),
    ("selu", "f32[4]", "", "f32[4]"),
    ("hardsigmoid", "f32[4]", "", "f32[4]"),
    ("hardswish", "f32[4]", "", "f32[4]"),
    ("softplus", "f32[4]", "beta = 2, threshold = 10", "f32[4]"),
    ("softsign", "i32[4]", "", "f32[4]"),
    ("softsign", "bool[4]", "", "!bool"),
    ("elu", "f64[4]", "alpha = 0.5", "f64[4]"),
    ("hardtanh", "f32[4]", "min_val = -2.0, max_val = 2.0", "f32[4]"),
    ("hardtanh", "i64[4]", "", "i64[4]"),
    ("hardtanh", "bool[4]", "", "!bool"),
    ("clamp", "f32[4]", "min = 0.0", "f32[4]"),
    // float bounds lift integer inputs to the default float dtype
    ("clamp", "i64[4]", "max = 6.0", "f32[4]"),
    ("clamp", "f32[4]", "", "!at least one"),
    ("clamp", "f32[4]", "min = \"zero\"", "!must be a number or none"),
    ("logsigmoid", "f32[4]", "", "f32[4]"),
    ("mish", "f32[4]", "", "f32[4]"),
    ("abs", "i32[4]", "", "i32[4]"),
    ("neg", "f32[4]", "", "f32[4]"),
    ("sign", "i64[4]", "", "i64[4]"),
    ("cos", "i32[4]", "", "f32[4]"),
    ("sin", "f32[]", "", "f32[]"),
    ("exp", "f32[4]", "", "f32[4]"),
    ("exp2", "i64[4]", "", "f32[4]"),
    ("log", "f64[4]", "", "f64[4]"),
    ("sqrt", "i32[4]", "", "f32[4]"),
    ("rsqrt", "f32[4]", "", "f32[4]"),
    ("erf", "f32[4]", "", "f32[4]"),
    ("reciprocal", "i64[4]", "", "f32[4]"),
    ("relu", "f32[4]", "alpha = 1.0", "!unknown attribute `alpha`"),

    // ---- reductions: listed dims are removed (kept as 1 with keepdim); none = all dims
    ("sum", "f32[2, 3, 4]", "dim = [0, 2], keepdim = true", "f32[1, 3, 1]"),
    ("sum", "f32[2, 3, 4]", "dim = [-1, 0]", "f32[3]"),
    ("sum", "i32[2, 3]", "", "i64[]"),
    ("sum", "bool[2, 3]", "dim = [1]", "i64[2]"),
    ("sum", "f32[2, 3]", "keepdim = true", "f32[1, 1]"),
    ("sum", "f32[2, 3]", "dim = [1, -1]", "!appears twice"),
    ("sum", "f32[2, 3]", "dim = [2]", "!out of range"),
    ("sum", "f32[2, 3]", "dim = [-3]", "!out of range"),
    ("mean", "f32[2, 3, 4]", "dim = [1], keepdim = true", "f32[2, 1, 4]"),
    ("mean", "i64[2, 3]", "", "!floating-point"),
    ("prod", "i32[2, 3]", "dim = [1]", "i64[2]"),
    ("max", "f32[2, 3]", "dim = [1], keepdim = true", "f32[2, 1]"),
    ("min", "i32[2, 3]", "", "i32[]"),
    ("argmax", "f32[2, 3]", "dim = 1", "i64[2]"),
    ("argmax", "f32[2, 3]", "keepdim = true", "i64[1, 1]"),
    ("argmin", "f32[2, 3]", "", "i64[]"),
    ("argmin", "bool[2, 3]", "", "!bool"),
    ("argmin", "f32[2, 3]", "dim = [1]", "!must be an int or none"),
    ("var", "f32[4, 5]", "dim = [0], correction = 0", "f32[5]"),
    ("std", "f32[4, 5]", "", "f32[]"),
    ("norm", "f32[3, 4]", "p = 1.0, dim = [1], keepdim = true", "f32[3, 1]"),
    ("logsumexp", "f32[3, 4]", "dim = [0, 1]", "f32[]"),
    ("logsumexp", "i64[3, 4]", "dim = [0], keepdim = true", "f32[1, 4]"),
    ("logsumexp", "f32[3, 4]", "", "!missing required attribute `dim`"),
    ("softmax", "f32[2, 3]", "dim = -1", "f32[2, 3]"),
    ("softmax", "f32[2, 3]", "dim = 2", "!out of range"),
    ("softmax", "i64[2, 3]", "dim = 1", "!floating-point"),
    ("log_softmax", "f16[2, 3]", "dim = 0", "f16[2, 3]"),
    ("cumsum", "i32[2, 3]", "dim = 1", "i64[2, 3]"),
    ("cumprod", "f16[4]", "dim = 0", "f16[4]"),
    ("cummax", "f32[2, 3]", "dim = 0", "f32[2, 3]"),
    ("cummin", "i64[5]", "dim = -1", "i64[5]"),

    // ---- losses: "none" keeps the elementwise shape, "mean"/"sum" give a scalar
    ("mse_loss", "f32[4, 5]; f32[4, 5]", "", "f32[]"),
    ("mse_loss", "f32[4, 5]; f32[4, 5]", "reduction = \"none\"", "f32[4, 5]"),
    ("mse_loss", "f32[4, 5]; f32[4, 5]", "reduction = \"avg\"", "!reduction must be"),
    ("mse_loss", "f32[4, 5]; f32[4, 5]", "reduction = \"batchmean\"", "!reduction must be"),
    ("mse_loss", "f16[4]; f32[4]", "", "f32[]"),
    ("smooth_l1_loss", "f32[8]; f32[8]", "beta = 0.5, reduction = \"sum\"", "f32[]"),
    ("kl_div", "f32[4, 5]; f32[4, 5]", "reduction = \"batchmean\"", "f32[]"),
    // input [N, C, d1...] with class-index target [N, d1...]; loss per element [N, d1...]
    ("cross_entropy", "f32[8, 10]; i64[8]", "", "f32[]"),
    ("cross_entropy", "f32[8, 10, 4]; i64[8, 4]", "reduction = \"none\"", "f32[8, 4]"),
    ("cross_entropy", "f32[10]; i64[]", "reduction = \"none\"", "f32[]"),
    ("cross_entropy", "f32[8, 10]; f32[8, 10]", "reduction = \"none\"", "f32[8]"),
    ("cross_entropy", "f32[8, 10]; i64[10]", "", "!target must have shape [8]"),
    ("cross_entropy", "f32[8, 10]; i32[8]", "", "!must be i64"),
    ("cross_entropy", "f32[8, 10]; f64[8, 10]", "", "f64[]"),
    ("triplet_margin_loss", "f32[8, 16]; f32[8, 16]; f32[8, 16]", "", "f32[]"),
    ("triplet_margin_loss", "f32[8, 16]; f32[8, 16]; f32[8, 16]", "margin = 2.0, reduction = \"none\"", "f32[8]"),
    ("triplet_margin_loss", "f32[8, 16]; f32[1, 16]; f32[16]", "", "!equal rank"),

    // ---- matmul: a 1-D first operand gets a leading 1 and a 1-D second one a trailing 1,
    // both removed afterwards; batch dims broadcast
    ("matmul", "f32[3]; f32[3]", "", "f32[]"),
    ("matmul", "f32[3]; f32[3, 4]", "", "f32[4]"),
    ("matmul", "f32[2, 3]; f32[3]", "", "f32[2]"),
    ("matmul", "f32[7, 2, 3]; f32[3]", "", "f32[7, 2]"),
    ("matmul", "f32[3]; f32[7, 3, 4]", "", "f32[7, 4]"),
    // [j, 1, n, m] @ [k, m, p] -> [j, k, n, p]
    ("matmul", "f32[5, 1, 2, 3]; f32[4, 3, 6]", "", "f32[5, 4, 2, 6]"),
    // contractions and convolutions do not promote dtypes
    ("matmul", "f16[2, 3]; f32[3, 4]", "", "!one dtype"),
    ("matmul", "f32[2, 3]; f32[4, 5]", "", "!inner dimensions"),
    ("matmul", "f32[2, 2, 3]; f32[3, 3, 4]", "", "!do not broadcast"),
    ("matmul", "f32[]; f32[3]", "", "!rank >= 1"),
    ("bmm", "f32[4, 2, 3]; f32[4, 3, 5]", "", "f32[4, 2, 5]"),
    ("bmm", "f32[4, 2, 3]; f32[1, 3, 5]", "", "!do not match"),
    ("bmm", "f32[2, 3]; f32[3, 5]", "", "!rank-3"),
    // linear: x [..., in] @ weight[out, in].T + bias[out]
    ("linear", "f32[8, 4, 16]; f32[32, 16]; f32[32]", "", "f32[8, 4, 32]"),
    ("linear", "f32[16]; f32[32, 16]", "", "f32[32]"),
    ("linear", "f32[8, 16]; f32[32, 15]", "", "!do not match"),
    ("linear", "f32[8, 16]; f32[32, 16]; f32[16]", "", "!bias must have shape [32]"),
    // einsum: explicit output, or (implicit) the subscripts seen once, in alphabetical order
    ("einsum", "f32[2, 3, 4]; f32[2, 4, 5]", "equation = \"bij,bjk->bik\"", "f32[2, 3, 5]"),
    ("einsum", "f32[2, 3]; f32[3, 4]", "equation = \"ij,jk\"", "f32[2, 4]"),
    ("einsum", "f32[2, 3]", "equation = \"ba\"", "f32[3, 2]"),
    ("einsum", "f32[3, 3]", "equation = \"ii->i\"", "f32[3]"),
    ("einsum", "f32[2, 3]", "equation = \"ij->\"", "f32[]"),
    ("einsum", "f32[3]; f32[4]", "equation = \"i,j->ij\"", "f32[3, 4]"),
    ("einsum", "f32[2, 3]; f32[4, 5]", "equation = \"ij,jk->ik\"", "!has sizes"),
    ("einsum", "f32[2, 3]", "equation = \"ijk->i\"", "!does not match rank"),
    ("einsum", "f32[2, 3]", "equation = \"ij->k\"", "!not in any input"),
    // attention: q [..., L, E], k [..., S, E], v [..., S, Ev] -> [..., L, Ev]
    ("scaled_dot_product_attention", "f32[2, 8, 16, 64]; f32[2, 8, 32, 64]; f32[2, 8, 32, 48]", "", "f32[2, 8, 16, 48]"),
    ("scaled_dot_product_attention", "f32[2, 16, 64]; f32[2, 32, 64]; f32[2, 32, 64]; bool[16, 32]", "is_causal = false", "f32[2, 16, 64]"),
    ("scaled_dot_product_attention", "f32[2, 16, 64]; f32[2, 32, 32]; f32[2, 32, 64]", "", "!do not match"),

    // ---- convolution (PyTorch Conv docs):
    // out = floor((in + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1)
    // Conv1d(16, 33, 3, stride=2) on [20, 16, 50]: (50 - 2 - 1) / 2 + 1 = 24
    ("conv1d", "f32[20, 16, 50]; f32[33, 16, 3]", "stride = [2]", "f32[20, 33, 24]"),
    // Conv2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1)) on [20, 16, 50, 100]:
    // H = (50 + 8 - 3 * 2 - 1) / 2 + 1 = 26, W = (100 + 4 - 4 - 1) / 1 + 1 = 100
    ("conv2d", "f32[20, 16, 50, 100]; f32[33, 16, 3, 5]", "stride = [2, 1], padding = [4, 2], dilation = [3, 1]", "f32[20, 33, 26, 100]"),
    // groups: weight [Cout, Cin / groups, kh, kw]
    ("conv2d", "f32[2, 8, 10, 10]; f32[16, 2, 3, 3]; f32[16]", "groups = 4", "f32[2, 16, 8, 8]"),
    ("conv2d", "f32[2, 8, 10, 10]; f32[8, 1, 3, 3]", "padding = [1], groups = 8", "f32[2, 8, 10, 10]"),
    ("conv2d", "f32[3, 8, 8]; f32[4, 3, 3, 3]", "", "f32[4, 6, 6]"),
    ("conv2d", "f32[2, 3, 8, 8]; f32[4, 2, 3, 3]", "", "!expects 2 input channels"),
    ("conv2d", "f32[2, 6, 8, 8]; f32[4, 2, 3, 3]", "groups = 4", "!must divide"),
    ("conv2d", "f32[2, 3, 2, 2]; f32[4, 3, 3, 3]", "", "!output size"),
    ("conv2d", "f32[2, 3, 8, 8]; f32[4, 3, 3, 3]; f32[3]", "", "!bias must have shape [4]"),
    ("conv2d", "f32[2, 3, 8, 8]; f32[4, 3, 3, 3]", "stride = [0]", "!`stride` must be >= 1"),
    ("conv2d", "f16[2, 3, 8, 8]; f32[4, 3, 3, 3]", "", "!one dtype"),
    ("conv2d", "f32[2, 3, 8, 8]; f32[4, 3, 3, 3]", "stride = [1, 1, 1]", "!needs 1 or 2 values"),
    // Conv3d(16, 33, (3, 5, 2), stride=(2, 1, 1), padding=(4, 2, 0)) on [20, 16, 10, 50, 100]:
    // D = (10 + 8 - 2 - 1) / 2 + 1 = 8, H = (50 + 4 - 4 - 1) + 1 = 50, W = (100 - 1 - 1) + 1 = 99
    ("conv3d", "f32[20, 16, 10, 50, 100]; f32[33, 16, 3, 5, 2]", "stride = [2, 1, 1], padding = [4, 2, 0]", "f32[20, 33, 8, 50, 99]"),
    // transposed (PyTorch ConvTranspose docs), weight [Cin, Cout / groups, k...]:
    // out = (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1
    ("conv_transpose1d", "f32[2, 4, 10]; f32[4, 6, 3]", "stride = [2], padding = [1], output_padding = [1]", "f32[2, 6, 20]"),
    ("conv_transpose1d", "f32[1, 2, 5]; f32[2, 3, 3]", "dilation = [2]", "f32[1, 3, 9]"),
    ("conv_transpose1d", "f32[1, 2, 5]; f32[2, 3, 3]", "output_padding = [1]", "!output_padding"),
    // (3 - 1) * 1 - 2 * 2 + 1 * (2 - 1) + 1 = 0: an empty result is refused
    ("conv_transpose1d", "f32[2, 2, 3]; f32[2, 2, 1]", "padding = [2]", "!output size"),
    // ConvTranspose2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2)) on [20, 16, 50, 100]:
    // H = 49 * 2 - 8 + 2 + 1 = 93, W = 99 - 4 + 4 + 1 = 100
    ("conv_transpose2d", "f32[20, 16, 50, 100]; f32[16, 33, 3, 5]", "stride = [2, 1], padding = [4, 2]", "f32[20, 33, 93, 100]"),
    // the docs' 12x12 -> 23x23 upsampling, and 24x24 with output_padding = 1
    ("conv_transpose2d", "f32[1, 16, 12, 12]; f32[16, 16, 3, 3]", "stride = [2, 2], padding = [1, 1]", "f32[1, 16, 23, 23]"),
    ("conv_transpose2d", "f32[1, 16, 12, 12]; f32[16, 16, 3, 3]", "stride = [2, 2], padding = [1, 1], output_padding = [1, 1]", "f32[1, 16, 24, 24]"),
    ("conv_transpose2d", "f32[1, 4, 5, 5]; f32[4, 3, 3, 3]; f32[6]", "groups = 2", "f32[1, 6, 7, 7]"),
    ("conv_transpose2d", "f32[1, 4, 5, 5]; f32[3, 3, 3, 3]", "", "!input channels"),
    ("conv_transpose3d", "f32[1, 2, 3, 4, 5]; f32[2, 4, 2, 2, 2]", "stride = [2, 1, 1]", "f32[1, 4, 6, 5, 6]"),

    // ---- pooling: the convolution formula, rounded up in ceil_mode, where the last window
    // must start inside the input or the left padding: if (out - 1) * stride >= in + padding,
    // out -= 1. MaxPool2d(3, stride=2, ceil_mode=True): 6x6 -> ceil(3 / 2) + 1 = 3,
    // 5x5 -> ceil(2 / 2) + 1 = 2
    ("max_pool2d", "f32[1, 1, 6, 6]", "kernel_size = [3], stride = [2], ceil_mode = true", "f32[1, 1, 3, 3]"),
    ("max_pool2d", "f32[1, 1, 5, 5]", "kernel_size = [3], stride = [2], ceil_mode = true", "f32[1, 1, 2, 2]"),
    ("max_pool2d", "f32[1, 1, 6, 6]", "kernel_size = [3], stride = [2]", "f32[1, 1, 2, 2]"),
    // in 5, kernel 2, stride 2, padding 1: ceil(5 / 2) + 1 = 4, but window 4 would start at
    // 3 * 2 = 6 >= 5 + 1, in the right padding only, so 3
    ("max_pool1d", "f32[1, 1, 5]", "kernel_size = [2], stride = [2], padding = [1], ceil_mode = true", "f32[1, 1, 3]"),
    // stride defaults to kernel_size: (7 - 2) / 2 + 1 = 3
    ("max_pool2d", "f32[1, 1, 7, 7]", "kernel_size = [2]", "f32[1, 1, 3, 3]"),
    ("max_pool2d", "f32[2, 7, 9]", "kernel_size = [2, 3]", "f32[2, 3, 3]"),
    // dilation: (10 - 2 * 2 - 1) / 1 + 1 = 6
    ("max_pool1d", "f32[1, 1, 10]", "kernel_size = [3], stride = [1], dilation = [2]", "f32[1, 1, 6]"),
    // padding may reach half the kernel, dilation or not: pad <= 3 / 2 = 1
    ("max_pool1d", "f32[1, 1, 10]", "kernel_size = [3], stride = [1], padding = [1], dilation = [2]", "f32[1, 1, 8]"),
    ("max_pool1d", "f32[1, 1, 10]", "kernel_size = [3], stride = [1], padding = [2], dilation = [2]", "!at most half"),
    ("max_pool1d", "f32[1, 1, 10]", "kernel_size = [2], padding = [2]", "!at most half"),
    ("max_pool1d", "f32[1, 1, 10]", "stride = [2]", "!missing required attribute `kernel_size`"),
    ("max_pool2d", "f32[1, 1, 1, 1]", "kernel_size = [2]", "!output size"),
    ("max_pool3d", "f32[1, 2, 8, 8, 8]", "kernel_size = [2, 2, 2]", "f32[1, 2, 4, 4, 4]"),
    ("max_pool3d", "f32[1, 8, 8, 8]", "kernel_size = [3], stride = [2], ceil_mode = true", "f32[1, 4, 4, 4]"),
    ("avg_pool1d", "f32[2, 3, 9]", "kernel_size = [3], stride = [2], padding = [1]", "f32[2, 3, 5]"),
    // in 6, kernel 3, stride 3, padding 1: floor(5 / 3) + 1 = 2, ceil(5 / 3) + 1 = 3
    ("avg_pool2d", "f32[1, 1, 6, 6]", "kernel_size = [3], stride = [3], padding = [1], ceil_mode = true", "f32[1, 1, 3, 3]"),
    ("avg_pool2d", "f32[1, 1, 6, 6]", "kernel_size = [3], stride = [3], padding = [1]", "f32[1, 1, 2, 2]"),
    ("avg_pool3d", "f32[1, 1, 4, 5, 6]", "kernel_size = [2]", "f32[1, 1, 2, 2, 3]"),
    // avg_pool3d wants the unpadded input to hold the kernel, even when padding would
    ("avg_pool3d", "f32[1, 2, 9, 5, 2]", "kernel_size = [4], padding = [1]", "!smaller than the kernel"),
    ("adaptive_avg_pool1d", "f32[2, 3, 10]", "output_size = [4]", "f32[2, 3, 4]"),
    ("adaptive_avg_pool2d", "f32[2, 3, 10, 9]", "output_size = [1]", "f32[2, 3, 1, 1]"),
    ("adaptive_avg_pool2d", "f32[2, 3, 10, 9]", "output_size = [0]", "f32[2, 3, 0, 0]"),
    ("adaptive_avg_pool2d", "f32[2, 3, 10, 9]", "output_size = [-1]", "!must be >= 0"),
    ("adaptive_avg_pool2d", "i64[2, 3, 10, 9]", "output_size = [2, 3]", "!floating-point"),
    ("adaptive_avg_pool3d", "f32[3, 4, 5, 6]", "output_size = [2, 2, 2]", "f32[3, 2, 2, 2]"),
    ("adaptive_avg_pool3d", "f32[4, 5, 6]", "output_size = [2]", "!rank 4 or 5"),

    // ---- normalization: same shape; weight and bias [C] or normalized_shape
    ("batch_norm", "f32[4, 3, 8, 8]; f32[3]; f32[3]", "", "f32[4, 3, 8, 8]"),
    ("batch_norm", "f32[4, 3, 8, 8]; f32[4]", "", "!must have shape [3]"),
    ("layer_norm", "f32[2, 5, 10]; f32[5, 10]; f32[5, 10]", "normalized_shape = [5, 10]", "f32[2, 5, 10]"),
    ("layer_norm", "f32[2, 5, 10]", "normalized_shape = [5]", "!not a suffix"),
    ("group_norm", "f32[2, 6, 4]; f32[6]; f32[6]", "num_groups = 3", "f32[2, 6, 4]"),
    ("group_norm", "f32[2, 6, 4]", "num_groups = 4", "!must divide"),
    ("instance_norm", "f32[2, 3, 8]", "", "f32[2, 3, 8]"),
    ("rms_norm", "f32[2, 3, 4]; f32[4]", "normalized_shape = [4]", "f32[2, 3, 4]"),
    ("rms_norm", "i64[2, 3, 4]", "normalized_shape = [4]", "!floating-point"),

    // ---- layout
    ("transpose", "f32[2, 3, 4]", "dim0 = 0, dim1 = -1", "f32[4, 3, 2]"),
    ("transpose", "f32[2, 3]", "dim0 = 0, dim1 = 2", "!out of range"),
    ("permute", "f32[2, 3, 4]", "dims = [2, 0, 1]", "f32[4, 2, 3]"),
    ("permute", "f32[2, 3, 4]", "dims = [0, 0, 1]", "!repeats"),
    ("permute", "f32[2, 3, 4]", "dims = [1, 0]", "!needs 3 dims"),
    ("reshape", "f32[2, 3, 4]", "shape = [4, -1]", "f32[4, 6]"),
    ("reshape", "f32[2, 3, 4]", "shape = [5, -1]", "!invalid for 24 elements"),
    ("reshape", "f32[2, 3, 4]", "shape = [-1, -1]", "!only one dimension"),
    ("reshape", "f32[0, 3]", "shape = [-1]", "f32[0]"),
    ("reshape", "f32[0, 3]", "shape = [-1, 0]", "!invalid for 0 elements"),
    ("flatten", "f32[2, 3, 4, 5]", "start_dim = 1, end_dim = 2", "f32[2, 12, 5]"),
    ("flatten", "f32[2, 3, 4, 5]", "", "f32[120]"),
    ("flatten", "f32[]", "", "f32[1]"),
    ("flatten", "f32[]", "end_dim = 1", "!out of range"),
    ("flatten", "f32[2, 3, 4]", "start_dim = 2, end_dim = 1", "!comes after"),
    ("squeeze", "f32[1, 3, 1, 2]", "", "f32[3, 2]"),
    ("squeeze", "f32[1, 3, 1, 2]", "dim = [0]", "f32[3, 1, 2]"),
    ("squeeze", "f32[1, 3, 1, 2]", "dim = [1]", "f32[1, 3, 1, 2]"),
    ("squeeze", "f32[1, 3, 1, 2]", "dim = [0, -2]", "f32[3, 2]"),
    ("squeeze", "f32[1, 3]", "dim = [2]", "!out of range"),
    ("unsqueeze", "f32[2, 3]", "dim = -1", "f32[2, 3, 1]"),
    ("unsqueeze", "f32[2, 3]", "dim = 0", "f32[1, 2, 3]"),
    ("unsqueeze", "f32[2, 3]", "dim = 3", "!out of range"),
    ("expand", "f32[3, 1]", "shape = [2, -1, 4]", "f32[2, 3, 4]"),
    ("expand", "f32[3, 2]", "shape = [3, 4]", "!cannot expand"),
    ("expand", "f32[3, 2]", "shape = [2]", "!fewer dims"),
    ("narrow", "f32[4, 10]", "dim = 1, start = -3, length = 2", "f32[4, 2]"),
    ("narrow", "f32[4, 10]", "dim = 1, start = 8, length = 3", "!exceeds"),
    ("narrow", "f32[]", "dim = 0, start = 0, length = 1", "!0-dim"),
    // x[1:8:3] along dim 0 of 10: indices 1, 4, 7
    ("slice", "f32[10, 4]", "dim = 0, start = 1, end = 8, step = 3", "f32[3, 4]"),
    ("slice", "f32[10, 4]", "dim = 0, start = -3", "f32[3, 4]"),
    ("slice", "f32[10, 4]", "dim = 0, start = 2, end = 100", "f32[8, 4]"),
    ("slice", "f32[10, 4]", "dim = 1, start = 3, end = 1", "f32[10, 0]"),
    ("slice", "f32[10, 4]", "dim = 0, step = 0", "!step must be positive"),
    ("select", "f32[2, 3, 4]", "dim = 1, index = -1", "f32[2, 4]"),
    ("select", "f32[2, 3, 4]", "dim = 1, index = 3", "!out of range"),
    ("flip", "f32[2, 3]", "dims = [0, -1]", "f32[2, 3]"),
    ("flip", "f32[2, 3]", "dims = [2]", "!out of range"),
    // pairs from the last dim: [last_before, last_after, second_last_before, ...]
    ("pad", "f32[2, 3, 4]", "pad = [1, 2]", "f32[2, 3, 7]"),
    ("pad", "f32[2, 3, 4]", "pad = [0, 0, 2, 1], value = -1.5", "f32[2, 6, 4]"),
    ("pad", "f32[2, 3, 4]", "pad = [-1, 0, 0, 0, 1, 1]", "f32[4, 3, 3]"),
    ("pad", "f32[2, 3, 4]", "pad = [1]", "!odd length"),
    ("pad", "f32[2, 3]", "pad = [1, 1, 1, 1, 1, 1]", "!rank 2"),
    ("pad", "f32[2, 3]", "pad = [-2, -2]", "!negative size"),
    ("pad", "f32[2, 3]", "pad = [1, 1], mode = \"reflect\"", "!not supported"),
    ("pad", "i64[2, 3]", "pad = [1, 1], value = 0.5", "!value 0.5"),
    // diag of a vector: a square matrix of side n + |k|; of a matrix: the k-th diagonal,
    // min(rows, cols - k) long for k >= 0 and min(rows + k, cols) below
    ("diag", "f32[3]", "diagonal = 1", "f32[4, 4]"),
    ("diag", "f32[3]", "diagonal = -2", "f32[5, 5]"),
    ("diag", "f32[3, 5]", "", "f32[3]"),
    ("diag", "f32[3, 5]", "diagonal = 3", "f32[2]"),
    ("diag", "f32[3, 5]", "diagonal = -1", "f32[2]"),
    ("diag", "f32[3, 5]", "diagonal = 6", "f32[0]"),
    ("diag", "f32[2, 3, 4]", "", "!rank 1 or 2"),
    ("triu", "f32[3, 4]", "diagonal = 1", "f32[3, 4]"),
    ("tril", "f32[2, 3, 4]", "diagonal = -1", "f32[2, 3, 4]"),
    ("tril", "f32[4]", "", "!rank >= 2"),
    ("cat", "f32[2, 3]; f32[5, 3]", "", "f32[7, 3]"),
    ("cat", "f32[2, 3]; f32[2, 1]; f32[2, 2]", "dim = -1", "f32[2, 6]"),
    ("cat", "f32[2]; f64[3]", "", "f64[5]"),
    ("cat", "f32[2, 3]; f32[2, 4]", "", "!differ outside dim 0"),
    ("stack", "f32[2, 3]; f32[2, 3]; f32[2, 3]", "dim = 1", "f32[2, 3, 3]"),
    ("stack", "f32[2, 3]; f32[2, 3]", "dim = -1", "f32[2, 3, 2]"),
    ("stack", "f32[2, 3]; f32[3, 2]", "", "!differ"),
    // ---- opaque ATen calls: result types from the attribute, every input named once
    ("aten", "f32[2, 3]", "target = \"aten.erfinv.default\", args = \"$0\", types = \"f32[2, 3]\"", "f32[2, 3]"),
    ("aten", "", "target = \"aten.randn.default\", args = \"[4], device=$device\", types = \"f32[4]\"", "f32[4]"),
    ("aten", "f32[2, 3]", "target = \"aten.sort.default\", args = \"$0, -1\", types = \"(f32[2, 3]; i64[2, 3])\"", "f32[2, 3], i64[2, 3]"),
    ("aten", "f32[2, 3]; f32[3]", "target = \"aten.foo.default\", args = \"$0\", types = \"f32[2]\"", "!input 1 is not used"),
    ("aten", "f32[2, 3]", "target = \"aten.foo.default\", args = \"$1\", types = \"f32[2]\"", "!has 1 inputs"),
    ("aten", "f32[2, 3]", "target = \"aten.foo.default\", args = \"$0\", types = \"\"", "!no tensor result"),
    ("aten", "f32[2, 3]", "target = \"os.system\\\"\", args = \"$0\", types = \"f32[2]\"", "!not an op target"),
    ("aten", "f32[2, 3]", "target = \"aten.foo.default\", args = \"$0\", types = \"f32[2]; f32[3]\"", "!parentheses"),
];

/// The text form of a one-node graph for `case` (the declared result type is a dummy).
fn case_text(&(op, inputs, attrs, _): &Case) -> String {
    let inputs: Vec<&str> = inputs
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let params: Vec<String> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| format!("%i{i}: {t}"))
        .collect();
    let args: Vec<String> = (0..inputs.len()).map(|i| format!("%i{i}")).collect();
    let attrs = if attrs.is_empty() {
        String::new()
    } else {
        format!(" {{{attrs}}}")
    };
    format!(
        "graph @case({}) {{\n  %0 = {op}({}){attrs} : f32[]\n  return %0\n}}\n",
        params.join(", "),
        args.join(", ")
    )
}

/// Runs `case` through the parser (for its types and attributes), attribute
/// normalization and inference; returns the result types, or the error message.
fn run_case(case: &Case) -> Result<String, String> {
    let text = case_text(case);
    let g = crate::text::parse(&text)
        .map_err(|e| format!("case does not parse: {}", e.render(&text, "case")))?;
    let node = g.node(g.body()[0]);
    let attrs = node.op.normalize_attrs(&node.attrs).map_err(|errs| {
        errs.iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("; ")
    })?;
    let ins: Vec<&TensorType> = node.inputs.iter().map(|&v| g.ty(v)).collect();
    let tys = node.op.infer(&ins, &attrs)?;
    Ok(tys
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", "))
}

#[test]
fn inference_cases() {
    let mut failures = vec![];
    for case in CASES {
        let got = run_case(case);
        let expected = case.3;
        let ok = match (expected.strip_prefix('!'), &got) {
            (Some(part), Err(msg)) => msg.contains(part),
            (None, Ok(tys)) => tys == expected,
            _ => false,
        };
        if !ok {
            failures.push(format!("{case:?}: got {got:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The table has at least one successful and (for ops that can fail) one failing case
/// for every op.
#[test]
fn every_op_has_a_case() {
    let missing: Vec<&str> = Op::ALL
        .iter()
        .map(|op| op.name())
        .filter(|name| !CASES.iter().any(|c| c.0 == *name && !c.3.starts_with('!')))
        .collect();
    assert!(
        missing.is_empty(),
        "ops without an inference case: {missing:?}"
    );
}

// ---------------------------------------------------------------- FLOPs

/// (op, input types, attributes, FLOPs), with the DRTriton generator's conventions.
#[rustfmt::skip]
const FLOP_CASES: &[(&str, &str, &str, u64)] = &[
    // matmul: 2 * M * N * K
    ("matmul", "f32[4, 5]; f32[5, 6]", "", 2 * 4 * 6 * 5),
    ("matmul", "f32[3, 4, 5]; f32[5, 6]", "", 2 * (3 * 4 * 6) * 5),
    ("matmul", "f32[5]; f32[5]", "", 2 * 5),
    ("bmm", "f32[2, 3, 4]; f32[2, 4, 5]", "", 2 * (2 * 3 * 5) * 4),
    ("linear", "f32[8, 16]; f32[32, 16]; f32[32]", "", 2 * 8 * 32 * 16),
    ("einsum", "f32[2, 3, 4]; f32[2, 4, 5]", "equation = \"bij,bjk->bik\"", 2 * 2 * 3 * 4 * 5),
    // conv: 2 * output size * kernel volume * Cin / groups
    ("conv1d", "f32[1, 3, 10]; f32[4, 3, 3]", "", 2 * (4 * 8) * 3 * 3),
    ("conv2d", "f32[2, 4, 8, 8]; f32[8, 2, 3, 3]", "groups = 2", 2 * (2 * 8 * 6 * 6) * (3 * 3) * (4 / 2)),
    // transposed: 2 * input size * kernel volume * Cout / groups
    ("conv_transpose1d", "f32[1, 2, 5]; f32[2, 3, 3]", "", 2 * (2 * 5) * 3 * 3),
    // pointwise: output size * a multiplier per function
    ("add", "f32[10, 1]; f32[10]", "", 100),
    ("relu", "f32[10, 10]", "", 100),
    ("leaky_relu", "f32[10, 10]", "", 2 * 100),
    ("sigmoid", "f32[10, 10]", "", 4 * 100),
    ("gelu", "f32[10, 10]", "", 8 * 100),
    ("mish", "f32[10, 10]", "", 10 * 100),
    ("lerp", "f32[10]; f32[10]; f32[]", "", 3 * 10),
    // reductions: input size (times passes for softmax-like ones)
    ("sum", "f32[4, 5]", "dim = [1]", 20),
    ("softmax", "f32[4, 5]", "dim = 1", 5 * 20),
    // normalization: 7 * size
    ("layer_norm", "f32[2, 5, 10]", "normalized_shape = [10]", 7 * 100),
    // pooling: output size * window volume; a one-element kernel_size covers every
    // spatial dim, also for unbatched inputs
    ("max_pool2d", "f32[1, 1, 6, 6]", "kernel_size = [3], stride = [2]", (2 * 2) * 9),
    ("max_pool2d", "f32[1, 6, 6]", "kernel_size = [3], stride = [2]", (2 * 2) * 9),
    ("avg_pool3d", "f32[1, 1, 4, 4, 4]", "kernel_size = [2]", 8 * 8),
    ("adaptive_avg_pool1d", "f32[2, 3, 10]", "output_size = [4]", 60),
    // attention: QK^T (2 * B * L * S * E) + softmax (5 * B * L * S) + PV (2 * B * L * Ev * S)
    ("scaled_dot_product_attention", "f32[2, 16, 64]; f32[2, 32, 64]; f32[2, 32, 48]", "",
        2 * (2 * 16 * 32) * 64 + 5 * (2 * 16 * 32) + 2 * (2 * 16 * 48) * 32),
    ("transpose", "f32[4, 5]", "dim0 = 0, dim1 = 1", 0),
];

#[test]
fn flop_counts() {
    for &(op, inputs, attrs, expected) in FLOP_CASES {
        let case = (op, inputs, attrs, "");
        let text = case_text(&case);
        let g = crate::text::parse(&text).unwrap();
        let node = g.node(g.body()[0]);
        let ins: Vec<&TensorType> = node.inputs.iter().map(|&v| g.ty(v)).collect();
        let outs = node.op.infer(&ins, &node.attrs).unwrap();
        assert_eq!(
            node.op.flops(&ins, &outs, &node.attrs),
            expected,
            "{op} {inputs} {attrs}"
        );
    }
}

/// A graph's FLOPs are the sum over its live nodes.
#[test]
fn graph_flops_sum_the_nodes() {
    let mut b = crate::GraphBuilder::new("g");
    let x = b.input("x", TensorType::new(DType::F32, vec![4, 5]));
    let w = b.param("w", TensorType::new(DType::F32, vec![5, 6]));
    let y = b.op1(Op::Matmul, &[x, w], []).unwrap();
    let z = b.op1(Op::Sigmoid, &[y], []).unwrap();
    let g = b.finish(vec![z]);
    assert_eq!(g.flops(), 2 * 4 * 6 * 5 + 4 * 4 * 6);
}

#[test]
fn every_op_has_an_example_that_type_checks() {
    for &op in Op::ALL {
        let g = example::example_graph(op).unwrap_or_else(|e| panic!("{op}: {e}"));
        let report = crate::verify(&g);
        assert!(report.is_empty(), "{op}: {report:?}");
        assert!(!g.outputs().is_empty(), "{op}");
    }
}

/// The facts of `pointwise.rs` belong to pointwise ops, and every op's facts are read: each
/// op's range rule (its own for a pointwise op, `range/rules.rs` for the others), domain
/// and PyTorch call answer for its example (no layer is left without a rule for an op).
#[test]
fn every_op_has_every_derived_fact() {
    use crate::pytorch::{torch_expr, Dialect};
    use crate::range::{value_ranges, Interval};
    for &op in Op::ALL {
        assert_eq!(
            op.pointwise().is_some(),
            op.kind() == Kind::Pointwise,
            "{op}: pointwise facts for a pointwise op only"
        );
        assert_eq!(op.category(), op.kind().category(), "{op}");
        let g = example::example_graph(op).unwrap();
        let ranges = value_ranges(&g, Interval::new(-1.0, 1.0));
        assert_eq!(ranges.len(), g.num_values(), "{op}");
        let node = *g.body().last().unwrap();
        let n = g.node(node);
        let ins: Vec<&TensorType> = n.inputs.iter().map(|&v| g.ty(v)).collect();
        let args: Vec<String> = (0..ins.len()).map(|i| format!("x{i}")).collect();
        for slot in 0..ins.len() {
            let _ = op.domain(slot);
        }
        for d in [Dialect::Seed, Dialect::Reference] {
            let call = torch_expr(op, &n.attrs, &args, &ins, "x0.device", d);
            assert!(call.contains("x0"), "{op}: {call}");
        }
        if let Some(pw) = op.pointwise() {
            // a pointwise call is one of the op's own spellings
            let call = torch_expr(op, &n.attrs, &args, &ins, "x0.device", Dialect::Seed);
            let head = call.split('(').next().unwrap();
            let spelled = head.replace("torch.nn.functional.", "F.");
            assert!(
                op == Op::Cast || op.def().torch.calls.contains(&spelled.as_str()),
                "{op}: {head} is not among its spellings"
            );
            // a folded op evaluates its example's constants like the value range says
            if let Some(eval) = pw.eval {
                let args = vec![0.5; ins.len()];
                if let Some(v) = eval(&args, AttrView(&n.attrs)) {
                    let point = vec![Interval::point(0.5); ins.len()];
                    let r = (pw.range)(&point, AttrView(&n.attrs), g.ty(n.outputs[0]).dtype);
                    assert!(
                        r.lo <= v + 1e-9 && v - 1e-9 <= r.hi,
                        "{op}: {v} outside {r:?}"
                    );
                }
            }
        }
    }
}
