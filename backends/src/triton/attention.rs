//! The attention template: `scaled_dot_product_attention(q, k, v, mask?)` in one pass over
//! `k` and `v` per block of query rows, the scores never written (online softmax: a running
//! row maximum `m`, a running sum `l` of `exp(s - m)`, and the output accumulated with the
//! same rescaling, divided by `l` at the end).
//!
//! - A program owns `BLOCK_M` query rows of one batch element (grid: row blocks x batch);
//!   `q` is loaded once, then for each block of `BLOCK_N` keys: `s = q @ k^T * scale`
//!   (`tl.dot` at the region's precision), plus the additive mask's tile (read through its
//!   strides, a broadcast dim has none), `-inf` above the diagonal when causal (PyTorch's
//!   `is_causal`: key `n` attends to query `m` when `n <= m`) and past the last key; then
//!   `m_new = max(m, rowmax(s))`, `p = exp(s - m_new)`, `l = l * exp(m - m_new) + rowsum(p)`,
//!   `acc = acc * exp(m - m_new) + p @ v`.
//! - A row whose scores are all `-inf` (so far) uses 0 as its shift, so `exp` sees `-inf`
//!   and not `-inf - -inf`; a row masked to the end has `l = 0` and its output is 0/0,
//!   NaN, as the written-out softmax's is.
//! - Any strides for `q`, `k`, `v` and the mask (the host passes views as they are); the
//!   output is written contiguously. Head dims up to [`MAX_HEAD`], padded to a power of two
//!   with masked loads.
//!
//! The host chooses it per region (`attention_choice.rs`): only the search's race keeps it,
//! against PyTorch's fused attention (the library call), after verification.

use super::kernel::{ops_comment, signature, LaunchConfig, TritonKernel};
use super::precision::DotPrecision;
use super::statements::{InputArg, Program};
use drtc_ir::{Attr, DType, Graph, NodeId, Op};
use std::fmt::{self, Write};

/// Largest head dim (of `q`/`k`, and of `v`) the template takes: a `[BLOCK_M, head]` tile of
/// `q` and the accumulator stay in registers.
pub const MAX_HEAD: i64 = 256;

/// Most batch elements (the grid's second dim).
const MAX_BATCH: i64 = 65_535;

/// How one attention region is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttentionImpl {
    /// PyTorch's `scaled_dot_product_attention` (its fused kernels).
    Library,
    /// drtc's template at this product precision.
    Triton { dot: DotPrecision },
}

impl AttentionImpl {
    /// Short text for reports and cache files: `attention:library`, `attention:triton:tf32x3`.
    pub fn describe(&self) -> String {
        match self {
            AttentionImpl::Library => "attention:library".into(),
            AttentionImpl::Triton { dot } => format!("attention:triton:{}", dot.name()),
        }
    }
}

impl fmt::Display for AttentionImpl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// An attention the template covers.
#[derive(Clone, Debug, PartialEq)]
pub struct AttentionShape {
    pub node: NodeId,
    /// The output's batch dims.
    pub batch: Vec<i64>,
    /// Query rows, keys, head dim of `q`/`k`, head dim of `v`.
    pub l: i64,
    pub s: i64,
    pub e: i64,
    pub ev: i64,
    pub scale: f64,
    pub causal: bool,
}

impl AttentionShape {
    /// Multiply-adds of the two products, as FLOPs.
    pub fn flops(&self) -> u64 {
        let b: i64 = self.batch.iter().product();
        (2 * b * self.l * self.s * (self.e + self.ev)) as u64
    }
}

/// The attention of `node`, when the template covers it: fp32 inputs of one rank >= 3
/// whose batch dims are the output's or 1, a mask (if any) of at most that rank, no
/// dropout, head dims up to [`MAX_HEAD`].
pub fn attention_shape(g: &Graph, node: NodeId) -> Option<AttentionShape> {
    let n = g.node(node);
    if n.op != Op::Attention {
        return None;
    }
    let (q, k, v) = (g.ty(n.inputs[0]), g.ty(n.inputs[1]), g.ty(n.inputs[2]));
    let out = g.ty(n.outputs[0]);
    let r = out.rank();
    let float = |a: &str| n.attrs.get(a).and_then(Attr::as_float);
    if r < 3
        || [q, k, v]
            .iter()
            .any(|t| t.rank() != r || t.dtype != DType::F32)
        || out.dtype != DType::F32
        || float("dropout_p").unwrap_or(0.0) != 0.0
    {
        return None;
    }
    let batch = out.shape[..r - 2].to_vec();
    let fits = |shape: &[i64]| {
        let off = r - shape.len();
        shape[..shape.len().saturating_sub(2)]
            .iter()
            .enumerate()
            .all(|(d, &x)| x == 1 || x == batch[d + off])
    };
    if ![q, k, v].iter().all(|t| fits(&t.shape)) {
        return None;
    }
    if let Some(&m) = n.inputs.get(3) {
        let mt = g.ty(m);
        let (l, s) = (q.shape[r - 2], k.shape[r - 2]);
        let dims_ok = mt.rank() <= r
            && mt
                .shape
                .iter()
                .rev()
                .zip([s, l])
                .all(|(&x, want)| x == 1 || x == want)
            && (mt.rank() < 3 || fits(&mt.shape));
        if mt.dtype != DType::F32 || !dims_ok {
            return None;
        }
    }
    let (e, ev) = (q.shape[r - 1], v.shape[r - 1]);
    if e > MAX_HEAD || ev > MAX_HEAD || batch.iter().product::<i64>() > MAX_BATCH {
        return None;
    }
    let scale = match n.attrs.get("scale") {
        Some(Attr::Float(s)) => *s,
        _ => 1.0 / (e as f64).sqrt(),
    };
    Some(AttentionShape {
        node,
        batch,
        l: q.shape[r - 2],
        s: k.shape[r - 2],
        e,
        ev,
        scale,
        causal: n.attrs.get("is_causal").and_then(Attr::as_bool) == Some(true),
    })
}

/// The launch configuration: 64 query rows; 64 keys per step, 32 for head dims past 64
/// (the `q` tile, the accumulator and a `[BLOCK_M, BLOCK_N]` score tile in registers).
pub fn attention_config(shape: &AttentionShape) -> LaunchConfig {
    let head = pow2(shape.e.max(shape.ev));
    LaunchConfig {
        blocks: vec![
            ("BLOCK_M", 64),
            ("BLOCK_N", if head > 64 { 32 } else { 64 }),
        ],
        num_warps: 4,
        num_stages: 2,
    }
}

/// Launch configurations worth racing for `shape` (the full search scope): 64 or 128 query
/// rows, 32 or 64 keys per step (128 rows only for heads up to 64, whose tiles leave room),
/// 4 or 8 warps; the heuristic's first.
pub fn attention_variants(shape: &AttentionShape) -> Vec<LaunchConfig> {
    let head = pow2(shape.e.max(shape.ev));
    let mut out = vec![attention_config(shape)];
    for (m, n, warps) in [(64, 32, 4), (64, 64, 4), (128, 32, 8), (128, 64, 8)] {
        if m == 128 && head > 64 || n == 64 && head > 128 {
            continue;
        }
        let c = LaunchConfig {
            blocks: vec![("BLOCK_M", m), ("BLOCK_N", n)],
            num_warps: warps,
            num_stages: 2,
        };
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// The smallest power of two >= `x`, at least 16 (`tl.dot`'s smallest dim).
fn pow2(x: i64) -> u64 {
    (x.max(16) as u64).next_power_of_two()
}

/// `a`'s stride along dim `d` counted from the end of the output's rank `r` (`0` when the
/// input has no such dim or it has size 1).
fn stride(a: &InputArg, rank: usize, r: usize, d: usize) -> String {
    let off = r - rank;
    if d < off {
        return "0".into();
    }
    a.stride(d - off).unwrap_or("0").to_string()
}

/// The template's kernel for the attention `shape` at `dot`, launched with `config` (the
/// heuristic's, [`attention_config`], when `None`).
pub fn attention_kernel(
    g: &Graph,
    shape: &AttentionShape,
    dot: DotPrecision,
    name: &str,
    config: Option<LaunchConfig>,
) -> TritonKernel {
    let node = g.node(shape.node);
    // one argument per distinct input (self-attention may pass one tensor as q, k and v)
    let mut prog = Program::new();
    let idx: Vec<usize> = node.inputs.iter().map(|&v| prog.input_arg(g, v)).collect();
    let params = signature(&prog, 1, &[], &["BLOCK_M", "BLOCK_N"]);
    let inputs: Vec<InputArg> = prog.inputs;
    let arg_of = |i: usize| &inputs[idx[i]];
    let r = shape.batch.len() + 2;
    let config = config.unwrap_or_else(|| attention_config(shape));
    let (block_e, block_v) = (pow2(shape.e), pow2(shape.ev));
    let mut src = String::new();
    writeln!(src, "@triton.jit\ndef {name}({params}):").unwrap();
    src.push_str(&ops_comment(g, &[shape.node]));
    writeln!(
        src,
        "    # online softmax over {} keys per block of query rows; scores never stored",
        shape.s
    )
    .unwrap();
    // 64-bit batch offsets: a batch element times its stride may pass 2^31
    writeln!(
        src,
        "    pid_m = tl.program_id(0)\n    pid_b = tl.program_id(1).to(tl.int64)"
    )
    .unwrap();
    // batch indices, the last dim fastest
    let mut rest = "pid_b".to_string();
    for d in (0..shape.batch.len()).rev() {
        writeln!(src, "    b{d} = {rest} % {}", shape.batch[d]).unwrap();
        if d > 0 {
            writeln!(src, "    r{d} = {rest} // {}", shape.batch[d]).unwrap();
            rest = format!("r{d}");
        }
    }
    let base = |a: &InputArg, rank: usize| -> String {
        let mut terms = vec![a.ptr.clone()];
        for d in 0..shape.batch.len() {
            let s = stride(a, rank, r, d);
            if s != "0" {
                terms.push(format!("b{d} * {s}"));
            }
        }
        terms.join(" + ")
    };
    let rank = |k: usize| g.ty(node.inputs[k]).rank();
    let (q, k, v) = (arg_of(0), arg_of(1), arg_of(2));
    for (i, (a, label)) in [(q, "q"), (k, "k"), (v, "v")].into_iter().enumerate() {
        writeln!(src, "    {label}_base = {}", base(a, rank(i))).unwrap();
    }
    let prec = format!("input_precision=\"{}\"", dot.name());
    let (l, s, e, ev) = (shape.l, shape.s, shape.e, shape.ev);
    writeln!(src, "    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)").unwrap();
    writeln!(src, "    offs_e = tl.arange(0, {block_e})").unwrap();
    writeln!(src, "    offs_v = tl.arange(0, {block_v})").unwrap();
    writeln!(src, "    m_ok = offs_m < {l}").unwrap();
    let tile = |name: &str, a: &InputArg, (rows, ok): (&str, &str), (cols, width): (&str, i64)| {
        format!(
            "{name} = tl.load({name}_base + {rows}[:, None] * {} + {cols}[None, :] * {}, mask={ok}[:, None] & ({cols}[None, :] < {width}), other=0.0)",
            stride(a, r, r, r - 2),
            stride(a, r, r, r - 1)
        )
    };
    writeln!(
        src,
        "    {}",
        tile("q", q, ("offs_m", "m_ok"), ("offs_e", e))
    )
    .unwrap();
    writeln!(
        src,
        "    m_i = tl.full([BLOCK_M], float(\"-inf\"), tl.float32)\n    l_i = tl.zeros([BLOCK_M], tl.float32)\n    acc = tl.zeros([BLOCK_M, {block_v}], tl.float32)"
    )
    .unwrap();
    // causal: keys past the block's last row are all masked
    let end = if shape.causal {
        format!("tl.minimum({s}, (pid_m + 1) * BLOCK_M)")
    } else {
        s.to_string()
    };
    writeln!(src, "    for start in range(0, {end}, BLOCK_N):").unwrap();
    writeln!(src, "        offs_n = start + tl.arange(0, BLOCK_N)").unwrap();
    writeln!(src, "        n_ok = offs_n < {s}").unwrap();
    writeln!(
        src,
        "        {}",
        tile("k", k, ("offs_n", "n_ok"), ("offs_e", e))
    )
    .unwrap();
    writeln!(
        src,
        "        s = tl.dot(q, tl.trans(k), {prec}) * {:?}",
        shape.scale
    )
    .unwrap();
    if node.inputs.len() > 3 {
        let (mask, mr) = (arg_of(3), rank(3));
        writeln!(
            src,
            "        s += tl.load({} + offs_m[:, None] * {} + offs_n[None, :] * {}, mask=m_ok[:, None] & n_ok[None, :], other=0.0)",
            base(mask, mr),
            stride(mask, mr, r, r - 2),
            stride(mask, mr, r, r - 1)
        )
        .unwrap();
    }
    let keep = if shape.causal {
        "n_ok[None, :] & (offs_n[None, :] <= offs_m[:, None])"
    } else {
        "n_ok[None, :]"
    };
    writeln!(src, "        s = tl.where({keep}, s, float(\"-inf\"))").unwrap();
    writeln!(src, "        m_new = tl.maximum(m_i, tl.max(s, 1))").unwrap();
    writeln!(
        src,
        "        shift = tl.where(m_new == float(\"-inf\"), 0.0, m_new)"
    )
    .unwrap();
    writeln!(src, "        p = tl.exp(s - shift[:, None])").unwrap();
    writeln!(src, "        alpha = tl.exp(m_i - shift)").unwrap();
    writeln!(src, "        l_i = l_i * alpha + tl.sum(p, 1)").unwrap();
    writeln!(
        src,
        "        {}",
        tile("v", v, ("offs_n", "n_ok"), ("offs_v", ev))
    )
    .unwrap();
    writeln!(
        src,
        "        acc = acc * alpha[:, None] + tl.dot(p, v, {prec})"
    )
    .unwrap();
    writeln!(src, "        m_i = m_new").unwrap();
    writeln!(
        src,
        "    tl.store(out0 + pid_b * {} + offs_m[:, None] * {ev} + offs_v[None, :], acc / l_i[:, None], mask=m_ok[:, None] & (offs_v[None, :] < {ev}))",
        l * ev
    )
    .unwrap();
    let rows = (l as u64).div_ceil(config.block("BLOCK_M"));
    TritonKernel {
        name: name.to_string(),
        source: src,
        inputs,
        outputs: vec![node.outputs[0]],
        grid: vec![rows, shape.batch.iter().product::<i64>() as u64],
        grid_expr: None,
        config,
        extra_args: vec![],
        scratch_args: vec![],
        operand_prep: vec![],
        phase_launches: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drtc_ir::text;

    fn graph(src: &str) -> Graph {
        text::parse(src).unwrap()
    }

    #[test]
    fn shapes_the_template_takes_and_leaves() {
        let g = graph(
            "graph @a(%q: f32[2, 4, 100, 32], %k: f32[2, 4, 80, 32], %v: f32[2, 4, 80, 48], %m: f32[100, 80]) {\n  %0 = scaled_dot_product_attention(%q, %k, %v, %m) {scale = 0.5} : f32[2, 4, 100, 48]\n  %1 = scaled_dot_product_attention(%q, %k, %v) {is_causal = true} : f32[2, 4, 100, 48]\n  %2 = scaled_dot_product_attention(%q, %k, %v) {dropout_p = 0.1} : f32[2, 4, 100, 48]\n  return %0, %1, %2\n}",
        );
        let body = g.body().to_vec();
        let a = attention_shape(&g, body[0]).unwrap();
        assert_eq!((a.l, a.s, a.e, a.ev, a.scale), (100, 80, 32, 48, 0.5));
        assert_eq!(a.batch, vec![2, 4]);
        let c = attention_shape(&g, body[1]).unwrap();
        assert!(c.causal);
        assert_eq!(c.scale, 1.0 / 32f64.sqrt());
        // dropout: left to PyTorch
        assert!(attention_shape(&g, body[2]).is_none());
        let k = attention_kernel(&g, &a, DotPrecision::Tf32x3, "attn", None);
        assert_eq!(k.grid, vec![2, 8]);
        assert!(k.source.contains("input_precision=\"tf32x3\""));
        // the mask broadcast over the batch: read without batch offsets
        assert!(
            k.source.contains("s += tl.load(in3 + offs_m"),
            "{}",
            k.source
        );
    }
}
