//! One IR node as a PyTorch call: the expression that computes it with `torch` APIs.
//!
//! Used by the seed-program emitter and by the stitcher for library regions (convolutions
//! through cuDNN) and ops without a Triton template.

use drtc_ir::{Attr, Attrs, DType, Op, TensorType};

/// The `torch.<dtype>` spelling of a dtype.
pub fn torch_dtype(d: DType) -> String {
    format!("torch.{}", d.torch_name())
}

fn a<'x>(attrs: &'x Attrs, name: &str) -> &'x Attr {
    attrs
        .get(name)
        .unwrap_or_else(|| panic!("attributes are normalized: `{name}` is present"))
}

/// A Python literal for an attribute value.
pub fn py(attr: &Attr) -> String {
    match attr {
        Attr::None => "None".into(),
        Attr::Bool(b) => if *b { "True" } else { "False" }.into(),
        Attr::Int(i) => i.to_string(),
        Attr::Float(x) if x.is_nan() => "float('nan')".into(),
        Attr::Float(x) if x.is_infinite() => if *x > 0.0 {
            "float('inf')"
        } else {
            "float('-inf')"
        }
        .into(),
        Attr::Float(x) => format!("{x:?}"),
        Attr::Str(s) => format!("{s:?}"),
        Attr::Ints(v) => format!(
            "[{}]",
            v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
        ),
        Attr::DType(d) => torch_dtype(*d),
    }
}

fn kw(attrs: &Attrs, names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!(", {n}={}", py(a(attrs, n))))
        .collect()
}

fn opt(args: &[String], i: usize) -> String {
    args.get(i).cloned().unwrap_or_else(|| "None".into())
}

/// The dims of a reduction as a python list (all dims when `none`).
fn dims(attrs: &Attrs, rank: usize) -> String {
    match a(attrs, "dim") {
        Attr::Ints(v) => py(&Attr::Ints(v.clone())),
        _ => py(&Attr::Ints((0..rank as i64).collect())),
    }
}

/// The Python expression computing `op(args) {attrs}`. `inputs` are the argument types,
/// `device` an expression giving the device for created tensors (e.g. `x.device`).
pub fn torch_expr(
    op: Op,
    attrs: &Attrs,
    args: &[String],
    inputs: &[&TensorType],
    device: &str,
) -> String {
    let x = args.first().cloned().unwrap_or_default();
    let rank = inputs.first().map(|t| t.rank()).unwrap_or(0);
    let f = "torch.nn.functional";
    let keep = || py(a(attrs, "keepdim"));
    match op {
        Op::Full => format!(
            "torch.full({}, {}, dtype={}, device={device})",
            py(a(attrs, "shape")),
            py(a(attrs, "value")),
            py(a(attrs, "dtype"))
        ),
        Op::Cast => format!("{x}.to({})", py(a(attrs, "dtype"))),
        Op::Dropout => format!("{f}.dropout({x}{})", kw(attrs, &["p", "training"])),
        Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Maximum | Op::Minimum | Op::Pow => {
            format!("torch.{}({x}, {})", op.name(), args[1])
        }
        Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => {
            format!("torch.{}({x}, {})", op.name(), args[1])
        }
        Op::Lerp | Op::Where => format!("torch.{}({x}, {}, {})", op.name(), args[1], args[2]),
        Op::Relu
        | Op::Sigmoid
        | Op::Tanh
        | Op::Selu
        | Op::Abs
        | Op::Neg
        | Op::Sign
        | Op::Cos
        | Op::Sin
        | Op::Exp
        | Op::Exp2
        | Op::Log
        | Op::Sqrt
        | Op::Rsqrt
        | Op::Erf
        | Op::Reciprocal => format!("torch.{}({x})", op.name()),
        Op::Silu | Op::Hardsigmoid | Op::Hardswish | Op::Softsign | Op::Logsigmoid | Op::Mish => {
            format!("{f}.{}({x})", op.name())
        }
        Op::LeakyRelu => format!("{f}.leaky_relu({x}{})", kw(attrs, &["negative_slope"])),
        Op::Gelu => format!("{f}.gelu({x}{})", kw(attrs, &["approximate"])),
        Op::Softplus => format!("{f}.softplus({x}{})", kw(attrs, &["beta", "threshold"])),
        Op::Elu => format!("{f}.elu({x}{})", kw(attrs, &["alpha"])),
        Op::Hardtanh => format!("{f}.hardtanh({x}{})", kw(attrs, &["min_val", "max_val"])),
        Op::Clamp => format!("torch.clamp({x}{})", kw(attrs, &["min", "max"])),
        Op::Sum | Op::Mean => format!(
            "torch.{}({x}, dim={}, keepdim={})",
            op.name(),
            dims(attrs, rank),
            keep()
        ),
        Op::Max => format!(
            "torch.amax({x}, dim={}, keepdim={})",
            dims(attrs, rank),
            keep()
        ),
        Op::Min => format!(
            "torch.amin({x}, dim={}, keepdim={})",
            dims(attrs, rank),
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
            let c = a(attrs, "correction").as_float().unwrap_or(1.0);
            let c = if c.fract() == 0.0 {
                format!("{}", c as i64)
            } else {
                format!("{c:?}")
            };
            format!(
                "torch.{}({x}, dim={}, correction={c}, keepdim={})",
                op.name(),
                dims(attrs, rank),
                keep()
            )
        }
        Op::Norm => format!(
            "torch.linalg.vector_norm({x}, ord={}, dim={}, keepdim={})",
            py(a(attrs, "p")),
            dims(attrs, rank),
            keep()
        ),
        Op::Logsumexp => format!(
            "torch.logsumexp({x}, dim={}, keepdim={})",
            py(a(attrs, "dim")),
            keep()
        ),
        Op::Softmax | Op::LogSoftmax | Op::Cumsum | Op::Cumprod => {
            format!("torch.{}({x}, dim={})", op.name(), py(a(attrs, "dim")))
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
        Op::Linear => format!("{f}.linear({x}, {}, {})", args[1], opt(args, 2)),
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
            "{f}.{}({x}, {}, {}{})",
            op.name(),
            args[1],
            opt(args, 2),
            kw(attrs, &["stride", "padding", "dilation", "groups"])
        ),
        Op::ConvTranspose1d | Op::ConvTranspose2d | Op::ConvTranspose3d => format!(
            "{f}.{}({x}, {}, {}{})",
            op.name(),
            args[1],
            opt(args, 2),
            kw(
                attrs,
                &["stride", "padding", "output_padding", "groups", "dilation"]
            )
        ),
        Op::MaxPool1d | Op::MaxPool2d | Op::MaxPool3d => {
            let stride = match a(attrs, "stride") {
                Attr::None => a(attrs, "kernel_size").clone(),
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
            "{f}.batch_norm({x}, None, None, {}, {}{})",
            opt(args, 1),
            opt(args, 2),
            kw(attrs, &["training", "momentum", "eps"])
        ),
        Op::LayerNorm => format!(
            "{f}.layer_norm({x}, {}, {}, {}{})",
            py(a(attrs, "normalized_shape")),
            opt(args, 1),
            opt(args, 2),
            kw(attrs, &["eps"])
        ),
        Op::GroupNorm => format!(
            "{f}.group_norm({x}, {}, {}, {}{})",
            py(a(attrs, "num_groups")),
            opt(args, 1),
            opt(args, 2),
            kw(attrs, &["eps"])
        ),
        Op::InstanceNorm => format!(
            "{f}.instance_norm({x}, weight={}, bias={}{})",
            opt(args, 1),
            opt(args, 2),
            kw(attrs, &["eps"])
        ),
        Op::RmsNorm => format!(
            "{f}.rms_norm({x}, {}, {}{})",
            py(a(attrs, "normalized_shape")),
            opt(args, 1),
            kw(attrs, &["eps"])
        ),
        Op::Transpose => format!(
            "torch.transpose({x}, {}, {})",
            py(a(attrs, "dim0")),
            py(a(attrs, "dim1"))
        ),
        Op::Permute => format!("{x}.permute({})", py(a(attrs, "dims"))),
        Op::Reshape => format!("torch.reshape({x}, {})", py(a(attrs, "shape"))),
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
    }
}

/// `torch.ops.aten.lstm.input(x, [w, ...], ...)`: an opaque ATen call with its inputs and
/// device put into its argument template (checked by inference, so rendering succeeds on
/// a verified graph).
fn aten_call(attrs: &Attrs, args: &[String], device: &str) -> String {
    let target = a(attrs, "target").as_str().unwrap_or_default();
    let template = a(attrs, "args").as_str().unwrap_or_default();
    let rendered = drtc_ir::op::aten::render_args(template, args, device)
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
