//! The e-class analysis: every tensor e-class carries its type (dtype and shape), so rules
//! can depend on shapes (a reduction over a dimension of size 1, a broadcast that changes
//! nothing), and the fill value when it is a constant. Scalar pointwise arithmetic on
//! constants is folded here (a `full` node joins the class), in f64 and for float dtypes
//! only, so folding never changes an integer result.

use super::lang::{AttrSet, TNode};
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

/// Evaluates a scalar pointwise op on constants in f64 (`None` if not foldable).
pub fn fold(op: Op, args: &[f64], attrs: &Attrs) -> Option<f64> {
    let a = *args.first()?;
    let b = args.get(1).copied();
    // a unary op folds only without a second operand
    let unary = |v: f64| b.is_none().then_some(v);
    let v = match op {
        Op::Add => a + b?,
        Op::Sub => a - b?,
        Op::Mul => a * b?,
        Op::Div => a / b?,
        Op::Maximum => a.max(b?),
        Op::Minimum => a.min(b?),
        Op::Pow => a.powf(b?),
        Op::Neg => unary(-a)?,
        Op::Abs => unary(a.abs())?,
        Op::Exp => unary(a.exp())?,
        Op::Log => unary(a.ln())?,
        Op::Sqrt => unary(a.sqrt())?,
        Op::Rsqrt => unary(1.0 / a.sqrt())?,
        Op::Reciprocal => unary(1.0 / a)?,
        Op::Tanh => unary(a.tanh())?,
        Op::Sigmoid => unary(1.0 / (1.0 + (-a).exp()))?,
        Op::Relu => unary(a.max(0.0))?,
        Op::Clamp => {
            let lo = attrs.get("min").and_then(Attr::as_float);
            let hi = attrs.get("max").and_then(Attr::as_float);
            let x = lo.map_or(a, |l| a.max(l));
            unary(hi.map_or(x, |h| x.min(h)))?
        }
        // not folded (yet): the e-graph keeps these as nodes
        Op::Full
        | Op::Cast
        | Op::Dropout
        | Op::Lerp
        | Op::Eq
        | Op::Ne
        | Op::Lt
        | Op::Le
        | Op::Gt
        | Op::Ge
        | Op::Where
        | Op::LeakyRelu
        | Op::Silu
        | Op::Gelu
        | Op::Selu
        | Op::Hardsigmoid
        | Op::Hardswish
        | Op::Softplus
        | Op::Softsign
        | Op::Elu
        | Op::Hardtanh
        | Op::Logsigmoid
        | Op::Mish
        | Op::Sign
        | Op::Cos
        | Op::Sin
        | Op::Exp2
        | Op::Erf
        | Op::Sum
        | Op::Mean
        | Op::Prod
        | Op::Max
        | Op::Min
        | Op::Argmax
        | Op::Argmin
        | Op::Var
        | Op::Std
        | Op::Norm
        | Op::Logsumexp
        | Op::Softmax
        | Op::LogSoftmax
        | Op::Aten
        | Op::Cumsum
        | Op::Cumprod
        | Op::Cummax
        | Op::Cummin
        | Op::MseLoss
        | Op::SmoothL1Loss
        | Op::KlDiv
        | Op::CrossEntropy
        | Op::TripletMarginLoss
        | Op::Matmul
        | Op::Bmm
        | Op::Linear
        | Op::Einsum
        | Op::Attention
        | Op::Conv1d
        | Op::Conv2d
        | Op::Conv3d
        | Op::ConvTranspose1d
        | Op::ConvTranspose2d
        | Op::ConvTranspose3d
        | Op::MaxPool1d
        | Op::MaxPool2d
        | Op::MaxPool3d
        | Op::AvgPool1d
        | Op::AvgPool2d
        | Op::AvgPool3d
        | Op::AdaptiveAvgPool1d
        | Op::AdaptiveAvgPool2d
        | Op::AdaptiveAvgPool3d
        | Op::BatchNorm
        | Op::LayerNorm
        | Op::GroupNorm
        | Op::InstanceNorm
        | Op::RmsNorm
        | Op::Transpose
        | Op::Permute
        | Op::Reshape
        | Op::Flatten
        | Op::Squeeze
        | Op::Unsqueeze
        | Op::Expand
        | Op::Narrow
        | Op::Slice
        | Op::Select
        | Op::Flip
        | Op::Diag
        | Op::Triu
        | Op::Tril
        | Op::Cat
        | Op::Stack => return None,
    };
    v.is_finite().then_some(v)
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
