//! The e-class analysis, types and constants: every tensor e-class carries its type (dtype
//! and shape), so rules can depend on shapes (a reduction over a dimension of size 1, a
//! broadcast that changes nothing), and the fill value when it is a constant. Scalar
//! pointwise arithmetic on constants is folded here (a `full` node joins the class), in f64
//! and for float dtypes only, so folding never changes an integer result.

use super::lang::{AttrSet, TNode};
use drtc_ir::op::AttrView;
use drtc_ir::{Attr, Attrs, DType, Op, TensorType};
use egg::{DidMerge, EGraph, Id};

/// The e-graph drtc rewrites.
pub type TGraph = EGraph<TNode, TypeAnalysis>;

/// Per-class facts.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassData {
    /// The tensor type (none for attribute leaves, or a node that failed to type).
    pub ty: Option<TensorType>,
    /// The attributes, for attribute leaves.
    pub attrs: Option<Attrs>,
    /// The fill value, when every element of the class is the same known constant.
    pub konst: Option<f64>,
}

/// The analysis: knows the graph's input types.
#[derive(Clone, Debug, Default)]
pub struct TypeAnalysis {
    pub input_types: Vec<TensorType>,
}

/// Evaluates a scalar pointwise op on constants in f64 (`None` if not foldable): the op's
/// own evaluation (`drtc_ir::op::pointwise`), for as many operands as it takes, when the
/// result is finite.
pub fn fold(op: Op, args: &[f64], attrs: &Attrs) -> Option<f64> {
    let eval = op.pointwise()?.eval?;
    if !op.def().arity.accepts(args.len()) {
        return None;
    }
    eval(args, AttrView(attrs)).filter(|v| v.is_finite())
}

/// Whether [`fold`] evaluates `op` on constants (one or two f64 operands, its attributes).
pub fn folds(op: Op) -> bool {
    let attrs = op.normalize_attrs(&Attrs::new()).unwrap_or_default();
    let args: &[f64] = match op.def().arity {
        drtc_ir::op::Arity::Exact(2) => &[0.5, 0.25],
        _ => &[0.5],
    };
    fold(op, args, &attrs).is_some()
}

fn attrs_of(egraph: &TGraph, node: &TNode) -> Attrs {
    node.attrs_child()
        .and_then(|a| egraph[a].data.attrs.clone())
        .unwrap_or_default()
}

impl egg::Analysis<TNode> for TypeAnalysis {
    type Data = ClassData;

    fn make(egraph: &mut TGraph, enode: &TNode, _id: Id) -> ClassData {
        match enode {
            TNode::Input(i) => ClassData {
                ty: egraph.analysis.input_types.get(*i as usize).cloned(),
                attrs: None,
                konst: None,
            },
            TNode::Attrs(a) => ClassData {
                ty: None,
                attrs: Some(a.to_attrs()),
                konst: None,
            },
            TNode::Op { op, .. } => {
                let attrs = attrs_of(egraph, enode);
                let tys: Option<Vec<TensorType>> = enode
                    .inputs()
                    .iter()
                    .map(|&c| egraph[c].data.ty.clone())
                    .collect();
                let ty = tys.and_then(|tys| {
                    let refs: Vec<&TensorType> = tys.iter().collect();
                    let out = op.infer(&refs, &attrs).ok()?;
                    (out.len() == 1).then(|| out[0].clone())
                });
                let konst = if *op == Op::Full {
                    attrs.get("value").and_then(Attr::as_float)
                } else if ty
                    .as_ref()
                    .is_some_and(|t| t.rank() == 0 && t.dtype.is_float())
                    && op.category() == drtc_ir::Category::Pointwise
                {
                    let args: Option<Vec<f64>> = enode
                        .inputs()
                        .iter()
                        .map(|&c| {
                            let d = &egraph[c].data;
                            match &d.ty {
                                Some(t) if t.rank() == 0 && t.dtype.is_float() => d.konst,
                                _ => None,
                            }
                        })
                        .collect();
                    args.and_then(|args| fold(*op, &args, &attrs))
                } else {
                    None
                };
                ClassData {
                    ty,
                    attrs: None,
                    konst,
                }
            }
        }
    }

    fn merge(&mut self, a: &mut ClassData, b: ClassData) -> DidMerge {
        let mut changed_a = false;
        if a.ty.is_none() && b.ty.is_some() {
            a.ty = b.ty.clone();
            changed_a = true;
        }
        if a.konst.is_none() && b.konst.is_some() {
            a.konst = b.konst;
            changed_a = true;
        }
        let changed_b = a.ty != b.ty || a.konst != b.konst;
        DidMerge(changed_a, changed_b)
    }

    fn modify(egraph: &mut TGraph, id: Id) {
        let data = &egraph[id].data;
        let (Some(v), Some(ty)) = (data.konst, data.ty.clone()) else {
            return;
        };
        if ty.rank() != 0 || !ty.dtype.is_float() {
            return;
        }
        let already = egraph[id]
            .nodes
            .iter()
            .any(|n| matches!(n, TNode::Op { op: Op::Full, .. }));
        if !already {
            let c = add_constant(egraph, v, ty.dtype);
            egraph.union(id, c);
        }
    }
}

/// Adds a scalar constant `full() {shape = [], value, dtype}`.
pub fn add_constant(egraph: &mut TGraph, value: f64, dtype: DType) -> Id {
    let mut attrs = Attrs::new();
    attrs.insert("shape".into(), Attr::Ints(vec![]));
    attrs.insert("value".into(), Attr::Float(value));
    attrs.insert("dtype".into(), Attr::DType(dtype));
    let a = egraph.add(TNode::Attrs(AttrSet::from_attrs(&attrs)));
    egraph.add(TNode::Op {
        op: Op::Full,
        nonce: 0,
        children: vec![a],
    })
}
