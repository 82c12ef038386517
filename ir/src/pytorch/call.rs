//! One IR node as a PyTorch call: the expression that computes it with `torch` APIs, in
//! either dialect (see [`Dialect`]).

use super::literal::{int_if_whole, literal, py};
use super::Dialect;
use crate::{Attr, Attrs, Kind, Op, TensorType};

fn a<'x>(attrs: &'x Attrs, name: &str) -> &'x Attr {
    attrs
        .get(name)
        .unwrap_or_else(|| panic!("attributes are normalized: `{name}` is present"))
}

fn kw(attrs: &Attrs, names: &[&str], d: Dialect) -> String {
    names
        .iter()
        .map(|n| format!(", {n}={}", literal(a(attrs, n), d)))
        .collect()
}

fn opt(args: &[String], i: usize) -> String {
    args.get(i).cloned().unwrap_or_else(|| "None".into())
}

/// A pointwise op's call: `torch.<name>` when PyTorch spells it so, else
/// `torch.nn.functional.<name>`, on its arguments, with every attribute as a keyword (in
/// the table's order).
fn pointwise_call(op: Op, attrs: &Attrs, args: &[String], d: Dialect) -> String {
    let def = op.def();
    let name = def.name;
    let head = if def
        .torch
        .calls
        .iter()
        .any(|c| c.strip_prefix("torch.") == Some(name))
    {
        "torch"
    } else {
        "torch.nn.functional"
    };
    let names: Vec<&str> = def.attrs.iter().map(|a| a.name).collect();
    format!("{head}.{name}({}{})", args.join(", "), kw(attrs, &names, d))
}

/// The dims of a reduction: a python list (all dims when `none`); the seed dialect writes
/// one dim as an int and `none` as `None`, like seed programs do.
fn dims(attrs: &Attrs, rank: usize, d: Dialect) -> String {
    match (d, a(attrs, "dim")) {
        (Dialect::Seed, Attr::Ints(v)) if v.len() == 1 => v[0].to_string(),
        (Dialect::Seed, other) => literal(other, d),
        (Dialect::Reference, Attr::Ints(v)) => py(&Attr::Ints(v.clone())),
        (Dialect::Reference, _) => py(&Attr::Ints((0..rank as i64).collect())),
    }
}

/// The Python expression computing `op(args) {attrs}` in dialect `d`. `inputs` are the
/// argument types, `device` an expression giving the device for created tensors (e.g.
/// `x.device`). `attrs` must be normalized.
pub fn torch_expr(
    op: Op,
    attrs: &Attrs,
    args: &[String],
    inputs: &[&TensorType],
    device: &str,
    d: Dialect,
) -> String {
    let x = args.first().cloned().unwrap_or_default();
    let rank = inputs.first().map(|t| t.rank()).unwrap_or(0);
    let f = "torch.nn.functional";
    let seed = d == Dialect::Seed;
    let py = |v: &Attr| literal(v, d);
    let kw = |attrs: &Attrs, names: &[&str]| kw(attrs, names, d);
    let keep = || py(a(attrs, "keepdim"));
    // `x, weight, bias`: the seed dialect leaves an absent bias out, the reference passes `None`
    let with_bias = || {
        if seed {
            args.join(", ")
        } else {
            format!("{x}, {}, {}", args[1], opt(args, 2))
        }
    };
    // an optional input: positional (`None` when absent), or in the seed dialect a keyword
    // left out when absent
    let opt_kw = |i: usize, name: &str| match (seed, args.get(i)) {
        (true, Some(v)) => format!(", {name}={v}"),
        (true, None) => String::new(),
        (false, v) => format!(", {}", v.cloned().unwrap_or_else(|| "None".into())),
    };
    if op.kind() == Kind::Pointwise && op != Op::Cast {
        return pointwise_call(op, attrs, args, d);
    }
    match op {
        Op::Arange => format!(
            "torch.arange({}, dtype={}, device={device})",
            py(a(attrs, "end")),
            py(a(attrs, "dtype"))
        ),
        Op::Full => format!(
            "torch.full({}, {}, dtype={}, device={device})",
            py(a(attrs, "shape")),
            py(a(attrs, "value")),
            py(a(attrs, "dtype"))
        ),
        Op::Cast => match a(attrs, "dtype") {
            Attr::DType(crate::DType::F32) if seed => format!("{x}.float()"),
            t => format!("{x}.to({})", py(t)),
        },
        Op::Sum | Op::Mean => format!(
            "torch.{}({x}, dim={}, keepdim={})",
            op.name(),
            dims(attrs, rank, d),
            keep()
        ),
        Op::Max | Op::Min if seed => format!(
            "torch.{}({x}, dim={}, keepdim={}).values",
            op.name(),
            dims(attrs, rank, d),
            keep()
        ),
        Op::Max => format!(
            "torch.amax({x}, dim={}, keepdim={})",
            dims(attrs, rank, d),
            keep()
        ),
        Op::Min => format!(
            "torch.amin({x}, dim={}, keepdim={})",
            dims(attrs, rank, d),
            keep()
        ),
        Op::Prod => {
            // torch.prod takes one dim: reduce the highest dims first so indices stay valid
            let mut ds: Vec<i64> = match a(attrs, "dim") {
                Attr::Ints(v) => v
                    .iter()
                    .map(|&d| if d < 0 { d + rank as i64 } else { d })
                    .collect(),
                _ => (0..rank as i64).collect(),
            };
            ds.sort_unstable_by(|p, q| q.cmp(p));
            let mut e = x.clone();
            for d in ds {
                e = format!("torch.prod({e}, dim={d}, keepdim={})", keep());
            }
            e
        }
        Op::Argmax | Op::Argmin => format!(
            "torch.{}({x}, dim={}, keepdim={})",
            op.name(),
            py(a(attrs, "dim")),
            keep()
        ),
        Op::Var | Op::Std => {
            let c = int_if_whole(a(attrs, "correction"), d);
            format!(
                "torch.{}({x}, dim={}, correction={c}, keepdim={})",
                op.name(),
                dims(attrs, rank, d),
                keep()
            )
        }
        Op::Norm if seed => format!(
            "torch.norm({x}, p={}, dim={}, keepdim={})",
            py(a(attrs, "p")),
            dims(attrs, rank, d),
            keep()
        ),
        Op::Norm => format!(
            "torch.linalg.vector_norm({x}, ord={}, dim={}, keepdim={})",
            py(a(attrs, "p")),
            dims(attrs, rank, d),
            keep()
        ),
        Op::Logsumexp => format!(
            "torch.logsumexp({x}, dim={}, keepdim={})",
            dims(attrs, rank, d),
            keep()
        ),
        Op::Softmax | Op::LogSoftmax => {
            format!("torch.{}({x}, dim={})", op.name(), py(a(attrs, "dim")))
        }
        Op::Cumsum | Op::Cumprod => {
            let d = py(a(attrs, "dim"));
            if attrs.get("reverse").and_then(Attr::as_bool) == Some(true) {
                format!("torch.{}({x}.flip({d}), dim={d}).flip({d})", op.name())
            } else {
                format!("torch.{}({x}, dim={d})", op.name())
            }
        }
        Op::Cummax | Op::Cummin => format!(
            "torch.{}({x}, dim={}).values",
            op.name(),
            py(a(attrs, "dim"))
        ),
        Op::MseLoss => format!(
            "{f}.mse_loss({x}, {}{})",
            args[1],
            kw(attrs, &["reduction"])
        ),
        Op::SmoothL1Loss => format!(
            "{f}.smooth_l1_loss({x}, {}{})",
            args[1],
            kw(attrs, &["reduction", "beta"])
        ),
        Op::KlDiv => format!(
            "{f}.kl_div({x}, {}{})",
            args[1],
            kw(attrs, &["reduction", "log_target"])
        ),
        Op::CrossEntropy => format!(
            "{f}.cross_entropy({x}, {}{})",
            args[1],
            kw(attrs, &["reduction"])
        ),
        Op::TripletMarginLoss => format!(
            "{f}.triplet_margin_loss({x}, {}, {}{})",
            args[1],
            args[2],
            kw(attrs, &["margin", "p", "eps", "swap", "reduction"])
        ),
        Op::Matmul | Op::Bmm => format!("torch.{}({x}, {})", op.name(), args[1]),
        Op::Linear => format!("{f}.linear({})", with_bias()),
        Op::Einsum => format!(
            "torch.einsum({}, {})",
            py(a(attrs, "equation")),
            args.join(", ")
        ),
        Op::Attention => format!(
            "{f}.scaled_dot_product_attention({x}, {}, {}, attn_mask={}{})",
            args[1],
            args[2],
            opt(args, 3),
            kw(attrs, &["dropout_p", "is_causal", "scale"])
        ),
        Op::Conv1d | Op::Conv2d | Op::Conv3d => format!(
            "{f}.{}({}{})",
            op.name(),
            with_bias(),
            kw(attrs, &["stride", "padding", "dilation", "groups"])
        ),
        Op::ConvTranspose1d | Op::ConvTranspose2d | Op::ConvTranspose3d => format!(
            "{f}.{}({}{})",
            op.name(),
            with_bias(),
            kw(
                attrs,
                &["stride", "padding", "output_padding", "groups", "dilation"]
            )
        ),
        Op::MaxPool1d | Op::MaxPool2d | Op::MaxPool3d => {
            let stride = match a(attrs, "stride") {
                Attr::None if !seed => a(attrs, "kernel_size").clone(),
                s => s.clone(),
            };
            format!(
                "{f}.{}({x}, kernel_size={}, stride={}{})",
                op.name(),
                py(a(attrs, "kernel_size")),
                py(&stride),
                kw(attrs, &["padding", "dilation", "ceil_mode"])
            )
        }
        Op::AvgPool1d => format!(
            "{f}.avg_pool1d({x}{})",
            kw(
                attrs,
                &[
                    "kernel_size",
                    "stride",
                    "padding",
                    "ceil_mode",
                    "count_include_pad"
                ]
            )
        ),
        Op::AvgPool2d | Op::AvgPool3d => format!(
            "{f}.{}({x}{})",
            op.name(),
            kw(
                attrs,
                &[
                    "kernel_size",
                    "stride",
                    "padding",
                    "ceil_mode",
                    "count_include_pad",
                    "divisor_override"
                ]
            )
        ),
        Op::AdaptiveAvgPool1d | Op::AdaptiveAvgPool2d | Op::AdaptiveAvgPool3d => {
            format!("{f}.{}({x}, {})", op.name(), py(a(attrs, "output_size")))
        }
        Op::BatchNorm => format!(
            "{f}.batch_norm({x}, None, None{}{}{})",
            opt_kw(1, "weight"),
            opt_kw(2, "bias"),
            kw(attrs, &["training", "momentum", "eps"])
        ),
        Op::LayerNorm => format!(
            "{f}.layer_norm({x}, {}{}{}{})",
            py(a(attrs, "normalized_shape")),
            opt_kw(1, "weight"),
            opt_kw(2, "bias"),
            kw(attrs, &["eps"])
        ),
        Op::GroupNorm => format!(
            "{f}.group_norm({x}, {}{}{}{})",
            py(a(attrs, "num_groups")),
            opt_kw(1, "weight"),
            opt_kw(2, "bias"),
            kw(attrs, &["eps"])
        ),
        Op::InstanceNorm if seed => format!(
            "{f}.instance_norm({x}{}{}{})",
            opt_kw(1, "weight"),
            opt_kw(2, "bias"),
            kw(attrs, &["eps"])
        ),
        Op::InstanceNorm => format!(
            "{f}.instance_norm({x}, weight={}, bias={}{})",
            opt(args, 1),
            opt(args, 2),
            kw(attrs, &["eps"])
        ),
        Op::RmsNorm => {
            // the seed dialect leaves out an eps of `none` (the dtype's epsilon)
            let eps = match a(attrs, "eps") {
                Attr::None if seed => String::new(),
                _ => kw(attrs, &["eps"]),
            };
            format!(
                "{f}.rms_norm({x}, {}{}{eps})",
                py(a(attrs, "normalized_shape")),
                opt_kw(1, "weight"),
            )
        }
        Op::Transpose => format!(
            "torch.transpose({x}, {}, {})",
            py(a(attrs, "dim0")),
            py(a(attrs, "dim1"))
        ),
        Op::Permute if seed => format!("torch.permute({x}, {})", py(a(attrs, "dims"))),
        Op::Permute => format!("{x}.permute({})", py(a(attrs, "dims"))),
        Op::Reshape => format!("torch.reshape({x}, {})", py(a(attrs, "shape"))),
        Op::Flatten if seed => format!(
            "torch.flatten({x}, start_dim={}, end_dim={})",
            py(a(attrs, "start_dim")),
            py(a(attrs, "end_dim"))
        ),
        Op::Flatten => format!(
            "torch.flatten({x}, {}, {})",
            py(a(attrs, "start_dim")),
            py(a(attrs, "end_dim"))
        ),
        Op::Squeeze => match a(attrs, "dim") {
            Attr::Ints(v) => format!("torch.squeeze({x}, {})", py_tuple(v)),
            _ => format!("torch.squeeze({x})"),
        },
        Op::Unsqueeze => format!("torch.unsqueeze({x}, {})", py(a(attrs, "dim"))),
        Op::Expand => format!("{x}.expand({})", py(a(attrs, "shape"))),
        Op::Narrow => format!(
            "torch.narrow({x}, {}, {}, {})",
            py(a(attrs, "dim")),
            py(a(attrs, "start")),
            py(a(attrs, "length"))
        ),
        Op::Slice => {
            let d = a(attrs, "dim").as_int().unwrap_or(0);
            let d = if d < 0 { d + rank as i64 } else { d } as usize;
            let start = a(attrs, "start").as_int().unwrap_or(0);
            let end = a(attrs, "end").as_int().unwrap_or(i64::MAX);
            let step = a(attrs, "step").as_int().unwrap_or(1);
            let end = if end == i64::MAX {
                String::new()
            } else {
                end.to_string()
            };
            let mut idx = vec![":".to_string(); d];
            idx.push(format!("{start}:{end}:{step}"));
            format!("{x}[{}]", idx.join(", "))
        }
        Op::Select => format!(
            "torch.select({x}, {}, {})",
            py(a(attrs, "dim")),
            py(a(attrs, "index"))
        ),
        Op::Flip => format!("torch.flip({x}, {})", py(a(attrs, "dims"))),
        Op::Pad => format!(
            "torch.nn.functional.pad({x}, {}, mode={}, value={})",
            py(a(attrs, "pad")),
            py(a(attrs, "mode")),
            py(a(attrs, "value"))
        ),
        Op::Diag => format!("torch.diag({x}, {})", py(a(attrs, "diagonal"))),
        Op::Triu | Op::Tril => format!(
            "torch.{}({x}, diagonal={})",
            op.name(),
            py(a(attrs, "diagonal"))
        ),
        Op::Cat | Op::Stack => format!(
            "torch.{}([{}], dim={})",
            op.name(),
            args.join(", "),
            py(a(attrs, "dim"))
        ),
        Op::Aten => aten_call(attrs, args, device),
        // every other op is pointwise, printed above from its spelling
        _ => unreachable!("`{op}` is pointwise: its call derives from its spelling"),
    }
}

/// `torch.ops.aten.lstm.input(x, [w, ...], ...)`: an opaque ATen call with its inputs and
/// device put into its argument template (checked by inference, so rendering succeeds on
/// a verified graph).
fn aten_call(attrs: &Attrs, args: &[String], device: &str) -> String {
    let target = a(attrs, "target").as_str().unwrap_or_default();
    let template = a(attrs, "args").as_str().unwrap_or_default();
    let rendered = crate::op::aten::render_args(template, args, device)
        .unwrap_or_else(|e| panic!("a verified aten call's arguments render: {e}"));
    format!("torch.ops.{target}({rendered})")
}

/// The left-hand side that binds a node's results: `v3` for one result, `v3, v4, v5` (or
/// `v3,`) for an op returning a tuple or list (opaque ATen calls).
pub fn assign_targets(op: Op, attrs: &Attrs, outs: &[String]) -> String {
    let tuple = op == Op::Aten
        && a(attrs, "types")
            .as_str()
            .is_some_and(|t| t.trim_start().starts_with('('));
    match (tuple, outs) {
        (true, [one]) => format!("{one},"),
        (true, _) => outs.join(", "),
        (false, _) => outs.first().cloned().unwrap_or_default(),
    }
}

fn py_tuple(v: &[i64]) -> String {
    match v {
        [d] => d.to_string(),
        _ => format!(
            "({},)",
            v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
        ),
    }
}
