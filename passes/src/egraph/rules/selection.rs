//! Selection: a `select` (one index of one dim, as in `states[:, -1]`) moves toward the
//! inputs, so that only the selected part is computed. Through a `permute` it selects the
//! permuted dim; through a `reshape` that keeps the selected dim whole (the dims before it
//! hold as many elements before as after the reshape) it selects that dim of the input;
//! through a `matmul` a row of the product is the product of the row (`narrow` to one row,
//! the product, then the row), a column the product with the column, and a batch index
//! the product of the two operands' batch entries; through a broadcasting `add`, `sub`,
//! `mul` or `div` it selects each operand's entry (index 0 of a broadcast dim, nothing in an
//! operand without the dim); through a `sum` over other dims it selects the input's dim
//! before the sum. Each step is exact: the same arithmetic on fewer elements. The cost
//! model takes it where it moves fewer bytes.

use crate::egraph::rule::{norm_dim, Build, Rule};
use drtc_ir::op::broadcast_shapes;
use drtc_ir::{Attr, Op};

/// The select's dim and index, normalized for the matched class's input of `shape`.
fn selected(b: &Build, shape: &[i64]) -> Option<(usize, i64)> {
    let m = b.m();
    let d = norm_dim(m.attr("?s", "dim")?.as_int()?, shape.len())?;
    let size = shape[d];
    let i = m.attr("?s", "index")?.as_int()?;
    let i = if i < 0 { i + size } else { i };
    (0..size).contains(&i).then_some((d, i))
}

fn select(b: &mut Build, x: egg::Id, dim: usize, index: i64) -> Option<egg::Id> {
    b.op(
        Op::Select,
        &[x],
        [("dim", Attr::Int(dim as i64)), ("index", Attr::Int(index))],
    )
}

/// `select(permute(x, p), d, i)` -> `permute(select(x, p[d], i), p')`.
fn through_permute(b: &mut Build) -> Option<egg::Id> {
    let m = b.m();
    let (x, xt) = (m.id("?x"), m.ty("?x")?.clone());
    let rank = xt.rank();
    let p: Vec<usize> = m
        .attr("?a", "dims")?
        .as_ints()?
        .iter()
        .map(|&d| norm_dim(d, rank))
        .collect::<Option<_>>()?;
    let permuted: Vec<i64> = p.iter().map(|&j| xt.shape[j]).collect();
    let (d, i) = selected(b, &permuted)?;
    let inner = select(b, x, p[d], i)?;
    let rest: Vec<i64> = p
        .iter()
        .filter(|&&j| j != p[d])
        .map(|&j| (j - usize::from(j > p[d])) as i64)
        .collect();
    if rest.iter().enumerate().all(|(k, &j)| k as i64 == j) {
        return Some(inner);
    }
    b.op(Op::Permute, &[inner], [("dims", Attr::Ints(rest))])
}

/// `select(reshape(x), d, i)` -> `reshape(select(x, d', i))` where dim `d` of the reshape
/// is dim `d'` of `x`, whole: the same size, with as many elements before it.
fn through_reshape(b: &mut Build) -> Option<egg::Id> {
    let m = b.m();
    let (x, xs) = (m.id("?x"), m.ty("?x")?.shape.clone());
    let out = m.root_ty()?.clone();
    // the reshape's shape, its one -1 resolved
    let mut reshaped = m.attr("?a", "shape")?.as_ints()?.to_vec();
    let known: i64 = reshaped.iter().filter(|&&v| v != -1).product();
    let numel: i64 = xs.iter().product();
    for v in reshaped.iter_mut().filter(|v| **v == -1) {
        *v = if known == 0 { 0 } else { numel / known };
    }
    let (d, i) = selected(b, &reshaped)?;
    let before: i64 = reshaped[..d].iter().product();
    let dx = (0..xs.len())
        .find(|&k| xs[k] == reshaped[d] && xs[..k].iter().product::<i64>() == before)?;
    let inner = select(b, x, dx, i)?;
    let y = b.op(
        Op::Reshape,
        &[inner],
        [("shape", Attr::Ints(out.shape.clone()))],
    )?;
    (b.ty(y)? == out).then_some(y)
}

/// `select(matmul(x, y), d, i)` for operands of the product's rank: a row (`d` the
/// product's second-to-last dim) is the product of `x`'s row, a column the product with
/// `y`'s column (each narrowed to one, then selected, so the rule does not apply again),
/// a batch index the product of both operands' entries (index 0 of a broadcast dim).
fn through_matmul(b: &mut Build) -> Option<egg::Id> {
    let m = b.m();
    let (x, y) = (m.id("?x"), m.id("?y"));
    let (xt, yt) = (m.ty("?x")?.clone(), m.ty("?y")?.clone());
    let r = xt.rank();
    if r < 2 || yt.rank() != r || !xt.dtype.is_float() {
        return None;
    }
    // the product's shape: broadcast batch dims, then rows of x, columns of y
    let mut shape = broadcast_shapes(&xt.shape[..r - 2], &yt.shape[..r - 2]).ok()?;
    shape.extend([xt.shape[r - 2], yt.shape[r - 1]]);
    let (d, i) = selected(b, &shape)?;
    let narrow = |b: &mut Build, v: egg::Id, dim: usize| {
        b.op(
            Op::Narrow,
            &[v],
            [
                ("dim", Attr::Int(dim as i64)),
                ("start", Attr::Int(i)),
                ("length", Attr::Int(1)),
            ],
        )
    };
    let p = if d >= r - 2 {
        if shape[d] == 1 {
            return None;
        }
        let (x, y) = if d == r - 2 {
            (narrow(b, x, d)?, y)
        } else {
            (x, narrow(b, y, d)?)
        };
        b.op(Op::Matmul, &[x, y], [])?
    } else {
        let entry =
            |b: &mut Build, v: egg::Id, size: i64| select(b, v, d, if size == 1 { 0 } else { i });
        let xs = entry(b, x, xt.shape[d])?;
        let ys = entry(b, y, yt.shape[d])?;
        return b.op(Op::Matmul, &[xs, ys], []);
    };
    select(b, p, d, 0)
}

/// `select(op(x, y), d, i)` -> `op(select(x, ..), select(y, ..))` for a broadcasting binary
/// `op`: each operand's own dim (aligned from the right) at index `i`, or index 0 where it
/// broadcasts from size 1; an operand of lower rank without the dim is left whole.
fn through_binary(b: &mut Build, op: Op) -> Option<egg::Id> {
    let m = b.m();
    let (x, y) = (m.id("?x"), m.id("?y"));
    let (xt, yt) = (m.ty("?x")?.clone(), m.ty("?y")?.clone());
    let out = m.root_ty()?.clone();
    let shape = broadcast_shapes(&xt.shape, &yt.shape).ok()?;
    let (d, i) = selected(b, &shape)?;
    let rank = shape.len();
    let entry = |b: &mut Build, v: egg::Id, vs: &[i64]| {
        let r = vs.len();
        if d + r < rank {
            return Some(v);
        }
        let dv = d + r - rank;
        select(b, v, dv, if vs[dv] == 1 { 0 } else { i })
    };
    let xs = entry(b, x, &xt.shape)?;
    let ys = entry(b, y, &yt.shape)?;
    let z = b.op(op, &[xs, ys], [])?;
    (b.ty(z)? == out).then_some(z)
}

/// `select(sum(x, dims), d, i)` -> `sum(select(x, d', i), dims')` where output dim `d` is
/// input dim `d'`, one the sum keeps (with `keepdim`, a reduced dim of size 1 is left).
fn through_sum(b: &mut Build) -> Option<egg::Id> {
    let m = b.m();
    let (x, xt) = (m.id("?x"), m.ty("?x")?.clone());
    let out = m.root_ty()?.clone();
    let rank = xt.rank();
    let dims = m.dims("?a", rank)?;
    let keepdim = m.keepdim("?a");
    if m.attrs("?a")?
        .get("dtype")
        .is_some_and(|a| !matches!(a, Attr::None))
    {
        return None;
    }
    let kept: Vec<usize> = (0..rank).filter(|k| keepdim || !dims.contains(k)).collect();
    let summed: Vec<i64> = kept
        .iter()
        .map(|&k| if dims.contains(&k) { 1 } else { xt.shape[k] })
        .collect();
    let (d, i) = selected(b, &summed)?;
    let dx = kept[d];
    if dims.contains(&dx) {
        return None;
    }
    let inner = select(b, x, dx, i)?;
    let moved: Vec<i64> = dims
        .iter()
        .map(|&k| (k - usize::from(k > dx)) as i64)
        .collect();
    let z = b.op(
        Op::Sum,
        &[inner],
        [("dim", Attr::Ints(moved)), ("keepdim", Attr::Bool(keepdim))],
    )?;
    (b.ty(z)? == out).then_some(z)
}

pub fn rules() -> Vec<Rule> {
    vec![
        // permute(x, p)[.., i, ..] = permute(x[.., i at p[d], ..], p without d).
        Rule::build("select-permute", "(select (permute ?x ?a) ?s)", through_permute)
            .test("x: f32[2, 3, 4], y: f32[2, 4, 5] | (select (permute (matmul x y) @dims=[0,2,1]) @dim=2;index=-2) => (select (matmul (narrow x @dim=1;start=1;length=1) y) @dim=1;index=0)"),
        // reshape(x)[.., i, ..] = reshape(x[.., i, ..]) where the reshape keeps that dim whole.
        Rule::build("select-reshape", "(select (reshape ?x ?a) ?s)", through_reshape)
            .test("x: f32[6, 3, 4], y: f32[6, 4, 8] | (select (reshape (matmul x y) @shape=[2,3,3,8]) @dim=2;index=2) => (reshape (select (matmul (narrow x @dim=1;start=2;length=1) y) @dim=1;index=0) @shape=[2,3,8])"),
        // (x @ y)[.., i, :] = (x[.., i:i+1, :] @ y)[.., 0, :], and likewise a column or a batch entry.
        Rule::build("select-matmul", "(select (matmul ?x ?y) ?s)", through_matmul)
            .test("x: f32[2, 3, 4], y: f32[2, 4, 5] | (select (matmul x y) @dim=1;index=2) => (select (matmul (narrow x @dim=1;start=2;length=1) y) @dim=1;index=0)"),
        // (x * y)[.., i, ..] = x[.., i, ..] * y[.., i or 0, ..], and likewise +, -, /.
        Rule::build("select-mul", "(select (mul ?x ?y) ?s)", |b| through_binary(b, Op::Mul))
            .test("x: f32[2, 3, 4], y: f32[3, 1] | (select (mul x y) @dim=1;index=2) => (mul (select x @dim=1;index=2) (select y @dim=0;index=2))"),
        Rule::build("select-add", "(select (add ?x ?y) ?s)", |b| through_binary(b, Op::Add))
            .test("x: f32[2, 3], y: f32[3] | (select (add x y) @dim=0;index=-1) => (add (select x @dim=0;index=1) y)"),
        Rule::build("select-sub", "(select (sub ?x ?y) ?s)", |b| through_binary(b, Op::Sub))
            .test("x: f32[2, 3], y: f32[2, 3] | (select (sub x y) @dim=1;index=0) => (sub (select x @dim=1;index=0) (select y @dim=1;index=0))"),
        Rule::build("select-div", "(select (div ?x ?y) ?s)", |b| through_binary(b, Op::Div))
            .test("x: f32[2, 3], y: f32[2, 1] | (select (div x y) @dim=1;index=2) => (div (select x @dim=1;index=2) (select y @dim=1;index=0))"),
        // sum(x, dims)[.., i, ..] = sum(x[.., i, ..], dims) where the sum keeps that dim.
        Rule::build("select-sum", "(select (sum ?x ?a) ?s)", through_sum)
            .test("x: f32[2, 3, 4, 5] | (select (sum x @dim=[1]) @dim=1;index=3) => (sum (select x @dim=2;index=3) @dim=[1])"),
    ]
}
