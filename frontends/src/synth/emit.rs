//! Emits a graph as a seed-format PyTorch program: `get_inputs()` with `torch.randn`,
//! `fused_operator(...)` as a flat sequence of `tensor_N = torch.op(...)` lines, and
//! `return [...]`. Uses only the IR. `argmax`/`argmin` followed by a cast to f32 are
//! written as one `torch.argmax(...).float()` line, as the seed format does.

use drtc_ir::{attr::format_float, Attr, Graph, NodeId, Op, ValueId};
use std::collections::HashMap;
use std::fmt::Write;

const F: &str = "torch.nn.functional";

/// Why a graph could not be emitted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EmitError {
    #[error("the seed emitter has no spelling for `{0}`")]
    Unsupported(&'static str),
    #[error("`{op}`: attribute `{attr}` is missing or has the wrong kind")]
    Attr {
        op: &'static str,
        attr: &'static str,
    },
}

fn py_attr(a: &Attr) -> String {
    match a {
        Attr::None => "None".into(),
        Attr::Bool(true) => "True".into(),
        Attr::Bool(false) => "False".into(),
        Attr::Int(i) => i.to_string(),
        Attr::Float(x) => format_float(*x),
        Attr::Str(s) => format!("'{s}'"),
        Attr::Ints(v) => format!(
            "[{}]",
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Attr::DType(d) => format!("torch.{}", d.torch_name()),
    }
}

struct Ctx<'g> {
    g: &'g Graph,
    names: HashMap<ValueId, String>,
}

impl Ctx<'_> {
    fn attr(&self, n: NodeId, name: &'static str) -> Result<&Attr, EmitError> {
        let node = self.g.node(n);
        node.attrs.get(name).ok_or(EmitError::Attr {
            op: node.op.name(),
            attr: name,
        })
    }
    fn a(&self, n: NodeId, name: &'static str) -> Result<String, EmitError> {
        Ok(py_attr(self.attr(n, name)?))
    }
    /// A reduction's `dim`: one dim is written as an int, like seed programs do.
    fn dim(&self, n: NodeId) -> Result<String, EmitError> {
        Ok(match self.attr(n, "dim")? {
            Attr::Ints(v) if v.len() == 1 => v[0].to_string(),
            a => py_attr(a),
        })
    }
    fn arg(&self, n: NodeId, i: usize) -> String {
        let v = self.g.node(n).inputs[i];
        self.names
            .get(&v)
            .cloned()
            .unwrap_or_else(|| format!("_missing{}", v.0))
    }
    fn args(&self, n: NodeId) -> Vec<String> {
        (0..self.g.node(n).inputs.len())
            .map(|i| self.arg(n, i))
            .collect()
    }
}

/// The right-hand side for node `n`.
fn expr(cx: &Ctx, n: NodeId) -> Result<String, EmitError> {
    let node = cx.g.node(n);
    let args = cx.args(n);
    let x = args.first().cloned().unwrap_or_default();
    let opt = |i: usize, kw: &str| match args.get(i) {
        Some(v) => format!(", {kw}={v}"),
        None => String::new(),
    };
    let tf = |name: &str| format!("torch.{name}({})", args.join(", "));
    let ff = |name: &str| format!("{F}.{name}({})", args.join(", "));
    Ok(match node.op {
        Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Maximum | Op::Minimum | Op::Lerp
        | Op::Matmul | Op::Bmm | Op::Relu | Op::Sigmoid | Op::Tanh | Op::Selu | Op::Abs
        | Op::Cos | Op::Sin | Op::Exp2 | Op::Exp | Op::Neg | Op::Sign | Op::Erf => tf(node.op.name()),
        Op::Silu | Op::Hardsigmoid | Op::Softsign | Op::Logsigmoid | Op::Mish | Op::Hardswish => {
            ff(node.op.name())
        }
        Op::LeakyRelu => format!("{F}.leaky_relu({x}, negative_slope={})", cx.a(n, "negative_slope")?),
        Op::Gelu => format!("{F}.gelu({x}, approximate={})", cx.a(n, "approximate")?),
        Op::Softplus => format!(
            "{F}.softplus({x}, beta={}, threshold={})",
            cx.a(n, "beta")?,
            cx.a(n, "threshold")?
        ),
        Op::Elu => format!("{F}.elu({x}, alpha={})", cx.a(n, "alpha")?),
        Op::Hardtanh => format!(
            "{F}.hardtanh({x}, min_val={}, max_val={})",
            cx.a(n, "min_val")?,
            cx.a(n, "max_val")?
        ),
        Op::Clamp => format!("torch.clamp({x}, min={}, max={})", cx.a(n, "min")?, cx.a(n, "max")?),
        Op::Sum | Op::Mean | Op::Logsumexp | Op::Argmax | Op::Argmin => format!(
            "torch.{}({x}, dim={}, keepdim={})",
            node.op.name(),
            cx.dim(n)?,
            cx.a(n, "keepdim")?
        ),
        Op::Max | Op::Min => format!(
            "torch.{}({x}, dim={}, keepdim={}).values",
            node.op.name(),
            cx.dim(n)?,
            cx.a(n, "keepdim")?
        ),
        Op::Var | Op::Std => format!(
            "torch.{}({x}, dim={}, correction={}, keepdim={})",
            node.op.name(),
            cx.dim(n)?,
            int_if_whole(cx.attr(n, "correction")?),
            cx.a(n, "keepdim")?
        ),
        Op::Norm => format!(
            "torch.norm({x}, p={}, dim={}, keepdim={})",
            cx.a(n, "p")?,
            cx.dim(n)?,
            cx.a(n, "keepdim")?
        ),
        Op::Softmax | Op::LogSoftmax | Op::Cumsum => {
            format!("torch.{}({x}, dim={})", node.op.name(), cx.a(n, "dim")?)
        }
        Op::Cummax | Op::Cummin => {
            format!("torch.{}({x}, dim={}).values", node.op.name(), cx.a(n, "dim")?)
        }
        Op::Transpose => format!("torch.transpose({x}, {}, {})", cx.a(n, "dim0")?, cx.a(n, "dim1")?),
        Op::Triu | Op::Tril => format!("torch.{}({x}, diagonal={})", node.op.name(), cx.a(n, "diagonal")?),
        Op::Cat | Op::Stack => format!(
            "torch.{}([{}], dim={})",
            node.op.name(),
            args.join(", "),
            cx.a(n, "dim")?
        ),
        Op::BatchNorm => format!(
            "{F}.batch_norm({x}, None, None{}{}, training={}, momentum={}, eps={})",
            opt(1, "weight"),
            opt(2, "bias"),
            cx.a(n, "training")?,
            cx.a(n, "momentum")?,
            cx.a(n, "eps")?
        ),
        Op::LayerNorm => format!(
            "{F}.layer_norm({x}, {}{}{}, eps={})",
            cx.a(n, "normalized_shape")?,
            opt(1, "weight"),
            opt(2, "bias"),
            cx.a(n, "eps")?
        ),
        Op::GroupNorm => format!(
            "{F}.group_norm({x}, {}{}{}, eps={})",
            cx.a(n, "num_groups")?,
            opt(1, "weight"),
            opt(2, "bias"),
            cx.a(n, "eps")?
        ),
        Op::InstanceNorm => format!(
            "{F}.instance_norm({x}{}{}, eps={})",
            opt(1, "weight"),
            opt(2, "bias"),
            cx.a(n, "eps")?
        ),
        Op::RmsNorm => {
            let eps = match cx.attr(n, "eps")? {
                Attr::None => String::new(),
                a => format!(", eps={}", py_attr(a)),
            };
            format!("{F}.rms_norm({x}, {}{}{eps})", cx.a(n, "normalized_shape")?, opt(1, "weight"))
        }
        Op::MaxPool1d | Op::MaxPool2d | Op::MaxPool3d => format!(
            "{F}.{}({x}, kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={})",
            node.op.name(),
            cx.a(n, "kernel_size")?,
            cx.a(n, "stride")?,
            cx.a(n, "padding")?,
            cx.a(n, "dilation")?,
            cx.a(n, "ceil_mode")?
        ),
        Op::AvgPool1d => format!(
            "{F}.avg_pool1d({x}, kernel_size={}, stride={}, padding={}, ceil_mode={}, count_include_pad={})",
            cx.a(n, "kernel_size")?,
            cx.a(n, "stride")?,
            cx.a(n, "padding")?,
            cx.a(n, "ceil_mode")?,
            cx.a(n, "count_include_pad")?
        ),
        Op::AvgPool2d | Op::AvgPool3d => format!(
            "{F}.{}({x}, kernel_size={}, stride={}, padding={}, ceil_mode={}, count_include_pad={}, divisor_override={})",
            node.op.name(),
            cx.a(n, "kernel_size")?,
            cx.a(n, "stride")?,
            cx.a(n, "padding")?,
            cx.a(n, "ceil_mode")?,
            cx.a(n, "count_include_pad")?,
            cx.a(n, "divisor_override")?
        ),
        Op::AdaptiveAvgPool1d | Op::AdaptiveAvgPool2d | Op::AdaptiveAvgPool3d => {
            format!("{F}.{}({x}, {})", node.op.name(), cx.a(n, "output_size")?)
        }
        Op::Conv1d | Op::Conv2d | Op::Conv3d => format!(
            "{F}.{}({}, stride={}, padding={}, dilation={}, groups={})",
            node.op.name(),
            args.join(", "),
            cx.a(n, "stride")?,
            cx.a(n, "padding")?,
            cx.a(n, "dilation")?,
            cx.a(n, "groups")?
        ),
        Op::ConvTranspose1d | Op::ConvTranspose2d | Op::ConvTranspose3d => format!(
            "{F}.{}({}, stride={}, padding={}, output_padding={}, groups={}, dilation={})",
            node.op.name(),
            args.join(", "),
            cx.a(n, "stride")?,
            cx.a(n, "padding")?,
            cx.a(n, "output_padding")?,
            cx.a(n, "groups")?,
            cx.a(n, "dilation")?
        ),
        Op::Linear => ff("linear"),
        Op::MseLoss => format!("{F}.mse_loss({}, reduction={})", args.join(", "), cx.a(n, "reduction")?),
        Op::SmoothL1Loss => format!(
            "{F}.smooth_l1_loss({}, reduction={}, beta={})",
            args.join(", "),
            cx.a(n, "reduction")?,
            cx.a(n, "beta")?
        ),
        Op::Flatten => format!(
            "torch.flatten({x}, start_dim={}, end_dim={})",
            cx.a(n, "start_dim")?,
            cx.a(n, "end_dim")?
        ),
        Op::Unsqueeze => format!("torch.unsqueeze({x}, {})", cx.a(n, "dim")?),
        Op::Permute => format!("torch.permute({x}, {})", cx.a(n, "dims")?),
        Op::Flip => format!("torch.flip({x}, {})", cx.a(n, "dims")?),
        Op::Cast => match cx.attr(n, "dtype")? {
            Attr::DType(drtc_ir::DType::F32) => format!("{x}.float()"),
            a => format!("{x}.to({})", py_attr(a)),
        },
        // the synthesizer never places these (`catalog::family` is `None` for them)
        Op::Full
        | Op::Dropout
        | Op::Pow
        | Op::Eq
        | Op::Ne
        | Op::Lt
        | Op::Le
        | Op::Gt
        | Op::Ge
        | Op::Where
        | Op::Log
        | Op::Sqrt
        | Op::Rsqrt
        | Op::Reciprocal
        | Op::Prod
        | Op::Cumprod
        | Op::KlDiv
        | Op::CrossEntropy
        | Op::TripletMarginLoss
        | Op::Einsum
        | Op::Attention
        | Op::Reshape
        | Op::Squeeze
        | Op::Expand
        | Op::Narrow
        | Op::Slice
        | Op::Select
        | Op::Diag => return Err(EmitError::Unsupported(node.op.name())),
    })
}

fn int_if_whole(a: &Attr) -> String {
    match a {
        Attr::Float(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", *x as i64),
        a => py_attr(a),
    }
}

/// The seed-format program text of `g`.
pub fn emit_seed(g: &Graph) -> Result<String, EmitError> {
    let mut names: HashMap<ValueId, String> = HashMap::new();
    let mut next = 0usize;
    let mut out = String::from("import torch\n\n\ndef get_inputs():\n");
    let mut inputs = vec![];
    for &v in g.inputs() {
        let name = format!("tensor_{next}");
        next += 1;
        let shape = &g.ty(v).shape;
        let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        writeln!(
            out,
            "    {name} = torch.randn([{}], dtype=torch.{})",
            dims.join(", "),
            g.ty(v).dtype.torch_name()
        )
        .expect("writing to a String");
        names.insert(v, name.clone());
        inputs.push(name);
    }
    writeln!(out, "    return [{}]\n\n", inputs.join(", ")).expect("writing to a String");
    writeln!(out, "def fused_operator({}):", inputs.join(", ")).expect("writing to a String");
    let uses = g.use_counts();
    // argmax/argmin whose only use is a cast to f32: written as one `.float()` line
    let mut fused: HashMap<NodeId, NodeId> = HashMap::new();
    for &n in g.body() {
        let node = g.node(n);
        if node.op == Op::Cast && node.attrs.get("dtype") == Some(&Attr::DType(drtc_ir::DType::F32))
        {
            if let Some(p) = g.producer(node.inputs[0]) {
                if matches!(g.node(p).op, Op::Argmax | Op::Argmin)
                    && uses[node.inputs[0].index()] == 1
                {
                    fused.insert(p, n);
                }
            }
        }
    }
    let fused_casts: std::collections::HashSet<NodeId> = fused.values().copied().collect();
    let mut cx = Ctx { g, names };
    for &n in g.body() {
        if fused_casts.contains(&n) {
            continue;
        }
        let mut rhs = expr(&cx, n)?;
        let mut result = g.node(n).outputs[0];
        if let Some(&cast) = fused.get(&n) {
            rhs.push_str(".float()");
            result = g.node(cast).outputs[0];
        }
        let name = format!("tensor_{next}");
        next += 1;
        writeln!(out, "    {name} = {rhs}").expect("writing to a String");
        cx.names.insert(result, name);
    }
    let outs: Vec<String> = g
        .outputs()
        .iter()
        .map(|v| {
            cx.names
                .get(v)
                .cloned()
                .unwrap_or_else(|| format!("_missing{}", v.0))
        })
        .collect();
    writeln!(out, "    return [{}]", outs.join(", ")).expect("writing to a String");
    Ok(out)
}
