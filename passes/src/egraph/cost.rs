//! The cost model used for extraction: bytes moved and FLOPs per op, by op class.
//!
//! Every compute op reads its inputs and writes its output once (bytes), plus its FLOPs
//! from the op table. Scalar constants are folded into kernels (nearly free), views cost a
//! token amount so that removing one is still a gain, and graph inputs and attribute
//! leaves are free. Costs combine as `flops + MACHINE_BALANCE * bytes`: on a GPU a byte of
//! memory traffic costs about as much time as a dozen FLOPs.

use super::lang::TNode;
use super::types_and_constants::TGraph;
use drtc_ir::{Attrs, Graph, Kind, Op, TensorType};

/// FLOPs worth one byte of memory traffic (H200: ~67 TFLOP/s fp32 over ~4.8 TB/s).
pub const MACHINE_BALANCE: u64 = 14;
/// The cost of a scalar constant.
pub const CONSTANT_COST: u64 = 1;
/// The cost of a view (reshape, transpose, ...): metadata only.
pub const VIEW_COST: u64 = 2;

/// Bytes moved and FLOPs done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cost {
    pub bytes: u64,
    pub flops: u64,
    /// Fixed costs (constants, views).
    pub fixed: u64,
}

impl Cost {
    /// One number to compare by.
    pub fn total(&self) -> u64 {
        self.flops
            .saturating_add(self.bytes.saturating_mul(MACHINE_BALANCE))
            .saturating_add(self.fixed)
    }
}

impl std::ops::Add for Cost {
    type Output = Cost;
    fn add(self, o: Cost) -> Cost {
        Cost {
            bytes: self.bytes.saturating_add(o.bytes),
            flops: self.flops.saturating_add(o.flops),
            fixed: self.fixed.saturating_add(o.fixed),
        }
    }
}

impl std::iter::Sum for Cost {
    fn sum<I: Iterator<Item = Cost>>(iter: I) -> Cost {
        iter.fold(Cost::default(), |a, b| a + b)
    }
}

/// `n` `unit` at a human scale: exact below 1000, else four significant digits with an SI
/// prefix (`742.7 MB`, `1.447 Gflop-eq`).
pub fn si(n: u64, unit: &str) -> String {
    if n < 1000 {
        return format!("{n} {unit}");
    }
    let mut v = n as f64;
    let mut prefix = "";
    for p in ["k", "M", "G", "T", "P", "E"] {
        if v < 1000.0 {
            break;
        }
        v /= 1000.0;
        prefix = p;
    }
    let decimals = if v < 10.0 {
        3
    } else if v < 100.0 {
        2
    } else {
        1
    };
    format!("{v:.decimals$} {prefix}{unit}")
}

impl std::fmt::Display for Cost {
    /// The total in flop-equivalents (FLOPs plus bytes weighted by the machine balance),
    /// then what it counts.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({} moved, {})",
            si(self.total(), "flop-eq"),
            si(self.bytes, "B"),
            si(self.flops, "FLOP")
        )
    }
}

/// Whether an op only changes how data is viewed.
pub fn is_view(op: Op) -> bool {
    op.kind() == Kind::View
}

/// The cost of one application of `op`.
pub fn op_cost(op: Op, inputs: &[&TensorType], out: &TensorType, attrs: &Attrs) -> Cost {
    if op == Op::Full && out.rank() == 0 {
        return Cost {
            fixed: CONSTANT_COST,
            ..Cost::default()
        };
    }
    if is_view(op) {
        return Cost {
            fixed: VIEW_COST,
            ..Cost::default()
        };
    }
    // scalar operands are kernel arguments, not memory traffic
    let read: u64 = inputs
        .iter()
        .filter(|t| t.rank() > 0)
        .map(|t| t.size_bytes())
        .sum();
    let bytes = read + out.size_bytes();
    let flops = op.flops(inputs, std::slice::from_ref(out), attrs);
    Cost {
        bytes,
        flops,
        fixed: 0,
    }
}

/// The cost of one e-node alone: [`op_cost`] of an op (infinite when it does not
/// type-check), nothing for inputs and attribute leaves.
pub fn node_cost(egraph: &TGraph, enode: &TNode) -> f64 {
    match enode {
        TNode::Input(_) | TNode::Attrs(_) => 0.0,
        TNode::Op { op, .. } => {
            let tys: Option<Vec<&TensorType>> = enode
                .inputs()
                .iter()
                .map(|&c| egraph[c].data.ty.as_ref())
                .collect();
            let attrs: Attrs = enode
                .attrs_child()
                .and_then(|a| egraph[a].data.attrs.clone())
                .unwrap_or_default();
            match tys.and_then(|t| Some((op.infer(&t, &attrs).ok()?, t))) {
                Some((out, tys)) if out.len() == 1 => {
                    op_cost(*op, &tys, &out[0], &attrs).total() as f64
                }
                _ => f64::INFINITY,
            }
        }
    }
}

/// The cost of a whole graph: the sum over its live nodes.
pub fn graph_cost(g: &Graph) -> Cost {
    g.body()
        .iter()
        .map(|&n| {
            let node = g.node(n);
            let ins: Vec<&TensorType> = node.inputs.iter().map(|&v| g.ty(v)).collect();
            match node.outputs.first() {
                Some(&o) => op_cost(node.op, &ins, g.ty(o), &node.attrs),
                None => Cost::default(),
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use drtc_ir::{DType, GraphBuilder};

    #[test]
    fn a_fused_activation_costs_less_than_its_written_out_form() {
        let t = TensorType::new(DType::F32, vec![64, 64]);
        let mut b = GraphBuilder::new("g");
        let x = b.input("x", t.clone());
        let s = b.op1(Op::Sigmoid, &[x], []).unwrap();
        let m = b.op1(Op::Mul, &[x, s], []).unwrap();
        let written = b.finish(vec![m]);
        let mut b = GraphBuilder::new("g");
        let x = b.input("x", t);
        let s = b.op1(Op::Silu, &[x], []).unwrap();
        let named = b.finish(vec![s]);
        let (w, n) = (graph_cost(&written), graph_cost(&named));
        assert_eq!(n.bytes, 2 * 64 * 64 * 4);
        assert_eq!(w.bytes, 5 * 64 * 64 * 4);
        assert!(n.total() < w.total());
    }

    #[test]
    fn scalars_and_views_are_cheap() {
        let mut b = GraphBuilder::new("g");
        let x = b.input("x", TensorType::new(DType::F32, vec![8, 4]));
        let c = b.constant(2.0, DType::F32);
        let t = b
            .op1(
                Op::Transpose,
                &[x],
                [("dim0", 0.into_attr()), ("dim1", 1.into_attr())],
            )
            .unwrap();
        let m = b.op1(Op::Mul, &[t, c], []).unwrap();
        let g = b.finish(vec![m]);
        let cost = graph_cost(&g);
        // the mul reads x (not the scalar) and writes its result
        assert_eq!(cost.bytes, 2 * 32 * 4);
        assert_eq!(cost.fixed, CONSTANT_COST + VIEW_COST);
    }

    trait IntoAttr {
        fn into_attr(self) -> drtc_ir::Attr;
    }
    impl IntoAttr for i64 {
        fn into_attr(self) -> drtc_ir::Attr {
            drtc_ir::Attr::Int(self)
        }
    }
}
