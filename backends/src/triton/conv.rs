//! The small-reduction convolution template: a convolution (1-3 spatial dims, fp32) whose
//! reduction `Cin / groups * prod(kernel)` is short, computed as an implicit GEMM with
//! its pointwise epilogue fused, so the output is written once; a grouped convolution as
//! one such GEMM per group (a tile's channels never straddle two groups); a depthwise
//! convolution (a group per channel), whose taps are per-channel FMAs over the same
//! [pixels, channels] tiles (cuDNN's depthwise path ran level-1 82-86 at 11-23% of the copy
//! bandwidth's limit: `bench/results/level1_h200_2030ff2_default_vs_compile.md`); and a
//! transposed convolution, dense or grouped, as a gather by phase (`conv_phase.rs`: a
//! program takes output pixels of one residue modulo the stride, whose taps each read an
//! input pixel, so only taps that land are multiplied; cuDNN ran level-1 72, 75, 79 and 81
//! at 2-20% of their limit in the same table).
//!
//! - The GEMM view: M = N * prod(out spatial) (output pixels, the last spatial dim
//!   innermost), N = Cout, K = Cin / groups * prod(kernel). A program owns a
//!   `[BLOCK_M, BLOCK_N]` tile; BLOCK_N covers every output channel of a group up to 128,
//!   so each pixel's taps are gathered once per group. With several groups, the grid's
//!   second axis walks groups, then tiles within a group: a tile's input channels are its
//!   group's.
//! - Addressing: an element of the A tile is at `row[m] + col[k]` (a per-pixel offset
//!   plus a per-tap offset, each through the input's strides), so any input layout reads
//!   with one add per element; bounds tests per element only where the convolution pads.
//! - The reduction is unrolled (`tl.static_range`): K is at most [`MAX_K`].
//! - Products: `tl.dot` with `input_precision` tf32 or tf32x3, or, for ieee, rank-1
//!   updates `acc += a * w` per tap (fp32 FMAs on the CUDA cores: the same arithmetic as
//!   an ieee dot, without its layout conversions).
//! - Measured on the H200 (`bench/results/conv_direct_probe_h200.txt`): the reason
//!   to have it is cuDNN's NCHW fp32 path on few input channels, which runs far from the
//!   tensor cores, and the output pass a separate epilogue costs.
//!
//! The host chooses it per region (`conv_choice.rs`): only the search's race keeps it,
//! against the library call with its separate epilogue kernel, after verification.

use super::contraction::TileMoments;
use super::conv_phase::{Gather, Geometry};
use super::conv_products::{emit_products, Operands, Taps};
use super::epilogue::{add_bias, add_epilogue, contiguous_offset, tile_moments};
use super::kernel::{
    decompose, emit_stmts, kernel_head, placement, store_line, LaunchConfig, Placements,
    TritonKernel,
};
use super::precision::DotPrecision;
use super::statements::{IndexSource, Program, Sp};
use drtc_ir::{Attr, DType, Graph, NodeId, Op, ValueId};
use std::fmt::{self, Write};

/// How one convolution region is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConvImpl {
    /// The library call (`torch.nn.functional.conv*`).
    Library,
    /// drtc's template at this product precision (ieee: fp32 FMAs), its phases launched
    /// so (a direct convolution: one launch whatever it says).
    Triton {
        dot: DotPrecision,
        phases: PhaseLaunch,
    },
}

impl ConvImpl {
    /// The template at `dot` in one launch.
    pub fn triton(dot: DotPrecision) -> Self {
        ConvImpl::Triton {
            dot,
            phases: PhaseLaunch::One,
        }
    }

    /// Short text for reports and cache files: `conv:library`, `conv:triton:tf32x3`,
    /// `conv:triton:tf32x3:launch-per-phase`.
    pub fn describe(&self) -> String {
        match self {
            ConvImpl::Library => "conv:library".into(),
            ConvImpl::Triton { dot, phases } => match phases {
                PhaseLaunch::One => format!("conv:triton:{}", dot.name()),
                PhaseLaunch::Each => format!("conv:triton:{}:launch-per-phase", dot.name()),
            },
        }
    }
}

/// How the template launches a transposed convolution's phases (`conv_phase.rs`). Both
/// are raced where there is more than one phase: one launch saves a launch per phase
/// (level-1 81, 25 phases: 0.53 against 0.71 ms), a launch per phase compiles each phase's
/// branch alone (level-1 72, 8 phases: one launch read out of bounds on the GPU, a launch
/// per phase verified; `bench/results/level1_tconv_phases_h100_a32db04.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PhaseLaunch {
    /// One launch, the phase on the grid's third axis, a branch per phase.
    One,
    /// A launch per phase, the phase a constexpr (`PHASE`).
    Each,
}

impl fmt::Display for ConvImpl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// Longest reduction the template takes (Cin * prod(kernel)), unrolled. Longer ones are
/// arithmetic-bound, where cuDNN's tensor-core kernels win: commit 85c071b's probe measured a
/// Triton implicit GEMM at 64 input channels (K = 576) 12.2 ms at tf32x3 against cuDNN
/// TF32's 3.1 (`bench/results/conv_triton_probe_h200.md`); racing it costs only compile
/// and verification time.
pub const MAX_K: u64 = 256;

/// The convolution's geometry, when the template covers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvShape {
    pub node: NodeId,
    /// Spatial dims (1-3).
    pub nsp: usize,
    pub kernel: Vec<i64>,
    pub stride: Vec<i64>,
    pub padding: Vec<i64>,
    pub dilation: Vec<i64>,
    /// Output pixels (N * prod(out spatial)), output channels, reduction length.
    pub m: u64,
    pub n: u64,
    pub k: u64,
    /// Groups of a grouped convolution that is not depthwise (1: a dense convolution):
    /// each computes `n / groups` output channels from `Cin / groups` input channels.
    pub groups: u64,
    /// A depthwise convolution (as many groups as input and output channels): each output
    /// channel reads its own input channel, so the taps are per-channel FMAs, not a GEMM.
    pub depthwise: bool,
    /// A transposed convolution (weight `[Cin, Cout / groups, k...]`), computed as a
    /// gather: output pixel `o` takes tap `t` from input pixel `(o + padding - t *
    /// dilation) / stride` where that divides exactly and lies inside the input; by phase
    /// (`conv_phase.rs`), so the reduction limit applies to the taps that divide.
    pub transposed: bool,
}

impl ConvShape {
    pub fn flops(&self) -> u64 {
        2 * self.m * self.n * self.k
    }

    /// The longest reduction a program unrolls: `k`, or for a transposed convolution the
    /// input channels of a group times the taps of its fullest phase (`conv_phase.rs`);
    /// past [`MAX_PHASES`](super::conv_phase::MAX_PHASES) phases, more than any limit.
    pub fn reduction(&self) -> u64 {
        if !self.transposed {
            return self.k;
        }
        let ks: u64 = self.kernel.iter().map(|&d| d as u64).product();
        match super::conv_phase::max_taps(self.geometry()) {
            Some(taps) => self.k / ks * taps as u64,
            None => u64::MAX,
        }
    }

    /// The spatial geometry, as the phases of a transposed convolution read it.
    pub fn geometry(&self) -> Geometry<'_> {
        Geometry {
            kernel: &self.kernel,
            stride: &self.stride,
            padding: &self.padding,
            dilation: &self.dilation,
        }
    }

    /// Output channels of one group (all of them for a dense or depthwise convolution).
    pub fn group_n(&self) -> u64 {
        self.n / self.groups
    }
}

fn ints(attrs: &drtc_ir::Attrs, name: &str, n: usize) -> Option<Vec<i64>> {
    let a = attrs.get(name)?;
    if let Some(i) = a.as_int() {
        return Some(vec![i; n]);
    }
    let v = a.as_ints()?;
    match v.len() {
        1 => Some(vec![v[0]; n]),
        len if len == n => Some(v.to_vec()),
        _ => None,
    }
}

/// The geometry of convolution node `n`, when the template covers it: a convolution of
/// fp32 tensors (dense, grouped or depthwise) or a transposed one (dense or grouped), a
/// reduction of at most [`MAX_K`] per output channel.
pub fn conv_shape(g: &Graph, n: NodeId) -> Option<ConvShape> {
    let node = g.node(n);
    let (nsp, transposed) = match node.op {
        Op::Conv1d => (1, false),
        Op::Conv2d => (2, false),
        Op::Conv3d => (3, false),
        Op::ConvTranspose1d => (1, true),
        Op::ConvTranspose2d => (2, true),
        Op::ConvTranspose3d => (3, true),
        _ => return None,
    };
    let (x, w, out) = (
        g.ty(node.inputs[0]),
        g.ty(*node.inputs.get(1)?),
        g.ty(node.outputs[0]),
    );
    let all_f32 = [x, w, out].iter().all(|t| t.dtype == DType::F32);
    let groups = node.attrs.get("groups").and_then(Attr::as_int).unwrap_or(1);
    if !all_f32 || x.rank() != nsp + 2 || w.rank() != nsp + 2 {
        return None;
    }
    if groups < 1 || x.shape[1] % groups != 0 || out.shape[1] % groups != 0 {
        return None;
    }
    // a transposed convolution's groups are always GEMMs (its weight is [Cin, Cout / groups])
    let depthwise = !transposed
        && groups > 1
        && groups == x.shape[1]
        && groups == out.shape[1]
        && w.shape[1] == 1;
    let grouped = groups > 1 && !depthwise;
    let channels_agree = if transposed {
        w.shape[0] == x.shape[1] && w.shape[1] * groups == out.shape[1]
    } else {
        depthwise || (w.shape[1] * groups == x.shape[1] && w.shape[0] == out.shape[1])
    };
    if !channels_agree {
        return None;
    }
    if let Some(&b) = node.inputs.get(2) {
        if g.ty(b).dtype != DType::F32 {
            return None;
        }
    }
    let kernel: Vec<i64> = w.shape[2..].to_vec();
    let cin_group = if transposed {
        x.shape[1] / groups
    } else {
        w.shape[1]
    };
    let k = (cin_group as u64) * kernel.iter().map(|&d| d as u64).product::<u64>();
    if k == 0 {
        return None;
    }
    let shape = ConvShape {
        node: n,
        nsp,
        stride: ints(&node.attrs, "stride", nsp)?,
        padding: ints(&node.attrs, "padding", nsp)?,
        dilation: ints(&node.attrs, "dilation", nsp)?,
        kernel,
        m: out.shape[0] as u64 * out.shape[2..].iter().map(|&d| d as u64).product::<u64>(),
        n: out.shape[1] as u64,
        k,
        groups: if grouped { groups as u64 } else { 1 },
        depthwise,
        transposed,
    };
    (shape.reduction() <= MAX_K).then_some(shape)
}

/// Heuristic launch configuration: every output channel of a group in one tile (up to 128),
/// 128 pixels, BLOCK_K = 32, 4 warps: the fastest of `bench/conv_direct_probe.py`'s list
/// at tf32x3 on the H200 (128x8x128x128 -> 64, 3x3: 0.52 ms with bias and ReLU, against
/// cuDNN NCHW's 0.66 without them; BLOCK_K = 16 with 8 warps ran the fused level-2 task
/// 57 in 1.00 ms). A depthwise convolution's tile stops at 64 channels: its taps are FMAs
/// into a `[BLOCK_M, BLOCK_N]` accumulator beside a loaded tile of the same size, 64 + 64
/// registers a thread at 128 x 64 with 4 warps; level-1 82 (64 channels) ran that at 49% of
/// its limit and 1.74x cuDNN, while 128 channels (level-1 84, level-3 MBConv's 672)
/// doubled both, ran 1.15-13x slower than cuDNN and took MBConv's 25 unrolled taps 17 s to
/// compile (`bench/results/level1_conv_h100_b6e7965_default_vs_compile.md`,
/// `bench/results/compile_latency_level3_h100_6197a8f.md`).
pub fn conv_config(shape: &ConvShape) -> LaunchConfig {
    let widest = if shape.depthwise { 64 } else { 128 };
    let bn = shape.group_n().next_power_of_two().clamp(16, widest);
    LaunchConfig {
        blocks: vec![("BLOCK_M", 128), ("BLOCK_N", bn), ("BLOCK_K", 32)],
        num_warps: 4,
        num_stages: 1,
    }
}

/// Output dim indices of the tile: `o{d}`; dim 1 (channels) follows `offs_n`, the others
/// `offs_m`.
struct ConvIndex {
    rank: usize,
}

impl IndexSource for ConvIndex {
    fn dim_index(&self, _: Sp, d: usize) -> String {
        format!("o{d}")
    }
    fn mask(&self, _: Sp) -> String {
        "mask".into()
    }
    fn mask_of(&self, _: Sp, dims: &[usize]) -> String {
        let channels = dims.contains(&1);
        let pixels = (0..self.rank).any(|d| d != 1 && dims.contains(&d));
        match (pixels, channels) {
            (false, true) => "mask_n".into(),
            (true, false) => "mask_m".into(),
            (true, true) | (false, false) => "mask".into(),
        }
    }
}

/// The kernel of convolution `conv` with the pointwise `epilogue` nodes applied to its
/// output before `outputs` are stored, dense in dim order `order` (outermost first;
/// `None`: NCHW). `dot` is the product's precision (ieee: rank-1 FMA updates), `phases`
/// how a transposed convolution's phases are launched.
#[allow(clippy::too_many_arguments)]
pub fn conv_kernel(
    g: &Graph,
    name: &str,
    conv: NodeId,
    epilogue: &[NodeId],
    outputs: &[ValueId],
    (dot, phases): (DotPrecision, PhaseLaunch),
    config: Option<LaunchConfig>,
    order: Option<&[usize]>,
    (placed, moments): (&Placements, Option<&TileMoments>),
) -> Option<TritonKernel> {
    let shape = conv_shape(g, conv)?;
    let each = shape.transposed && phases == PhaseLaunch::Each;
    let cn = g.node(conv);
    let out_shape = g.ty(cn.outputs[0]).shape.clone();
    let rank = out_shape.len();
    // the epilogue runs over the convolution's output index (scalar constants inlined)
    let off_index = |n: NodeId| {
        let node = g.node(n);
        let scalar = node.op == Op::Full && g.ty(node.outputs[0]).rank() == 0;
        !scalar && node.outputs.iter().any(|&v| g.ty(v).shape != out_shape)
    };
    if epilogue.iter().any(|&n| off_index(n)) || outputs.iter().any(|&v| g.ty(v).shape != out_shape)
    {
        return None;
    }
    let (x, w) = (cn.inputs[0], cn.inputs[1]);
    let x_shape = g.ty(x).shape.clone();
    let mut prog = Program::new();
    let ax = prog.input_arg(g, x);
    let aw = prog.input_arg(g, w);
    let (arg_x, arg_w) = (prog.inputs[ax].clone(), prog.inputs[aw].clone());
    let ix = ConvIndex { rank };
    let mut acc = prog.expr(Sp::Full, DType::F32, "acc".into(), vec![]);
    if let Some(&bias) = cn.inputs.get(2) {
        acc = add_bias(g, &mut prog, acc, bias, 1, &ix);
    }
    prog.vars.insert((cn.outputs[0], Sp::Full), acc);
    let mut nodes = vec![conv];
    nodes.extend_from_slice(epilogue);
    add_epilogue(g, &mut prog, &nodes, conv, &out_shape, &ix)?;
    let roots: Vec<usize> = outputs
        .iter()
        .map(|&v| prog.value(g, v, Sp::Full, vec![], &ix))
        .collect();
    let config = config.unwrap_or_else(|| conv_config(&shape));
    let wide = super::pointwise::needs_int64(
        g,
        outputs
            .iter()
            .copied()
            .chain(prog.inputs.iter().map(|a| a.value)),
    );
    let (n, k) = (shape.n, shape.k);
    // a transposed convolution's phases: the grid's third axis, or a launch each
    let phase_n = shape.stride.iter().product::<i64>();
    // a transposed convolution's programs walk one phase's pixels (`conv_phase.rs`)
    let m = if shape.transposed {
        super::conv_phase::phase_pixels(shape.geometry(), &out_shape)
    } else {
        shape.m
    };
    let mut body = String::new();
    let p = if wide { ".to(tl.int64)" } else { "" };
    writeln!(body, "    pm = tl.program_id(0){p}").unwrap();
    writeln!(body, "    pn = tl.program_id(1){p}").unwrap();
    writeln!(
        body,
        "    offs_m = pm * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]"
    )
    .unwrap();
    writeln!(body, "    mask_m = offs_m < {m}").unwrap();
    if shape.groups > 1 {
        // the grid's second axis: groups, then tiles of a group's channels
        let ng = shape.group_n();
        writeln!(body, "    tiles = ({ng} + BLOCK_N - 1) // BLOCK_N").unwrap();
        writeln!(body, "    grp = pn // tiles").unwrap();
        writeln!(
            body,
            "    offs_c = (pn - grp * tiles) * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]"
        )
        .unwrap();
        writeln!(body, "    offs_n = grp * {ng} + offs_c").unwrap();
        writeln!(body, "    mask_n = offs_c < {ng}").unwrap();
    } else {
        writeln!(
            body,
            "    offs_n = pn * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]"
        )
        .unwrap();
        writeln!(body, "    mask_n = offs_n < {n}").unwrap();
    }
    if shape.transposed {
        let phase = if each {
            "PHASE".to_string()
        } else {
            format!("tl.program_id(2){p}")
        };
        super::conv_phase::emit_pixels(&mut body, shape.geometry(), &out_shape, &phase);
    } else {
        // offs_m -> (batch, spatial...), the last spatial dim innermost
        let pix_dims: Vec<usize> = std::iter::once(0).chain(2..rank).collect();
        let pix_shape: Vec<i64> = pix_dims.iter().map(|&d| out_shape[d]).collect();
        let pix_names: Vec<String> = pix_dims.iter().map(|d| format!("o{d}")).collect();
        decompose(&mut body, "    ", "offs_m", &pix_shape, &pix_names);
        for &d in &pix_dims {
            if out_shape[d] == 1 {
                writeln!(body, "    o{d} = offs_m * 0").unwrap();
            }
        }
    }
    writeln!(body, "    mask = mask_m & mask_n").unwrap();
    writeln!(body, "    o1 = offs_n").unwrap();
    // the input offset of each output pixel's first tap (a transposed convolution: of
    // its batch only, each phase's taps add their input pixel)
    let mut row = vec![];
    if let Some(s) = arg_x.stride(0) {
        row.push(format!("o0 * {s}"));
    }
    for j in 0..shape.nsp {
        let d = 2 + j;
        if shape.transposed {
            continue;
        }
        writeln!(
            body,
            "    h{j} = o{d} * {} - {}",
            shape.stride[j], shape.padding[j]
        )
        .unwrap();
        if let Some(s) = arg_x.stride(d) {
            row.push(format!("h{j} * {s}"));
        }
    }
    writeln!(
        body,
        "    row = {}",
        if row.is_empty() {
            "offs_m * 0".into()
        } else {
            row.join(" + ")
        }
    )
    .unwrap();
    writeln!(body, "    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)").unwrap();
    let ks: i64 = shape.kernel.iter().product();
    // input channels per group (a grouped convolution's reduction stays in its group)
    let cin_group = shape.k as i64 / ks;
    // tap index j of reduction index `kk`: (kk % ks) // inner_j % kernel_j
    let tap = |kk: &str, j: usize| -> String {
        let inner: i64 = shape.kernel[j + 1..].iter().product();
        format!("(({kk} % {ks}) // {inner} % {})", shape.kernel[j])
    };
    // the offsets of reduction index `kk` in the input (`input`: dilated taps, and a
    // depthwise output's own channel) or in the weight
    let offsets = |kk: &str, arg: &super::statements::InputArg, input: bool| -> String {
        let mut terms = vec![];
        if let Some(s) = arg.stride(1) {
            if shape.depthwise && input {
                terms.push(format!("o1 * {s}"));
            } else if shape.groups > 1 && input {
                terms.push(format!("(grp * {cin_group} + {kk} // {ks}) * {s}"));
            } else {
                terms.push(format!("({kk} // {ks}) * {s}"));
            }
        }
        for j in 0..shape.nsp {
            if let Some(s) = arg.stride(2 + j) {
                let dil = if input { shape.dilation[j] } else { 1 };
                terms.push(format!("{} * {} * {s}", tap(kk, j), dil));
            }
        }
        if terms.is_empty() {
            format!("{kk} * 0")
        } else {
            terms.join(" + ")
        }
    };
    // bounds of each padded spatial dim, for tap index expression `kk` (a transposed
    // convolution's are its phases', `conv_phase.rs`)
    let pad_masks = |kk: &str| -> Vec<String> {
        (0..shape.nsp)
            .filter(|&j| shape.padding[j] > 0)
            .map(|j| {
                let h = format!("(h{j} + {} * {})", tap(kk, j), shape.dilation[j]);
                format!("({h} >= 0) & ({h} < {})", x_shape[2 + j])
            })
            .collect()
    };
    // the weight's output-channel term: dim 0, or a transposed convolution's dim 1 (the
    // channel within the group)
    let w_row = match (shape.transposed, shape.groups > 1) {
        (false, _) => arg_w.stride(0).map(|s| format!("offs_n * {s}")),
        (true, false) => arg_w.stride(1).map(|s| format!("offs_n * {s}")),
        (true, true) => arg_w.stride(1).map(|s| format!("offs_c * {s}")),
    }
    .unwrap_or_else(|| "offs_n * 0".into());
    let (px, pw) = (&arg_x.ptr, &arg_w.ptr);
    // a depthwise convolution has no GEMM to give the tensor cores: per-channel FMAs
    let dot = if shape.depthwise {
        DotPrecision::Ieee
    } else {
        dot
    };
    if shape.transposed {
        let gather = Gather {
            geom: shape.geometry(),
            groups: shape.groups,
            x_shape: &x_shape,
            arg_x: &arg_x,
            arg_w: &arg_w,
            w_row: &w_row,
            cin_group,
        };
        super::conv_phase::emit_reductions(&mut body, &gather, dot);
    } else {
        // a depthwise tap reads a [pixels, channels] tile: both masks
        let ops = Operands {
            px,
            pw,
            w_row: &w_row,
            a_mask: if shape.depthwise { "mask" } else { "mask_m" },
        };
        let taps = Taps {
            a_off: &|kk: &str| offsets(kk, &arg_x, true),
            a_masks: &pad_masks,
            b_off: &|kk: &str| offsets(kk, &arg_w, false),
        };
        emit_products(&mut body, "    ", (k as i64, dot), &ops, &taps);
    }
    let order_stmts = prog.closure(&roots, &|_| false);
    emit_stmts(&mut body, &prog, &order_stmts, "    ");
    // outputs dense in `order` (outermost first)
    let order: Vec<usize> = match order {
        Some(o) if o.len() == rank => o.to_vec(),
        Some(_) => return None,
        None => (0..rank).collect(),
    };
    let physical: Vec<i64> = order.iter().map(|&d| out_shape[d]).collect();
    let off = match contiguous_offset(&physical, &|p| format!("o{}", order[p])).as_str() {
        // every dim of size 1: a tile of zeros, not a scalar offset
        "0" => "offs_m * 0 + offs_n * 0".to_string(),
        o => o.to_string(),
    };
    writeln!(body, "    dst = {off}").unwrap();
    for (i, (&v, &r)) in outputs.iter().zip(&roots).enumerate() {
        // an output stored elsewhere: its slice of a concatenation's result
        let dst = match placement(placed, i) {
            Some(map) => format!(
                "{} + offs_m * 0 + offs_n * 0",
                map.offset(&out_shape, &|d| format!("o{d}"))
            ),
            None => "dst".to_string(),
        };
        body.push_str(&store_line(
            g,
            &prog,
            (i, v, r),
            &dst,
            "[BLOCK_M, BLOCK_N]",
            "mask",
        ));
    }
    let mut scratch = vec![];
    if let Some(tm) = moments {
        // each channel's moments over this tile's pixels, for the batch statistics of a
        // later region (`gemm_moments.rs`): pixels are tiled in (batch, spatial) order, so
        // tile `pm` is chunk `pm` of every channel's row of the statistics
        let kk = outputs.iter().position(|&v| v == tm.value)?;
        if shape.transposed || tm.chunks != m.div_ceil(config.block("BLOCK_M")) {
            return None;
        }
        let (ws, wm) = (&tm.sum, &tm.m2);
        let t = prog.var(roots[kk]);
        tile_moments(
            &mut body,
            "    ",
            (t, m),
            ("offs_n", "mask_n"),
            tm.chunks,
            (ws, wm),
        );
        scratch = vec![ws.clone(), wm.clone()];
    }
    let what = if dot == DotPrecision::Ieee {
        "fp32 FMAs".to_string()
    } else {
        format!("tl.dot {}", dot.name())
    };
    let note = if shape.transposed {
        format!(
            "transposed convolution as {} gathering implicit GEMM(s) per phase ({} phases): M={m} pixels, N={} channels, K={k} taps each, at most {} of them landing ({what})",
            shape.groups,
            phase_n,
            shape.group_n(),
            shape.reduction()
        )
    } else if shape.groups > 1 {
        format!(
            "grouped convolution as {} implicit GEMMs: M={m} pixels, N={} channels, K={k} taps each ({what})",
            shape.groups,
            shape.group_n()
        )
    } else if shape.depthwise {
        format!("depthwise convolution: {m} pixels x {n} channels, {k} taps per channel ({what})")
    } else {
        format!(
            "convolution as an implicit GEMM: M={m} pixels, N={n} channels, K={k} taps ({what})"
        )
    };
    let constexprs: &[&str] = if each {
        &["BLOCK_M", "BLOCK_N", "BLOCK_K", "PHASE"]
    } else {
        &["BLOCK_M", "BLOCK_N", "BLOCK_K"]
    };
    let mut source = kernel_head(
        g,
        name,
        &prog,
        (outputs.len(), &scratch, constexprs),
        &nodes,
        &[note],
        &order,
    );
    source.push_str(&body);
    Some(TritonKernel {
        name: name.to_string(),
        source,
        inputs: prog.inputs,
        outputs: outputs.to_vec(),
        grid: [
            m.div_ceil(config.block("BLOCK_M")).max(1),
            shape.groups * shape.group_n().div_ceil(config.block("BLOCK_N")).max(1),
        ]
        .into_iter()
        .chain((shape.transposed && !each).then_some(phase_n as u64))
        .collect(),
        grid_expr: None,
        config,
        extra_args: vec![],
        scratch_args: scratch,
        operand_prep: vec![],
        phase_launches: each.then(|| ("PHASE".to_string(), phase_n as u64)),
    })
}
