//! The seed-format emitter on hand-built graphs (snapshots), and its refusal of ops it has
//! no spelling for.

use drtc_ir::{Attr, DType, GraphBuilder, Op, TensorType};
use drtc_synth::emit_seed;

#[test]
fn conv_pool_norm_reduction_program() {
    let mut b = GraphBuilder::new("fused_operator");
    let x = b.input("tensor_0", TensorType::new(DType::F32, vec![2, 4, 16, 16]));
    let w = b.input("tensor_1", TensorType::new(DType::F32, vec![8, 2, 3, 3]));
    let gw = b.input("tensor_2", TensorType::new(DType::F32, vec![8]));
    let gb = b.input("tensor_3", TensorType::new(DType::F32, vec![8]));
    let c = b
        .op1(
            Op::Conv2d,
            &[x, w],
            [
                ("stride", Attr::Ints(vec![2, 1])),
                ("padding", Attr::Ints(vec![1, 0])),
                ("groups", Attr::Int(2)),
            ],
        )
        .unwrap();
    let g = b
        .op1(Op::GroupNorm, &[c, gw, gb], [("num_groups", Attr::Int(4))])
        .unwrap();
    let p = b
        .op1(
            Op::MaxPool2d,
            &[g],
            [
                ("kernel_size", Attr::Ints(vec![3, 3])),
                ("stride", Attr::Ints(vec![1, 2])),
            ],
        )
        .unwrap();
    let s = b
        .op1(
            Op::Max,
            &[p],
            [("dim", Attr::Ints(vec![1])), ("keepdim", Attr::Bool(true))],
        )
        .unwrap();
    let a = b.op1(Op::Argmax, &[s], [("dim", Attr::Int(-1))]).unwrap();
    let f = b
        .op1(Op::Cast, &[a], [("dtype", Attr::DType(DType::F32))])
        .unwrap();
    let v = b
        .op1(Op::Var, &[p], [("dim", Attr::Ints(vec![0]))])
        .unwrap();
    let t = b
        .op1(
            Op::Transpose,
            &[v],
            [("dim0", Attr::Int(-2)), ("dim1", Attr::Int(-1))],
        )
        .unwrap();
    let g = b.finish(vec![f, t]);
    insta::assert_snapshot!(emit_seed(&g).unwrap());
}

#[test]
fn pointwise_and_structure_program() {
    let mut b = GraphBuilder::new("fused_operator");
    let x = b.input("tensor_0", TensorType::new(DType::F32, vec![3, 5]));
    let y = b.input("tensor_1", TensorType::new(DType::F32, vec![5]));
    let z = b.input("tensor_2", TensorType::new(DType::F32, vec![3, 1]));
    let l = b.op1(Op::Lerp, &[x, y, z], []).unwrap();
    let c = b
        .op1(
            Op::Clamp,
            &[l],
            [("min", Attr::Float(-0.5)), ("max", Attr::Float(2.0))],
        )
        .unwrap();
    let g = b
        .op1(Op::Gelu, &[c], [("approximate", Attr::Str("tanh".into()))])
        .unwrap();
    let st = b.op1(Op::Stack, &[g, x], [("dim", Attr::Int(1))]).unwrap();
    let cm = b.op1(Op::Cummax, &[st], [("dim", Attr::Int(2))]).unwrap();
    let ln = b
        .op1(
            Op::LayerNorm,
            &[cm],
            [("normalized_shape", Attr::Ints(vec![5]))],
        )
        .unwrap();
    let tr = b
        .op1(Op::Triu, &[ln], [("diagonal", Attr::Int(-1))])
        .unwrap();
    let g = b.finish(vec![tr]);
    insta::assert_snapshot!(emit_seed(&g).unwrap());
}

#[test]
fn ops_without_a_spelling_are_errors() {
    let mut b = GraphBuilder::new("fused_operator");
    let x = b.input("tensor_0", TensorType::new(DType::F32, vec![3, 5]));
    let y = b.input("tensor_1", TensorType::new(DType::F32, vec![3, 5]));
    let e = b.op1(Op::Eq, &[x, y], []).unwrap();
    let g = b.finish(vec![e]);
    assert!(emit_seed(&g).unwrap_err().to_string().contains("`eq`"));
}
