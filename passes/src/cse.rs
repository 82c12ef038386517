//! `cse`: common subexpression elimination. Merges nodes that compute the same thing (same
//! op, same inputs, same attributes compared exactly, float bits included) into the first
//! of them and rewrites uses, so duplicated work from tracing or inlining is done once.
//! One forward sweep in program order reaches a fixpoint: once two nodes are merged, their
//! users see equal inputs and merge in turn. Random ops (`Op::is_random`) never merge.

use crate::options::{OptionDef, OptionKind, OptionValue, PassOptions};
use crate::{Changed, Pass, PassContext, PassError, PassInfo};
use drtc_ir::{AttrKey, Attrs, Graph, Op, TensorType, ValueId};
use std::collections::HashMap;

/// Registry entry.
pub const INFO: PassInfo = PassInfo {
    name: "cse",
    summary: "merge nodes with the same op, inputs and attributes (random ops excepted)",
    options: &[OptionDef {
        name: "commutative",
        kind: OptionKind::Bool,
        default: OptionValue::Bool(true),
        help: "treat `add(a, b)` and `add(b, a)` as equal for commutative ops",
    }],
    build: Cse::build,
};

/// Common subexpression elimination.
#[derive(Clone, Copy, Debug)]
pub struct Cse {
    /// Match commutative binary ops regardless of operand order.
    pub commutative: bool,
}

impl Default for Cse {
    fn default() -> Self {
        Cse { commutative: true }
    }
}

impl Cse {
    fn build(options: &PassOptions) -> Result<Box<dyn Pass>, String> {
        Ok(Box::new(Cse {
            commutative: options.bool("commutative")?,
        }))
    }
}

/// Binary ops whose result does not depend on operand order, bit for bit (IEEE addition,
/// multiplication, max/min and equality are commutative; broadcasting and type promotion
/// are symmetric).
fn is_commutative(op: Op) -> bool {
    matches!(
        op,
        Op::Add | Op::Mul | Op::Maximum | Op::Minimum | Op::Eq | Op::Ne
    )
}

/// What makes two nodes compute the same thing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct NodeKey {
    op: Op,
    inputs: Vec<ValueId>,
    attrs: Vec<(String, AttrKey)>,
    results: Vec<TensorType>,
}

fn attr_key(attrs: &Attrs) -> Vec<(String, AttrKey)> {
    attrs
        .iter()
        .map(|(k, v)| (k.clone(), AttrKey::from(v)))
        .collect()
}

impl Pass for Cse {
    fn name(&self) -> &'static str {
        "cse"
    }

    fn run(&self, graph: &mut Graph, cx: &mut PassContext) -> Result<Changed, PassError> {
        // replaced[v] = the value that now stands for v
        let mut replaced: HashMap<ValueId, ValueId> = HashMap::new();
        // position in `body` of the first node computing each key
        let mut seen: HashMap<NodeKey, usize> = HashMap::new();
        let body = graph.body().to_vec();
        let mut keep = Vec::with_capacity(body.len());
        for (pos, &n) in body.iter().enumerate() {
            // uses of merged values now use the survivor
            let node = graph.node_mut(n);
            for v in &mut node.inputs {
                if let Some(&r) = replaced.get(v) {
                    *v = r;
                }
            }
            let node = graph.node(n);
            if node.op.is_random(&node.attrs) {
                keep.push(true);
                continue;
            }
            let mut inputs = node.inputs.clone();
            if self.commutative && is_commutative(node.op) {
                inputs.sort_unstable();
            }
            let key = NodeKey {
                op: node.op,
                inputs,
                attrs: attr_key(&node.attrs),
                results: node.outputs.iter().map(|&v| graph.ty(v).clone()).collect(),
            };
            match seen.get(&key) {
                Some(&first) => {
                    let survivor = graph.node(body[first]).outputs.clone();
                    for (&dup, &keep_v) in node.outputs.iter().zip(&survivor) {
                        replaced.insert(dup, keep_v);
                    }
                    cx.log(format!("merged #{pos} `{}` into #{first}", node.op));
                    keep.push(false);
                }
                None => {
                    seen.insert(key, pos);
                    keep.push(true);
                }
            }
        }
        if replaced.is_empty() {
            return Ok(Changed::No);
        }
        let outputs = graph
            .outputs()
            .iter()
            .map(|v| replaced.get(v).copied().unwrap_or(*v))
            .collect();
        graph.set_outputs(outputs);
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
    use drtc_ir::{verify, Attr, DType, GraphBuilder};

    fn t() -> TensorType {
        TensorType::new(DType::F32, vec![4, 8])
    }

    fn run(pass: Cse, g: &mut Graph) -> (Changed, Vec<String>) {
        let mut cx = PassContext::new();
        let changed = pass.run(g, &mut cx).unwrap();
        let errors: Vec<_> = verify(g).into_iter().filter(|e| e.is_error()).collect();
        assert!(errors.is_empty(), "{errors:?}");
        (changed, cx.take_decisions())
    }

    #[test]
    fn merges_duplicates_and_their_users() {
        let mut b = GraphBuilder::new("g");
        let x = b.input("x", t());
        let a1 = b.op1(Op::Exp, &[x], []).unwrap();
        let a2 = b.op1(Op::Exp, &[x], []).unwrap();
        let r1 = b.op1(Op::Relu, &[a1], []).unwrap();
        let r2 = b.op1(Op::Relu, &[a2], []).unwrap();
        let s = b.op1(Op::Sub, &[r1, r2], []).unwrap();
        let mut g = b.finish(vec![s, r2]);
        let (changed, log) = run(Cse::default(), &mut g);
        assert_eq!(changed, Changed::Yes);
        assert_eq!(log, ["merged #1 `exp` into #0", "merged #3 `relu` into #2"]);
        let ops: Vec<Op> = g.body().iter().map(|&n| g.node(n).op).collect();
        assert_eq!(ops, [Op::Exp, Op::Relu, Op::Sub]);
        let relu = g.node(g.body()[1]).outputs[0];
        assert_eq!(g.node(g.body()[2]).inputs, [relu, relu]);
        assert_eq!(g.outputs()[1], relu);
    }

    #[test]
    fn float_attrs_compare_by_bits() {
        let mut b = GraphBuilder::new("g");
        let x = b.input("x", t());
        let slope = |v: f64| [("negative_slope", Attr::Float(v))];
        let a = b.op1(Op::LeakyRelu, &[x], slope(0.0)).unwrap();
        let c = b.op1(Op::LeakyRelu, &[x], slope(-0.0)).unwrap();
        let d = b.op1(Op::LeakyRelu, &[x], slope(0.1 + 0.2)).unwrap();
        let e = b.op1(Op::LeakyRelu, &[x], slope(0.3)).unwrap();
        let f = b.op1(Op::LeakyRelu, &[x], slope(0.3)).unwrap();
        let mut g = b.finish(vec![a, c, d, e, f]);
        let (_, log) = run(Cse::default(), &mut g);
        assert_eq!(log, ["merged #4 `leaky_relu` into #3"]);
        assert_eq!(g.body().len(), 4);
    }

    #[test]
    fn random_ops_are_not_merged_but_deterministic_dropout_is() {
        let mut b = GraphBuilder::new("g");
        let x = b.input("x", t());
        let train = [("p", Attr::Float(0.5)), ("training", Attr::Bool(true))];
        let eval = [("p", Attr::Float(0.5)), ("training", Attr::Bool(false))];
        let zero = [("p", Attr::Float(0.0)), ("training", Attr::Bool(true))];
        let r1 = b.op1(Op::Dropout, &[x], train.clone()).unwrap();
        let r2 = b.op1(Op::Dropout, &[x], train).unwrap();
        let e1 = b.op1(Op::Dropout, &[x], eval.clone()).unwrap();
        let e2 = b.op1(Op::Dropout, &[x], eval).unwrap();
        let z1 = b.op1(Op::Dropout, &[x], zero.clone()).unwrap();
        let z2 = b.op1(Op::Dropout, &[x], zero).unwrap();
        let mut g = b.finish(vec![r1, r2, e1, e2, z1, z2]);
        let (_, log) = run(Cse::default(), &mut g);
        assert_eq!(
            log,
            ["merged #3 `dropout` into #2", "merged #5 `dropout` into #4"]
        );
    }

    #[test]
    fn commutative_operands_match_unless_disabled() {
        let build = || {
            let mut b = GraphBuilder::new("g");
            let x = b.input("x", t());
            let y = b.input("y", t());
            let a = b.op1(Op::Add, &[x, y], []).unwrap();
            let c = b.op1(Op::Add, &[y, x], []).unwrap();
            let s1 = b.op1(Op::Sub, &[x, y], []).unwrap();
            let s2 = b.op1(Op::Sub, &[y, x], []).unwrap();
            b.finish(vec![a, c, s1, s2])
        };
        let mut g = build();
        let (_, log) = run(Cse::default(), &mut g);
        assert_eq!(log, ["merged #1 `add` into #0"]);
        let mut g = build();
        let (changed, log) = run(Cse { commutative: false }, &mut g);
        assert_eq!(changed, Changed::No);
        assert!(log.is_empty());
    }

    #[test]
    fn different_attrs_do_not_merge() {
        let mut b = GraphBuilder::new("g");
        let x = b.input("x", t());
        let a = b
            .op1(Op::Cast, &[x], [("dtype", Attr::DType(DType::F16))])
            .unwrap();
        let c = b
            .op1(Op::Cast, &[x], [("dtype", Attr::DType(DType::BF16))])
            .unwrap();
        let mut g = b.finish(vec![a, c]);
        assert_eq!(run(Cse::default(), &mut g).0, Changed::No);
    }
}
