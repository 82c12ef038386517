//! `torch.nn` layers: construction records the parameters and buffers PyTorch would
//! create (exact state_dict names and shapes); calling a layer lowers to the functional
//! form (`nn.Conv2d` -> `F.conv2d(x, weight, bias, ...)`) in training mode.

use super::args::{Args, Bound};
use super::emitter::{Emitter, Phase};
use super::error::{FrontendError, Span};
use super::members::{Layer, Member};
use super::spelling::{functional_key, losses, lower_op, Call};
use super::value::{LayerId, Val};
use drtc_ir::{DType, InputKind, Op, TensorType};

type R<T> = Result<T, FrontendError>;

/// PyTorch's constructor parameters of each supported layer: the op table's for the
/// parameter-free modules, these for the layers with parameters or rules of their own.
fn ctor_params(kind: &str) -> Option<&'static [&'static str]> {
    if let Some((_, m)) = Op::from_nn_module(kind) {
        return Some(m.ctor);
    }
    Some(match kind {
        "Conv1d" | "Conv2d" | "Conv3d" => &[
            "in_channels",
            "out_channels",
            "kernel_size",
            "stride",
            "padding",
            "dilation",
            "groups",
            "bias",
            "padding_mode",
            "device",
            "dtype",
        ],
        "ConvTranspose1d" | "ConvTranspose2d" | "ConvTranspose3d" => &[
            "in_channels",
            "out_channels",
            "kernel_size",
            "stride",
            "padding",
            "output_padding",
            "groups",
            "bias",
            "dilation",
            "padding_mode",
            "device",
            "dtype",
        ],
        "Linear" => &["in_features", "out_features", "bias", "device", "dtype"],
        "BatchNorm1d" | "BatchNorm2d" | "BatchNorm3d" | "InstanceNorm1d" | "InstanceNorm2d"
        | "InstanceNorm3d" => &[
            "num_features",
            "eps",
            "momentum",
            "affine",
            "track_running_stats",
            "device",
            "dtype",
        ],
        "GroupNorm" => &[
            "num_groups",
            "num_channels",
            "eps",
            "affine",
            "device",
            "dtype",
        ],
        "LayerNorm" => &[
            "normalized_shape",
            "eps",
            "elementwise_affine",
            "bias",
            "device",
            "dtype",
        ],
        "RMSNorm" => &[
            "normalized_shape",
            "eps",
            "elementwise_affine",
            "device",
            "dtype",
        ],
        "Identity" => &["*args"],
        "Dropout" | "Dropout1d" | "Dropout2d" | "Dropout3d" | "AlphaDropout" => &["p", "inplace"],
        "HuberLoss" => &["reduction", "delta"],
        _ => return None,
    })
}

fn spatial_dims(kind: &str) -> usize {
    if kind.ends_with("1d") {
        1
    } else if kind.ends_with("3d") {
        3
    } else {
        2
    }
}

fn param_dtype(b: &Bound) -> R<DType> {
    match b.opt("dtype") {
        None => Ok(DType::F32),
        Some(Val::DType(d)) => Ok(*d),
        Some(v) => Err(FrontendError::lowering(
            format!("`dtype` must be a dtype, got {}", v.type_name()),
            b.span_of("dtype"),
        )),
    }
}

fn positive(b: &Bound, name: &str, v: i64) -> R<i64> {
    if v <= 0 {
        return Err(FrontendError::lowering(
            format!("`{}`: `{name}` must be positive, got {v}", b.func),
            b.span_of(name),
        ));
    }
    Ok(v)
}

/// `nn.<kind>(...)`: a new layer with its parameters.
pub fn construct(em: &mut Emitter, kind: &str, args: Args, span: &Span) -> R<Val> {
    let Some(params) = ctor_params(kind) else {
        let why = match kind {
            "Sequential" | "ModuleList" | "ModuleDict" => "containers are not supported by the python-subset frontend (level-3 models go through torch.export)",
            _ => "this layer is not in drtc's spelling table",
        };
        return Err(FrontendError::unsupported(
            format!("`nn.{kind}`: {why}"),
            span.clone(),
        ));
    };
    let b = args.bind(&format!("nn.{kind}"), params)?;
    let dtype = if params.contains(&"dtype") {
        param_dtype(&b)?
    } else {
        DType::F32
    };
    let p = |name: &str, shape: Vec<i64>| Member {
        name: name.to_string(),
        ty: TensorType::new(dtype, shape),
        kind: InputKind::Param,
    };
    let buf = |name: &str, ty: TensorType| Member {
        name: name.to_string(),
        ty,
        kind: InputKind::Buffer,
    };
    let mut members = vec![];
    match kind {
        "Conv1d" | "Conv2d" | "Conv3d" | "ConvTranspose1d" | "ConvTranspose2d"
        | "ConvTranspose3d" => {
            let n = spatial_dims(kind);
            let cin = positive(&b, "in_channels", b.req_int("in_channels")?)?;
            let cout = positive(&b, "out_channels", b.req_int("out_channels")?)?;
            let k = b.req_ints_n("kernel_size", n)?;
            let groups = positive(&b, "groups", b.int("groups", 1)?)?;
            if cin % groups != 0 {
                return Err(FrontendError::lowering(
                    "in_channels must be divisible by groups",
                    b.span_of("groups"),
                ));
            }
            if cout % groups != 0 {
                return Err(FrontendError::lowering(
                    "out_channels must be divisible by groups",
                    b.span_of("groups"),
                ));
            }
            if b.str("padding_mode", "zeros")? != "zeros" {
                return Err(FrontendError::unsupported(
                    "padding modes other than 'zeros' are not in drtc's op set",
                    b.span_of("padding_mode"),
                ));
            }
            let mut w = if kind.starts_with("ConvTranspose") {
                vec![cin, cout / groups]
            } else {
                vec![cout, cin / groups]
            };
            w.extend(k);
            members.push(p("weight", w));
            if b.bool("bias", true)? {
                members.push(p("bias", vec![cout]));
            }
        }
        "Linear" => {
            let (i, o) = (b.req_int("in_features")?, b.req_int("out_features")?);
            members.push(p("weight", vec![o, i]));
            if b.bool("bias", true)? {
                members.push(p("bias", vec![o]));
            }
        }
        k if k.starts_with("BatchNorm") || k.starts_with("InstanceNorm") => {
            let c = b.req_int("num_features")?;
            let batch = k.starts_with("BatchNorm");
            if b.bool("affine", batch)? {
                members.push(p("weight", vec![c]));
                members.push(p("bias", vec![c]));
            }
            if b.bool("track_running_stats", batch)? {
                members.push(buf("running_mean", TensorType::new(dtype, vec![c])));
                members.push(buf("running_var", TensorType::new(dtype, vec![c])));
                members.push(buf("num_batches_tracked", TensorType::scalar(DType::I64)));
            }
        }
        "GroupNorm" => {
            let g = positive(&b, "num_groups", b.req_int("num_groups")?)?;
            let c = b.req_int("num_channels")?;
            if c % g != 0 {
                return Err(FrontendError::lowering(
                    "num_channels must be divisible by num_groups",
                    b.span.clone(),
                ));
            }
            if b.bool("affine", true)? {
                members.push(p("weight", vec![c]));
                members.push(p("bias", vec![c]));
            }
        }
        "LayerNorm" | "RMSNorm" => {
            let ns = b.as_ints("normalized_shape", b.required("normalized_shape")?)?;
            if b.bool("elementwise_affine", true)? {
                members.push(p("weight", ns.clone()));
                if kind == "LayerNorm" && b.bool("bias", true)? {
                    members.push(p("bias", ns));
                }
            }
        }
        _ => {}
    }
    for m in &members {
        em.check_type(m.ty.clone(), span)?;
    }
    if !members.is_empty() && em.phase != Phase::Init {
        return Err(FrontendError::unsupported(
            format!("`nn.{kind}` has parameters and can only be created in __init__"),
            span.clone(),
        ));
    }
    em.layers.push(Layer {
        kind: kind.to_string(),
        prefix: String::new(),
        config: b,
        members,
    });
    Ok(Val::Layer(em.layers.len() - 1))
}

/// `layer.name`: parameters by name, constructor arguments by name.
pub fn attr(em: &mut Emitter, id: LayerId, name: &str, span: &Span) -> R<Val> {
    let layer = &em.layers[id];
    if layer.members.iter().any(|m| m.name == name) {
        return Ok(Val::Param(format!("{}.{name}", layer.prefix).into()));
    }
    if matches!(name, "weight" | "bias") {
        return Ok(Val::None);
    }
    if let Some(v) = layer.config.get(name) {
        return Ok(v.clone());
    }
    if name == "forward" {
        return Ok(Val::Method(Box::new(Val::Layer(id)), name.into()));
    }
    Err(FrontendError::unsupported(
        format!(
            "attribute `{name}` of `nn.{}` is not known to drtc",
            layer.kind
        ),
        span.clone(),
    ))
}

/// Copies constructor arguments that were given explicitly to the functional call.
fn pass(cfg: &Bound, out: &mut Args, names: &[(&str, &str)]) {
    for (ctor, f) in names {
        if let Some(v) = cfg.get(ctor) {
            out.kw.push((f.to_string(), v.clone(), cfg.span_of(ctor)));
        }
    }
}

/// `layer(inputs...)`: the functional form with the layer's parameters.
pub fn forward(em: &mut Emitter, id: LayerId, args: Args, span: &Span) -> R<Val> {
    let layer = em.layers[id].clone();
    let kind = layer.kind.as_str();
    let cfg = &layer.config;
    if !args.kw.is_empty() {
        return Err(FrontendError::unsupported(
            format!("keyword arguments to a `nn.{kind}` call are not supported"),
            args.kw[0].2.clone(),
        ));
    }
    let mut f = Args {
        pos: args.pos.clone(),
        kw: vec![],
        span: args.span.clone(),
    };
    let param = |name: &str| -> Val {
        if layer.members.iter().any(|m| m.name == name) {
            Val::Param(format!("{}.{name}", layer.prefix).into())
        } else {
            Val::None
        }
    };
    let n = spatial_dims(kind);
    if let Some((op, module)) = Op::from_nn_module(kind) {
        // a parameter-free module: the op's functional form with the constructor's arguments
        pass(
            cfg,
            &mut f,
            &module.ctor.iter().map(|c| (*c, *c)).collect::<Vec<_>>(),
        );
        for (name, v) in module.set {
            if cfg.get(name).is_none() {
                let v = v.value().map_or(Val::None, |a| literal(&a));
                f.kw.push((name.to_string(), v, span.clone()));
            }
        }
        let key = functional_key(op);
        return lower_op(em, op, &Call::new(key, &f, span));
    }
    let push_pos = |f: &mut Args, v: Val| f.pos.push((v, span.clone()));
    let kw = |f: &mut Args, k: &str, v: Val| f.kw.push((k.to_string(), v, span.clone()));
    let op = match kind {
        "Conv1d" | "Conv2d" | "Conv3d" | "ConvTranspose1d" | "ConvTranspose2d"
        | "ConvTranspose3d" => {
            push_pos(&mut f, param("weight"));
            push_pos(&mut f, param("bias"));
            let mut names = vec![
                ("stride", "stride"),
                ("padding", "padding"),
                ("dilation", "dilation"),
                ("groups", "groups"),
            ];
            if kind.starts_with("ConvTranspose") {
                names.push(("output_padding", "output_padding"));
                pass(cfg, &mut f, &names);
                [
                    Op::ConvTranspose1d,
                    Op::ConvTranspose2d,
                    Op::ConvTranspose3d,
                ][n - 1]
            } else {
                pass(cfg, &mut f, &names);
                [Op::Conv1d, Op::Conv2d, Op::Conv3d][n - 1]
            }
        }
        "Linear" => {
            push_pos(&mut f, param("weight"));
            push_pos(&mut f, param("bias"));
            Op::Linear
        }
        k if k.starts_with("BatchNorm") || k.starts_with("InstanceNorm") => {
            check_rank(em, &f, kind, n, span)?;
            push_pos(&mut f, Val::None);
            push_pos(&mut f, Val::None);
            push_pos(&mut f, param("weight"));
            push_pos(&mut f, param("bias"));
            pass(cfg, &mut f, &[("eps", "eps"), ("momentum", "momentum")]);
            if k.starts_with("BatchNorm") {
                if matches!(cfg.get("momentum"), Some(Val::None)) {
                    return Err(FrontendError::unsupported(
                        "BatchNorm with momentum=None (cumulative averages) is not supported",
                        cfg.span_of("momentum"),
                    ));
                }
                kw(&mut f, "training", Val::Bool(true));
                Op::BatchNorm
            } else {
                Op::InstanceNorm
            }
        }
        "GroupNorm" => {
            let g = cfg.required("num_groups")?.clone();
            push_pos(&mut f, g);
            push_pos(&mut f, param("weight"));
            push_pos(&mut f, param("bias"));
            pass(cfg, &mut f, &[("eps", "eps")]);
            let c = cfg.req_int("num_channels")?;
            if let Some((Val::Tensor(x), s)) = f.pos.first() {
                if em.ty(*x).shape.get(1) != Some(&c) {
                    return Err(FrontendError::lowering(
                        format!(
                            "GroupNorm expects {c} channels (dim 1), got input of shape {:?}",
                            em.ty(*x).shape
                        ),
                        s.clone(),
                    ));
                }
            }
            Op::GroupNorm
        }
        "LayerNorm" | "RMSNorm" => {
            let ns = cfg.required("normalized_shape")?.clone();
            push_pos(&mut f, ns);
            push_pos(&mut f, param("weight"));
            if kind == "LayerNorm" {
                push_pos(&mut f, param("bias"));
            }
            pass(cfg, &mut f, &[("eps", "eps")]);
            if kind == "LayerNorm" {
                Op::LayerNorm
            } else {
                Op::RmsNorm
            }
        }
        "Identity" => {
            return f
                .pos
                .first()
                .map(|(v, _)| v.clone())
                .ok_or_else(|| FrontendError::lowering("Identity needs an input", span.clone()))
        }
        "Dropout" | "Dropout1d" | "Dropout2d" | "Dropout3d" | "AlphaDropout" => {
            let p = cfg.float("p", Op::Dropout.default_of("p").as_float().unwrap_or(0.5))?;
            if p > 0.0 && p <= 1.0 && em.phase == Phase::Forward {
                return Err(FrontendError::random(
                        format!("`nn.{kind}(p={p})` in training mode (KernelBench's default) zeroes random elements, so the output is not a function of the inputs; drtc cannot compile or verify it"),
                        span.clone(),
                    ));
            }
            pass(cfg, &mut f, &[("p", "p")]);
            kw(&mut f, "training", Val::Bool(true));
            Op::Dropout
        }
        "HuberLoss" => {
            pass(
                cfg,
                &mut f,
                &[("reduction", "reduction"), ("delta", "delta")],
            );
            return losses::huber_loss(em, "F.huber_loss", &f, span);
        }
        _ => {
            return Err(FrontendError::unsupported(
                format!("calling `nn.{kind}` is not supported"),
                span.clone(),
            ))
        }
    };
    lower_op(em, op, &Call::new(functional_key(op), &f, span))
}

/// A table default as the Python value a module passes.
fn literal(a: &drtc_ir::Attr) -> Val {
    use drtc_ir::Attr;
    match a {
        Attr::None => Val::None,
        Attr::Bool(b) => Val::Bool(*b),
        Attr::Int(i) => Val::Int(*i),
        Attr::Float(x) => Val::Float(*x),
        Attr::Str(s) => Val::Str(s.as_str().into()),
        Attr::Ints(v) => Val::tuple(v.iter().map(|&i| Val::Int(i)).collect()),
        Attr::DType(d) => Val::DType(*d),
    }
}

/// BatchNorm/InstanceNorm check the input rank like PyTorch's modules do.
fn check_rank(em: &Emitter, f: &Args, kind: &str, n: usize, span: &Span) -> R<()> {
    let Some((Val::Tensor(x), s)) = f.pos.first() else {
        return Ok(());
    };
    let rank = em.ty(*x).rank();
    let ok = if kind.starts_with("BatchNorm") && n == 1 {
        rank == 2 || rank == 3
    } else {
        rank == n + 1 || rank == n + 2
    };
    let ok = ok && !(kind.starts_with("BatchNorm") && n > 1 && rank != n + 2);
    if !ok {
        return Err(FrontendError::lowering(
            format!("`nn.{kind}` got an input of rank {rank}"),
            s.clone(),
        ));
    }
    let _ = span;
    Ok(())
}
