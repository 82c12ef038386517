//! `dce`: dead code elimination. Removes every node none of whose results is used, directly
//! or through other dead nodes, so later passes and code generation see only the work
//! that reaches the outputs. Graph inputs always stay: they are the program's signature
//! (and its parameters' state_dict names), even when unused.

use crate::{Changed, Pass, PassContext, PassError, PassInfo};
use drtc_ir::Graph;

/// Registry entry.
pub const INFO: PassInfo = PassInfo {
    name: "dce",
    summary: "remove nodes whose results are never used (transitively); inputs stay",
    options: &[],
    build: |_| Ok(Box::new(Dce)),
};

/// Dead code elimination.
#[derive(Clone, Copy, Debug, Default)]
pub struct Dce;

impl Pass for Dce {
    fn name(&self) -> &'static str {
        "dce"
    }

    fn run(&self, graph: &mut Graph, cx: &mut PassContext) -> Result<Changed, PassError> {
        let mut live = vec![false; graph.num_values()];
        for &v in graph.outputs() {
            if let Some(l) = live.get_mut(v.index()) {
                *l = true;
            }
        }
        // Walk backwards: a node is live if one of its results is; then so are its inputs.
        let body = graph.body().to_vec();
        let mut keep = vec![true; body.len()];
        for (pos, &n) in body.iter().enumerate().rev() {
            let node = graph.node(n);
            if node
                .outputs
                .iter()
                .any(|v| live.get(v.index()).copied().unwrap_or(false))
            {
                for v in &node.inputs {
                    if let Some(l) = live.get_mut(v.index()) {
                        *l = true;
                    }
                }
            } else {
                keep[pos] = false;
            }
        }
        if keep.iter().all(|&k| k) {
            return Ok(Changed::No);
        }
        for (pos, &n) in body.iter().enumerate() {
            if !keep[pos] {
                cx.log(format!(
                    "removed #{pos} `{}`: its results are unused",
                    graph.node(n).op
                ));
            }
        }
        let kept = body
            .iter()
            .zip(&keep)
            .filter(|(_, &k)| k)
            .map(|(&n, _)| n)
            .collect();
        graph.set_body(kept);
        graph.compact();
        Ok(Changed::Yes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drtc_ir::{text, verify, Attr, DType, GraphBuilder, Op, TensorType};

    fn t() -> TensorType {
        TensorType::new(DType::F32, vec![4, 8])
    }

    #[test]
    fn removes_dead_chains_and_keeps_inputs() {
        let mut b = GraphBuilder::new("g");
        let x = b.input("x", t());
        let _unused = b.param("w", t());
        let live = b.op1(Op::Relu, &[x], []).unwrap();
        let dead1 = b.op1(Op::Exp, &[x], []).unwrap();
        let dead2 = b.op1(Op::Add, &[dead1, live], []).unwrap();
        let _dead3 = b.op1(Op::Neg, &[dead2], []).unwrap();
        let mut g = b.finish(vec![live]);
        let mut cx = PassContext::new();
        assert_eq!(Dce.run(&mut g, &mut cx).unwrap(), Changed::Yes);
        assert_eq!(g.inputs().len(), 2);
        assert_eq!(g.body().len(), 1);
        assert_eq!(g.node(g.body()[0]).op, Op::Relu);
        assert_eq!(cx.decisions().len(), 3);
        assert_eq!(
            cx.decisions()[0],
            "removed #1 `exp`: its results are unused"
        );
        assert!(verify(&g).is_empty(), "{:?}", verify(&g));
        // compacted: the arena holds only live nodes
        assert_eq!(g.num_nodes(), 1);
        assert_eq!(g.num_values(), 3);
    }

    #[test]
    fn nothing_dead_is_no_change() {
        let mut b = GraphBuilder::new("g");
        let x = b.input("x", t());
        let y = b.op1(Op::Sigmoid, &[x], []).unwrap();
        let z = b.op1(Op::Mul, &[x, y], []).unwrap();
        let mut g = b.finish(vec![z, y]);
        let before = text::print(&g);
        assert_eq!(
            Dce.run(&mut g, &mut PassContext::new()).unwrap(),
            Changed::No
        );
        assert_eq!(text::print(&g), before);
    }

    #[test]
    fn unused_random_ops_are_removed_too() {
        let mut b = GraphBuilder::new("g");
        let x = b.input("x", t());
        let _d = b
            .op1(
                Op::Dropout,
                &[x],
                [("p", Attr::Float(0.5)), ("training", Attr::Bool(true))],
            )
            .unwrap();
        let mut g = b.finish(vec![x]);
        assert_eq!(
            Dce.run(&mut g, &mut PassContext::new()).unwrap(),
            Changed::Yes
        );
        assert!(g.body().is_empty());
    }
}
