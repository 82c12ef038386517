//! One example application per op: input types and attributes its inference rule
//! accepts. `drtc ops` builds a one-op program from each to ask every layer what it does
//! with the op (`tests.rs` checks that every example type-checks).

use super::pointwise::PointwiseDef;
use super::{Arity, Kind, Op, Pool};
use crate::{Attr, BuildError, DType, Graph, GraphBuilder, TensorType};

/// Input types and the attributes that are not defaults.
#[derive(Clone, Debug)]
pub struct Example {
    pub inputs: Vec<TensorType>,
    pub attrs: Vec<(&'static str, Attr)>,
}

fn f32(shape: &[i64]) -> TensorType {
    TensorType::new(DType::F32, shape.to_vec())
}

fn ints(v: &[i64]) -> Attr {
    Attr::Ints(v.to_vec())
}

/// The example application of `op`.
pub fn example(op: Op) -> Example {
    let x = f32(&[4, 8]);
    let ex = |inputs: Vec<TensorType>, attrs: Vec<(&'static str, Attr)>| Example { inputs, attrs };
    let unary = || ex(vec![x.clone()], vec![]);
    let binary = || ex(vec![x.clone(), x.clone()], vec![]);
    let img = |n: usize| {
        let mut s = vec![2, 3];
        s.extend(vec![6; n]);
        f32(&s)
    };
    let conv = |n: usize, transposed: bool| {
        let mut w = if transposed { vec![3, 4] } else { vec![4, 3] };
        w.extend(vec![3; n]);
        ex(vec![img(n), f32(&w), f32(&[4])], vec![])
    };
    let pool = |n: usize| ex(vec![img(n)], vec![("kernel_size", ints(&vec![2; n]))]);
    let adaptive = |n: usize| ex(vec![img(n)], vec![("output_size", ints(&vec![1; n]))]);
    let channels = || ex(vec![f32(&[4, 3, 6, 6]), f32(&[3]), f32(&[3])], vec![]);
    let dim = |d: i64| ex(vec![x.clone()], vec![("dim", Attr::Int(d))]);
    let dims = || ex(vec![x.clone()], vec![("dim", ints(&[1]))]);
    if let Some(pw) = op.pointwise() {
        return pointwise(op, pw);
    }
    match op.kind() {
        Kind::Conv { rank, transposed } => return conv(rank, transposed),
        Kind::Window(Pool::AdaptiveAvg, rank) => return adaptive(rank),
        Kind::Window(Pool::Max | Pool::Avg, rank) => return pool(rank),
        Kind::Creation
        | Kind::Pointwise
        | Kind::Reduce
        | Kind::Scan
        | Kind::Loss
        | Kind::Norm
        | Kind::Product
        | Kind::Composite
        | Kind::Opaque
        | Kind::View
        | Kind::Copy => {}
    }
    match op {
        // an opaque call of one input: `torch.ops.aten.sinh.default(x)`
        Op::Aten => ex(
            vec![x.clone()],
            vec![
                ("target", Attr::Str("aten.sinh.default".into())),
                ("args", Attr::Str("$0".into())),
                ("types", Attr::Str("f32[4, 8]".into())),
            ],
        ),
        Op::Full => ex(
            vec![],
            vec![("shape", ints(&[4, 8])), ("value", Attr::Float(1.0))],
        ),
        Op::Arange => ex(vec![], vec![("end", Attr::Int(8))]),
        Op::MseLoss | Op::SmoothL1Loss | Op::KlDiv => binary(),
        Op::TripletMarginLoss => ex(vec![x.clone(), x.clone(), x.clone()], vec![]),
        Op::Sum
        | Op::Mean
        | Op::Prod
        | Op::Max
        | Op::Min
        | Op::Var
        | Op::Std
        | Op::Norm
        | Op::Logsumexp => dims(),
        Op::Argmax
        | Op::Argmin
        | Op::Softmax
        | Op::LogSoftmax
        | Op::Cumsum
        | Op::Cumprod
        | Op::Cummax
        | Op::Cummin => dim(1),
        Op::CrossEntropy => ex(
            vec![x.clone(), TensorType::new(DType::I64, vec![4])],
            vec![],
        ),
        Op::Matmul => ex(vec![x.clone(), f32(&[8, 16])], vec![]),
        Op::Bmm => ex(vec![f32(&[2, 4, 8]), f32(&[2, 8, 16])], vec![]),
        Op::Linear => ex(vec![x.clone(), f32(&[16, 8]), f32(&[16])], vec![]),
        Op::Einsum => ex(
            vec![x.clone(), f32(&[8, 16])],
            vec![("equation", Attr::Str("ij,jk->ik".into()))],
        ),
        Op::Attention => ex(
            vec![f32(&[2, 4, 8]), f32(&[2, 6, 8]), f32(&[2, 6, 8])],
            vec![],
        ),
        Op::BatchNorm | Op::InstanceNorm => channels(),
        Op::LayerNorm => ex(
            vec![x.clone(), f32(&[8]), f32(&[8])],
            vec![("normalized_shape", ints(&[8]))],
        ),
        Op::RmsNorm => ex(
            vec![x.clone(), f32(&[8])],
            vec![("normalized_shape", ints(&[8]))],
        ),
        Op::GroupNorm => ex(
            vec![f32(&[4, 6, 8]), f32(&[6]), f32(&[6])],
            vec![("num_groups", Attr::Int(2))],
        ),
        Op::Transpose => ex(
            vec![x.clone()],
            vec![("dim0", Attr::Int(0)), ("dim1", Attr::Int(1))],
        ),
        Op::Permute => ex(vec![x.clone()], vec![("dims", ints(&[1, 0]))]),
        Op::Reshape => ex(vec![x.clone()], vec![("shape", ints(&[8, 4]))]),
        Op::Flatten => ex(vec![f32(&[2, 4, 8])], vec![]),
        Op::Squeeze => ex(vec![f32(&[4, 1, 8])], vec![("dim", ints(&[1]))]),
        Op::Unsqueeze => dim(0),
        Op::Expand => ex(vec![f32(&[1, 8])], vec![("shape", ints(&[4, 8]))]),
        Op::Narrow => ex(
            vec![x.clone()],
            vec![
                ("dim", Attr::Int(1)),
                ("start", Attr::Int(0)),
                ("length", Attr::Int(4)),
            ],
        ),
        Op::Slice => ex(
            vec![x.clone()],
            vec![("dim", Attr::Int(1)), ("end", Attr::Int(4))],
        ),
        Op::Select => ex(
            vec![x.clone()],
            vec![("dim", Attr::Int(0)), ("index", Attr::Int(1))],
        ),
        Op::Flip => ex(vec![x.clone()], vec![("dims", ints(&[1]))]),
        Op::Pad => ex(
            vec![x.clone()],
            vec![("pad", ints(&[1, 2, -1, 1])), ("value", Attr::Float(-0.5))],
        ),
        Op::Diag | Op::Triu | Op::Tril => unary(),
        Op::Cat | Op::Stack => binary(),
        // a pointwise op's example derives from its facts (`pointwise`), a window's or a
        // convolution's from its kind (above); `tests.rs` builds every op's example
        _ => unreachable!("`{op}`'s example derives from its facts or kind"),
    }
}

/// A pointwise op's example: `f32[4, 8]` inputs (other dtypes where its facts say), as
/// many as it takes, and the attributes its facts set.
fn pointwise(op: Op, pw: &PointwiseDef) -> Example {
    let n = match op.def().arity {
        Arity::Exact(n) | Arity::Range(n, _) | Arity::AtLeast(n) => n,
    };
    let inputs = (0..n)
        .map(|i| {
            let dtype = pw.example.dtypes.get(i).copied().unwrap_or(DType::F32);
            TensorType::new(dtype, vec![4, 8])
        })
        .collect();
    let attrs = pw
        .example
        .attrs
        .iter()
        .map(|&(name, v)| (name, v.value().expect("an example attribute has a value")))
        .collect();
    Example { inputs, attrs }
}

/// A program applying `op` once to its example inputs (`x0`, `x1`, ...), returning every
/// result.
pub fn example_graph(op: Op) -> Result<Graph, BuildError> {
    let e = example(op);
    let mut b = GraphBuilder::new(format!("{}_example", op.name()));
    let inputs: Vec<_> = e
        .inputs
        .iter()
        .enumerate()
        .map(|(i, t)| b.input(format!("x{i}"), t.clone()))
        .collect();
    let outs = b.op(op, &inputs, e.attrs)?;
    Ok(b.finish(outs))
}
