//! The cost of a graph as drtc runs it: partitioned by the fusion planner, each region one
//! kernel (or library call) that reads its inputs and writes its outputs once, plus a
//! fixed launch cost. The per-op cost model that extraction uses (`cost.rs`) counts a
//! pass over memory for every op, so it sees a multiply folded from an activation into a
//! weight as saving a pass, when fusion already does that multiply for free in the
//! producer's epilogue and the fold only adds kernels over the weights. Each region is
//! costed by the roofline, `max(flops, MACHINE_BALANCE * bytes)`: a fused kernel is bound
//! by its memory traffic or by its arithmetic, not by their sum, so the arithmetic of
//! pointwise ops inside a memory-bound kernel is free. The pass's accept test compares
//! this cost of the rewritten graph against the input's instead.

use super::cost::{is_view, si, MACHINE_BALANCE, VIEW_COST};
use crate::fuse::{plan_fusion, FuseOptions, Region, RegionKind};
use drtc_ir::{Graph, Op};

/// Bytes of memory traffic one kernel launch is worth: a launch and its gap take about
/// 4 us, in which an H200 moves about 16 MiB.
pub const LAUNCH_BYTES: u64 = 16 << 20;

/// A graph's planned cost: memory traffic and arithmetic of its regions, their launches,
/// and the total the accept test compares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Planned {
    pub bytes: u64,
    pub flops: u64,
    pub launches: u64,
    total: u64,
}

impl Planned {
    /// The sum over regions of the roofline cost plus the launch costs.
    pub fn total(&self) -> u64 {
        self.total
    }
}

impl std::fmt::Display for Planned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({} kernel{}, {} moved, {}; planned)",
            si(self.total, "flop-eq"),
            self.launches,
            if self.launches == 1 { "" } else { "s" },
            si(self.bytes, "B"),
            si(self.flops, "FLOP")
        )
    }
}

/// The planned cost of `g`: the sum over the regions of its fusion plan.
pub fn planned_cost(g: &Graph) -> Planned {
    let plan = plan_fusion(g, &FuseOptions::default());
    let mut sum = Planned::default();
    for r in &plan.regions {
        let c = region_cost(g, r);
        sum.bytes += c.bytes;
        sum.flops += c.flops;
        sum.launches += c.launches;
        sum.total = sum.total.saturating_add(c.total);
    }
    sum
}

fn region_cost(g: &Graph, r: &Region) -> Planned {
    let computes = r.nodes.iter().any(|&n| {
        let node = g.node(n);
        let scalar = node.op == Op::Full && g.ty(node.outputs[0]).rank() == 0;
        !(is_view(node.op) || scalar)
    });
    if r.kind == RegionKind::View || !computes {
        return Planned {
            total: VIEW_COST,
            ..Planned::default()
        };
    }
    let bytes: u64 = r
        .inputs
        .iter()
        .chain(&r.outputs)
        .map(|&v| g.ty(v))
        .filter(|t| t.rank() > 0)
        .map(|t| t.size_bytes())
        .sum();
    let flops: u64 = r
        .nodes
        .iter()
        .map(|&n| {
            let node = g.node(n);
            let ins: Vec<_> = node.inputs.iter().map(|&v| g.ty(v)).collect();
            let outs: Vec<_> = node.outputs.iter().map(|&v| g.ty(v).clone()).collect();
            node.op.flops(&ins, &outs, &node.attrs)
        })
        .sum();
    let roofline = flops.max(bytes.saturating_mul(MACHINE_BALANCE));
    Planned {
        bytes,
        flops,
        launches: 1,
        total: roofline.saturating_add(LAUNCH_BYTES * MACHINE_BALANCE),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drtc_ir::{Attr, DType, GraphBuilder, TensorType};

    fn f32(shape: &[i64]) -> TensorType {
        TensorType::new(DType::F32, shape.to_vec())
    }

    /// conv2d(x, w, b) * s, as written (`fold = false`) or with `s` folded into `w` and `b`.
    fn scaled_conv(fold: bool) -> Graph {
        let mut g = GraphBuilder::new("g");
        let x = g.input("x", f32(&[16, 8, 64, 64]));
        let w = g.param("w", f32(&[32, 8, 3, 3]));
        let b = g.param("b", f32(&[32]));
        let s = g.constant(0.5, DType::F32);
        let conv = |g: &mut GraphBuilder, w, b| {
            let attrs = [("padding", Attr::Ints(vec![1, 1]))];
            g.op1(Op::Conv2d, &[x, w, b], attrs).unwrap()
        };
        let out = if fold {
            let ws = g.op1(Op::Mul, &[w, s], []).unwrap();
            let bs = g.op1(Op::Mul, &[b, s], []).unwrap();
            conv(&mut g, ws, bs)
        } else {
            let y = conv(&mut g, w, b);
            g.op1(Op::Mul, &[y, s], []).unwrap()
        };
        g.finish(vec![out])
    }

    #[test]
    fn a_scale_fusion_does_for_free_is_not_worth_folding_into_the_weights() {
        let (plain, folded) = (scaled_conv(false), scaled_conv(true));
        let (p, f) = (planned_cost(&plain), planned_cost(&folded));
        // the per-op model counts a pass over the activation for the multiply...
        assert!(
            super::super::cost::graph_cost(&folded).total()
                < super::super::cost::graph_cost(&plain).total()
        );
        // ...which fusion does in the convolution's epilogue; folding adds two kernels
        assert_eq!((p.launches, f.launches), (2, 3));
        assert!(p.total() < f.total(), "{p} against {f}");
    }

    #[test]
    fn a_memory_bound_region_costs_its_bytes_not_its_bytes_plus_flops() {
        let mut g = GraphBuilder::new("g");
        let x = g.input("x", f32(&[1024, 1024]));
        let mut y = x;
        for _ in 0..4 {
            y = g.op1(Op::Tanh, &[y], []).unwrap();
        }
        let g = g.finish(vec![y]);
        let c = planned_cost(&g);
        assert_eq!(c.launches, 1);
        assert_eq!(c.bytes, 2 * 1024 * 1024 * 4);
        assert_eq!(
            c.total(),
            c.bytes * MACHINE_BALANCE + LAUNCH_BYTES * MACHINE_BALANCE
        );
    }
}
