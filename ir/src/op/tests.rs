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
