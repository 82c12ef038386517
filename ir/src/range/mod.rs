//! Range analysis: sound interval bounds of every value of a graph, given bounds of its
//! inputs, and the check that every op input lies in its domain (`Op::domain`) and every
//! value stays finite. A graph that passes cannot produce NaN or Inf for any inputs within
//! the input bound.
//!
//! For synthesized programs, whose inputs are `torch.randn`, [`RANDN_BOUND`] bounds every
//! input value for every seed: ATen draws normals by Box-Muller from uniforms of at most
//! 53 bits, so `|x| <= sqrt(-2 ln 2^-53) ~ 8.6`.

mod rules;

pub use crate::interval::Interval;
pub use rules::output_range;

use crate::op::domain::Domain;
use crate::{DType, Graph, NodeId, Op, ValueId};

/// A bound of `|x|` for every value `torch.randn` can return, whatever the seed.
pub const RANDN_BOUND: f64 = 10.0;

/// The smallest magnitude a denominator (or a `log` argument) may have: f32 values below
/// `f32::MIN_POSITIVE` are denormal and may flush to zero.
pub const MIN_MAGNITUDE: f64 = 1e-30;

/// The largest magnitude a value of `dtype` may reach and still be called safe: far below
/// the dtype's largest finite value, so that rounding in sums cannot reach it.
pub fn finite_limit(dtype: DType) -> f64 {
    match dtype {
        DType::Bool => 1.0,
        DType::I32 => i32::MAX as f64,
        DType::I64 => 9e18,
        DType::F16 => 6e4,
        DType::BF16 | DType::F32 => 1e30,
        DType::F64 => 1e300,
    }
}

/// Why a graph may produce a non-finite value.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RangeViolation {
    #[error("`{op}` input {slot} lies in {range}, outside its domain ({domain:?})")]
    Domain {
        node: NodeId,
        op: Op,
        slot: usize,
        domain: Domain,
        range: Interval,
    },
    #[error("`{op}` may produce {range}, beyond what {dtype} holds safely")]
    Unbounded {
        node: NodeId,
        op: Op,
        dtype: DType,
        range: Interval,
    },
}

/// Interval bounds of every value (indexed by value id), with every graph input in `input`.
/// Values of dead nodes are left unbounded.
pub fn value_ranges(g: &Graph, input: Interval) -> Vec<Interval> {
    let mut r = vec![Interval::ANY; g.num_values()];
    for &v in g.inputs() {
        if let Some(slot) = r.get_mut(v.index()) {
            *slot = input;
        }
    }
    for &n in g.body() {
        if !g.contains_node(n) {
            continue;
        }
        let node = g.node(n);
        if node.inputs.iter().any(|v| !g.contains_value(*v))
            || node.outputs.iter().any(|v| !g.contains_value(*v))
        {
            continue;
        }
        let ins: Vec<Interval> = node.inputs.iter().map(|v| r[v.index()]).collect();
        let tys: Vec<_> = node.inputs.iter().map(|&v| g.ty(v)).collect();
        if let Some(&o) = node.outputs.first() {
            r[o.index()] = output_range(node, &ins, &tys, g.ty(o));
        }
        // second results (cummax indices, max values/indices) are indices or copies
        for &o in node.outputs.iter().skip(1) {
            r[o.index()] = Interval::ANY;
        }
    }
    r
}

/// Whether every value in `x` satisfies `d`.
pub fn admits(d: Domain, x: Interval) -> bool {
    match d {
        Domain::Any => true,
        Domain::NonZero => x.min_mag() >= MIN_MAGNITUDE,
        Domain::Positive => x.lo >= MIN_MAGNITUDE,
        Domain::NonNegative => x.lo >= 0.0,
        Domain::AtMost(m) => x.hi <= m,
        Domain::PowBase => x.lo >= MIN_MAGNITUDE,
    }
}

/// Every way `g` may produce a non-finite value when its inputs lie in `input`: op inputs
/// outside their domain, and first results that may exceed [`finite_limit`].
pub fn violations(g: &Graph, input: Interval) -> Vec<RangeViolation> {
    let r = value_ranges(g, input);
    let mut out = vec![];
    for &n in g.body() {
        if !g.contains_node(n) {
            continue;
        }
        let node = g.node(n);
        for (slot, &v) in node.inputs.iter().enumerate() {
            let Some(&range) = r.get(v.index()) else {
                continue;
            };
            let domain = node.op.domain(slot);
            if !admits(domain, range) {
                out.push(RangeViolation::Domain {
                    node: n,
                    op: node.op,
                    slot,
                    domain,
                    range,
                });
            }
        }
        if let Some(&o) = node.outputs.first() {
            let (Some(&range), true) = (r.get(o.index()), g.contains_value(o)) else {
                continue;
            };
            let dtype = g.ty(o).dtype;
            if !range.within(finite_limit(dtype)) {
                out.push(RangeViolation::Unbounded {
                    node: n,
                    op: node.op,
                    dtype,
                    range,
                });
            }
        }
    }
    out
}

/// The range of `v` under [`value_ranges`].
pub fn range_of(g: &Graph, v: ValueId, input: Interval) -> Interval {
    value_ranges(g, input)
        .get(v.index())
        .copied()
        .unwrap_or(Interval::ANY)
}
