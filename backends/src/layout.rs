//! The memory layout of convolution regions: NCHW (PyTorch's default, the reference's) or
//! channels-last (NHWC / NDHWC), decided per convolution and propagated through the
//! pointwise regions that read its result.
//!
//! A channels-last convolution gets its input converted at the region boundary
//! (`x.contiguous(memory_format=torch.channels_last)`, a no-op when the producer already
//! wrote channels-last) and its weight converted once when `ModelNew` is built (the
//! parameter keeps its name and values; only its strides change, and `load_state_dict`
//! copies into those strides). The library returns a channels-last result; a pointwise
//! region whose domain is that result's shape then walks its flat offset in N, H, W, C
//! order and writes channels-last outputs, so the epilogue reads and writes the layout the
//! library produced. Every other template reads its inputs through their strides, so a
//! channels-last value is correct wherever it goes; graph outputs keep the reference's
//! shape and values (not its contiguity).
//!
//! The rule of `auto` (stated so that it can be measured; `--layout nchw|channels-last`
//! forces either): a batched 2-D or 3-D convolution or transposed convolution runs
//! channels-last when it is dense (`groups == 1`), has at least [`MIN_CHANNELS`] output
//! channels, and every region that reads its result, directly or through the regions that
//! continue its layout, is a pointwise kernel, a 2-D/3-D pooling (the window template then
//! walks its outputs in N, (D,) H, W, C order and writes them channels-last), a reduction
//! over exactly the channels (in NHWC a row's columns are adjacent; its domain-shaped
//! outputs are written channels-last), a reduction that keeps at least
//! [`MIN_INNER_CHANNELS`] channels as rows (BatchNorm, instance norm, spatial means: the
//! channel is then the memory-innermost row dim and the template takes tall tiles of
//! adjacent rows), a concatenation (its operands' layout), another convolution, or the
//! graph's output. Dense NHWC convolutions are
//! what cuDNN's tensor-core implicit-GEMM kernels compute natively (NCHW costs them layout
//! transforms); a group norm with at least [`MIN_GROUP_CHANNELS`] channels per group
//! (its columns are then walked in memory order: runs of a group's adjacent channels), a
//! reduction of every dim but the batch (an image is contiguous in either layout).
//! Group norms with fewer channels per group and the GEMM template index NCHW-major, so a
//! result they read in NHWC would be read across strides, and such convolutions stay NCHW.

use drtc_ir::{Attr, Graph, Kind, NodeId, Op, Pool, ValueId};
use drtc_passes::fuse::{pointwise_domain, FusionPlan, RegionKind};
use std::collections::{HashMap, HashSet};

/// Fewest output channels of a convolution that `auto` runs channels-last.
pub const MIN_CHANNELS: i64 = 8;

/// Fewest channels per group of a group norm that continues a channels-last layout: the
/// row strategy's tiles hold at least two adjacent groups (BLOCK_R >= 2 for rows of more
/// than 2048 columns), so 4 fp32 channels per group fill a 32-byte sector per tile column
/// (the split strategy, one row per program, reads 16-byte halves).
pub const MIN_GROUP_CHANNELS: i64 = 4;

/// Fewest channels a reduction that keeps them (a norm over N, H, W or H, W) needs to
/// continue a channels-last layout: the reduction template's tall tiles then read at
/// least 64 adjacent bytes per row block.
pub const MIN_INNER_CHANNELS: i64 = 16;

/// What `--layout` asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LayoutChoice {
    /// The cost rule of this module's documentation.
    #[default]
    Auto,
    /// Every convolution in PyTorch's default (the reference's) layout.
    Nchw,
    /// Every batched 2-D/3-D convolution channels-last.
    ChannelsLast,
}

impl LayoutChoice {
    pub fn name(self) -> &'static str {
        match self {
            LayoutChoice::Auto => "auto",
            LayoutChoice::Nchw => "nchw",
            LayoutChoice::ChannelsLast => "channels-last",
        }
    }
}

/// The layout decisions of one module.
#[derive(Clone, Debug, Default)]
pub struct LayoutPlan {
    /// Convolution nodes called channels-last.
    pub convs: HashSet<NodeId>,
    /// Values written channels-last (convolution results and the pointwise regions'
    /// outputs that continue them).
    pub values: HashSet<ValueId>,
    /// Pointwise regions (by index) whose kernel walks channels-last order.
    pub regions: HashSet<usize>,
    /// One line per convolution: its layout and why.
    pub notes: Vec<String>,
}

impl LayoutPlan {
    /// Whether anything is channels-last.
    pub fn any(&self) -> bool {
        !self.convs.is_empty()
    }
}

/// The torch memory format of a channels-last tensor of `rank` (4 or 5).
pub fn memory_format(rank: usize) -> &'static str {
    if rank == 5 {
        "torch.channels_last_3d"
    } else {
        "torch.channels_last"
    }
}

/// The physical dim order (outermost first) of a channels-last tensor of `rank`.
pub fn channels_last_order(rank: usize) -> Vec<usize> {
    let mut order = vec![0];
    order.extend(2..rank);
    order.push(1);
    order
}

/// Whether `node` is a batched 2-D/3-D convolution that can run channels-last at all.
fn layout_capable(g: &Graph, node: NodeId) -> bool {
    let n = g.node(node);
    let spatial = match n.op.kind() {
        Kind::Conv {
            rank: rank @ (2 | 3),
            ..
        } => rank,
        _ => return false,
    };
    g.ty(n.inputs[0]).rank() == spatial + 2 && g.ty(n.inputs[1]).rank() == spatial + 2
}

/// Decides the layout of every convolution of `plan`, and propagates it.
pub fn plan_layout(g: &Graph, plan: &FusionPlan, choice: LayoutChoice) -> LayoutPlan {
    let mut out = LayoutPlan::default();
    let region_of: HashMap<NodeId, usize> = plan
        .regions
        .iter()
        .enumerate()
        .flat_map(|(i, r)| r.nodes.iter().map(move |&n| (n, i)))
        .collect();
    let readers = |v: ValueId| -> Vec<usize> {
        let mut rs: Vec<usize> = g
            .users(v)
            .iter()
            .filter_map(|u| region_of.get(u).copied())
            .collect();
        rs.sort_unstable();
        rs.dedup();
        rs
    };
    for (ri, r) in plan.regions.iter().enumerate() {
        if r.kind != RegionKind::Library {
            continue;
        }
        for &n in &r.nodes {
            if !layout_capable(g, n) {
                continue;
            }
            let node = g.node(n);
            let y = node.outputs[0];
            let channels = g.ty(y).shape[1];
            let groups = node.attrs.get("groups").and_then(Attr::as_int).unwrap_or(1);
            // the regions that read the layout without continuing it
            let blockers = blockers(g, plan, y, &readers);
            let why = if choice == LayoutChoice::Nchw {
                Err(
                    "--layout nchw, or the fallback of a channels-last module that failed \
                     verification"
                        .to_string(),
                )
            } else if choice == LayoutChoice::ChannelsLast {
                Ok("forced by --layout channels-last".to_string())
            } else if groups != 1 {
                Err(format!("grouped (groups={groups})"))
            } else if channels < MIN_CHANNELS {
                Err(format!(
                    "{channels} output channels (fewer than {MIN_CHANNELS})"
                ))
            } else if let Some(b) = blockers.first() {
                Err(format!(
                    "its result is read by region {b} ({}), which indexes NCHW",
                    plan.regions[*b].kind
                ))
            } else {
                Ok(format!(
                    "dense, {channels} output channels, read only by pointwise kernels, \
                     poolings, reductions over or keeping the channels, convolutions or \
                     the output"
                ))
            };
            match why {
                Ok(why) => {
                    out.notes.push(format!(
                        "region {ri} `{}`: channels-last ({why})",
                        node.op.name()
                    ));
                    out.convs.insert(n);
                    out.values.insert(y);
                }
                Err(why) => out
                    .notes
                    .push(format!("region {ri} `{}`: nchw ({why})", node.op.name())),
            }
        }
    }
    // propagate through pointwise and pooling regions, in plan order
    for (ri, r) in plan.regions.iter().enumerate() {
        if r.outputs.is_empty() {
            continue;
        }
        if continues(g, r, &out.values) {
            out.regions.insert(ri);
            out.values
                .extend(r.outputs.iter().copied().filter(|&v| cl_shaped(g, r, v)));
        }
    }
    out
}

/// Whether region `r` continues a channels-last layout: a pointwise region whose domain
/// is rank 4 or 5, every output of the domain's shape, that reads a channels-last value of
/// that shape; or a pooling region (the window template walks its outputs in N, (D,) H,
/// W, C order) whose pooled input (or an input of its prologue of that shape) is
/// channels-last.
fn continues(g: &Graph, r: &drtc_passes::fuse::Region, cl: &HashSet<ValueId>) -> bool {
    match r.kind {
        RegionKind::Pointwise => {}
        RegionKind::Window => return window_continues(g, r, cl),
        RegionKind::Reduction => return reduction_continues(g, r, cl),
        RegionKind::Fallback => return cat_continues(g, r, cl),
        RegionKind::Contraction | RegionKind::Library | RegionKind::View => return false,
    }
    let domain = pointwise_domain(g, &r.nodes);
    let rank = domain.len();
    let reads = r
        .inputs
        .iter()
        .any(|v| cl.contains(v) && g.ty(*v).shape == domain);
    let dense = r.outputs.iter().all(|&v| g.ty(v).shape == domain);
    (rank == 4 || rank == 5) && reads && dense
}

/// A concatenation of rank-4 or -5 tensors, one of them channels-last: PyTorch's `cat`
/// keeps the layout its operands share, and a concatenation written in place allocates
/// its result in its first kernel operand's layout (`plan/concat.rs`), so operands of one
/// layout give a result of that layout (a mixed one costs copies, never values).
fn cat_continues(g: &Graph, r: &drtc_passes::fuse::Region, cl: &HashSet<ValueId>) -> bool {
    let [n] = r.nodes[..] else {
        return false;
    };
    let node = g.node(n);
    let rank = g.ty(node.outputs[0]).rank();
    node.op == Op::Cat
        && (rank == 4 || rank == 5)
        && node.inputs.iter().all(|&v| g.ty(v).rank() == rank)
        && node.inputs.iter().any(|v| cl.contains(v))
}

/// The outputs of a region that continues the layout which are channels-last themselves:
/// all of a pointwise or pooling region's, a channel reduction's domain-shaped ones.
fn cl_shaped(g: &Graph, r: &drtc_passes::fuse::Region, v: ValueId) -> bool {
    match &r.reduction {
        Some(space) if r.kind == RegionKind::Reduction => g.ty(v).shape == space.domain,
        _ => true,
    }
}

/// A reduction of a channels-last value of its domain's shape that the template reads
/// coalesced through its strides: over exactly the channels (softmax, min, logsumexp over
/// dim 1: in NHWC a row's columns are adjacent), or keeping at least
/// [`MIN_INNER_CHANNELS`] channels as its last rows (a BatchNorm, an instance norm, a spatial mean:
/// in NHWC the channel is the memory-innermost dim, a row dim, and the reduction template
/// takes tall tiles of adjacent rows, `reduction/strategy.rs`), or a group norm with at
/// least [`MIN_GROUP_CHANNELS`] channels per group (its columns are walked in memory
/// order, so runs of a group's adjacent channels are read together), or a reduction of
/// every dim but the batch (each image is contiguous in either layout). Its domain-shaped
/// outputs are written channels-last; the others must be laid out alike in both layouts
/// (another rank, one channel, or no spatial extent).
fn reduction_continues(g: &Graph, r: &drtc_passes::fuse::Region, cl: &HashSet<ValueId>) -> bool {
    let Some(space) = &r.reduction else {
        return false;
    };
    let rank = space.domain.len();
    if rank != 4 && rank != 5 {
        return false;
    }
    // every dim from `from` on is reduced or of extent 1
    let reduced_from = |from: usize| (from..rank).all(|d| space.reduced[d] || space.domain[d] == 1);
    let channels_only = space.groups.is_none()
        && space
            .reduced
            .iter()
            .enumerate()
            .all(|(d, &red)| red == (d == 1));
    // the channel is the last row dim: every later dim of extent > 1 is reduced, so the
    // template's consecutive rows are adjacent channels
    let channels_kept = space.groups.is_none()
        && !space.reduced[1]
        && space.domain[1] >= MIN_INNER_CHANNELS
        && reduced_from(2);
    // a group norm whose groups hold at least MIN_GROUP_CHANNELS channels: the template
    // walks its columns in memory order (`dims_in_order`), so the runs of adjacent groups'
    // channels in a tile fill 32-byte sectors
    let groups_kept = matches!(space.groups, Some((1, g)) if g > 0
        && space.domain[1] % g == 0
        && space.domain[1] / g >= MIN_GROUP_CHANNELS)
        && !space.reduced[0]
        && reduced_from(2);
    let reads = r
        .inputs
        .iter()
        .any(|v| cl.contains(v) && g.ty(*v).shape == space.domain);
    let outputs_fit = r.outputs.iter().all(|&v| {
        let s = &g.ty(v).shape;
        s == &space.domain || s.len() != rank || s[1] == 1 || s[2..].iter().all(|&d| d == 1)
    });
    // every dim but the batch reduced: each image is one contiguous run in either layout,
    // and the template walks its columns in memory order
    let images_reduced = space.groups.is_none() && !space.reduced[0] && reduced_from(1);
    (channels_only || channels_kept || groups_kept || images_reduced) && reads && outputs_fit
}

fn window_continues(g: &Graph, r: &drtc_passes::fuse::Region, cl: &HashSet<ValueId>) -> bool {
    let pool = r
        .nodes
        .iter()
        .map(|&n| g.node(n))
        .find(|n| matches!(n.op.kind().pooling(), Some((Pool::Max | Pool::Avg, 2 | 3))));
    let Some(pool) = pool else {
        return false;
    };
    let x = pool.inputs[0];
    let shape = &g.ty(pool.outputs[0]).shape;
    let rank = shape.len();
    // the pooled input, or with a prologue an input it computes the pooled input from
    let reads = r
        .inputs
        .iter()
        .any(|v| cl.contains(v) && g.ty(*v).shape == g.ty(x).shape);
    (rank == 4 || rank == 5)
        && g.ty(x).rank() == rank
        && reads
        && r.outputs.iter().all(|&v| &g.ty(v).shape == shape)
}

/// The regions that read a channels-last `y`, or the pointwise regions that continue its
/// layout, without continuing it themselves (convolutions excepted).
fn blockers(
    g: &Graph,
    plan: &FusionPlan,
    y: ValueId,
    readers: &dyn Fn(ValueId) -> Vec<usize>,
) -> Vec<usize> {
    let mut cl: HashSet<ValueId> = HashSet::from([y]);
    let mut stack = vec![y];
    let mut seen = vec![];
    let mut blockers = vec![];
    while let Some(v) = stack.pop() {
        for ri in readers(v) {
            let r = &plan.regions[ri];
            let conv_reader =
                r.kind == RegionKind::Library && r.nodes.iter().all(|&n| layout_capable(g, n));
            if conv_reader {
                continue;
            }
            if continues(g, r, &cl) {
                if !seen.contains(&ri) {
                    seen.push(ri);
                    for &o in r.outputs.iter().filter(|&&o| cl_shaped(g, r, o)) {
                        if cl.insert(o) {
                            stack.push(o);
                        }
                    }
                }
            } else if !blockers.contains(&ri) {
                blockers.push(ri);
            }
        }
    }
    blockers
}
