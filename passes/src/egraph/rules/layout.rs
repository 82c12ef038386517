//! Layout: transpose of transpose, permute chains, reshape chains (flatten, squeeze and
//! unsqueeze are reshapes of a contiguous tensor), reshapes and expands that change
//! nothing, and broadcasts that the consuming pointwise op would do anyway.

use crate::egraph::rule::{norm_dim, Build, Match, Rule};
use drtc_ir::{Attr, Op};

/// `?x` reshaped to the matched class's shape.
fn reshape_to_root(b: &mut Build) -> Option<egg::Id> {
    let m = b.m();
    let x = m.id("?x");
    let shape = m.root_ty()?.shape.clone();
    b.op(Op::Reshape, &[x], [("shape", Attr::Ints(shape))])
}

/// The normalized, sorted dim pair of a transpose's attributes `a` for rank `rank`.
fn pair(m: &Match, a: &str, rank: usize) -> Option<(usize, usize)> {
    let d0 = norm_dim(m.attr(a, "dim0")?.as_int()?, rank)?;
    let d1 = norm_dim(m.attr(a, "dim1")?.as_int()?, rank)?;
    Some((d0.min(d1), d0.max(d1)))
}

fn perm(m: &Match, a: &str, rank: usize) -> Option<Vec<usize>> {
    m.attr(a, "dims")?
        .as_ints()?
        .iter()
        .map(|&d| norm_dim(d, rank))
        .collect()
}

/// The same pointwise op on `?x` and `?y` without the expand: broadcasting does it.
fn drop_expand(b: &mut Build, op: Op, expand_first: bool) -> Option<egg::Id> {
    let (x, y) = (b.m().id("?x"), b.m().id("?y"));
    let ins = if expand_first { [y, x] } else { [x, y] };
    b.op(op, &ins, [])
}

pub fn rules() -> Vec<Rule> {
    let mut rules = vec![
        // transpose(transpose(x, a, b), a, b) = x.
        Rule::rewrite("transpose-transpose", "(transpose (transpose ?x ?a) ?b)", "?x")
            .when(|m| {
                let rank = m.ty("?x").map_or(0, |t| t.rank());
                pair(m, "?a", rank).is_some() && pair(m, "?a", rank) == pair(m, "?b", rank)
            })
            .test("x: f32[2, 3, 4] | (transpose (transpose x @dim0=-2;dim1=-1) @dim0=2;dim1=1) => x"),
        // permute(permute(x, p), q) = permute(x, p o q), and nothing when that is the
        // identity.
        Rule::build("permute-permute", "(permute (permute ?x ?a) ?b)", |b| {
            let m = b.m();
            let rank = m.ty("?x")?.rank();
            let (p, q) = (perm(&m, "?a", rank)?, perm(&m, "?b", rank)?);
            let composed: Vec<usize> = q.iter().map(|&i| p.get(i).copied()).collect::<Option<_>>()?;
            let x = m.id("?x");
            if composed.iter().enumerate().all(|(i, &d)| i == d) {
                return Some(x);
            }
            let dims = composed.into_iter().map(|d| d as i64).collect();
            b.op(Op::Permute, &[x], [("dims", Attr::Ints(dims))])
        })
        .test("x: f32[2, 3, 4] | (permute (permute x @dims=[1,2,0]) @dims=[2,0,1]) => x"),
        // reshape(reshape(x)) = reshape(x).
        Rule::build("reshape-reshape", "(reshape (reshape ?x ?a) ?b)", reshape_to_root)
            .test("x: f32[2, 3, 4] | (reshape (reshape x @shape=[6,4]) @shape=[2,12]) => (reshape x @shape=[2,12])"),
        // A reshape to the shape it already has is nothing.
        Rule::rewrite("reshape-same", "(reshape ?x ?a)", "?x")
            .when(|m| m.same_type_as_root("?x"))
            .test("x: f32[2, 3] | (reshape x @shape=[2,-1]) => x"),
        // An expand to the shape it already has is nothing.
        Rule::rewrite("expand-same", "(expand ?x ?a)", "?x")
            .when(|m| m.same_type_as_root("?x"))
            .test("x: f32[2, 3] | (expand x @shape=[2,3]) => x"),
    ];
    // flatten, squeeze and unsqueeze are reshapes (of a contiguous tensor)
    macro_rules! as_reshape {
        ($op:literal, $attrs:literal, $out:literal) => {
            Rule::build(
                concat!($op, "-as-reshape"),
                concat!("(", $op, " ?x ?a)"),
                reshape_to_root,
            )
            .test(concat!(
                "x: f32[2, 1, 4] | (reshape (",
                $op,
                " x ",
                $attrs,
                ") @shape=[",
                $out,
                "]) => (reshape x @shape=[",
                $out,
                "])"
            ))
        };
    }
    rules.extend([
        // flatten(x) is a reshape.
        as_reshape!("flatten", "@start_dim=1", "4,2"),
        // squeeze(x) is a reshape.
        as_reshape!("squeeze", "@dim=[1]", "8"),
        // unsqueeze(x) is a reshape.
        as_reshape!("unsqueeze", "@dim=0", "1,8"),
    ]);
    // a pointwise op broadcasts by itself: expand(y) as an operand is y, when the result
    // type stays the same (the builder checks)
    macro_rules! no_expand {
        ($op:literal, $variant:expr) => {
            [
                Rule::build(
                    concat!($op, "-expand"),
                    concat!("(", $op, " ?x (expand ?y ?a))"),
                    |b| drop_expand(b, $variant, false),
                )
                .test(concat!(
                    "x: f32[4, 8], y: f32[8] | (",
                    $op,
                    " x (expand y @shape=[4,8])) => (",
                    $op,
                    " x y)"
                )),
                Rule::build(
                    concat!("expand-", $op),
                    concat!("(", $op, " (expand ?y ?a) ?x)"),
                    |b| drop_expand(b, $variant, true),
                )
                .test(concat!(
                    "x: f32[4, 8], y: f32[8] | (",
                    $op,
                    " (expand y @shape=[4,8]) x) => (",
                    $op,
                    " y x)"
                )),
            ]
        };
    }
    rules.extend(no_expand!("add", Op::Add));
    rules.extend(no_expand!("sub", Op::Sub));
    rules.extend(no_expand!("mul", Op::Mul));
    rules.extend(no_expand!("div", Op::Div));
    rules
}
