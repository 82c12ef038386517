//! Concatenation without copies: an operand of a `cat` that a pointwise, reduction, GEMM
//! template or convolution template kernel computes, and that nothing else reads, is
//! written by that kernel into its slice of the concatenation's result (the host
//! allocates the result first and passes the slice's view as the kernel's output); the
//! `cat` then copies only its other operands.
//! Without this, every operand is written once by its producer and copied once more by
//! PyTorch's `cat`: a read and a write of the whole result saved per placed operand.
//!
//! A placement is decided here, once, and read by `region.rs` (the template writes
//! through the result's strides) and by the stitcher (the view, and the copies left).

use super::implementation::Implementation;
use super::region_plan::RegionPlan;
use crate::conv_choice::conv_region_kernel;
use crate::layout::channels_last_order;
use crate::layout::LayoutPlan;
use crate::triton::{
    contraction_kernel, reduction_kernel, ConvImpl, DotMode, GemmImpl, Placements, StoreMap,
};
use drtc_ir::{Attr, Graph, NodeId, Op, ValueId};
use drtc_passes::fuse::{FusionPlan, RegionKind};

/// One operand of a concatenation written in place by its producer's kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The operand, an output of kernel region `producer`.
    pub value: ValueId,
    pub producer: usize,
    /// The concatenation's result and region, the dim it concatenates and the operand's
    /// offset there.
    pub cat: ValueId,
    pub cat_region: usize,
    pub dim: usize,
    pub offset: i64,
    /// The result is allocated channels-last (its placed operands are channels-last values
    /// of the layout plan), and the strides are that layout's.
    pub channels_last: bool,
    /// Elements between the slice's first element and the 16-byte boundary before it, when
    /// the concatenation's dim is contiguous and every row of the result starts on such a
    /// boundary (else 0): the host's view of the slice begins that much earlier
    /// ([`StoreMap::Strided`]'s origin), so a template that tiles the dim from the view's
    /// start stores whole aligned vectors (level-1 92, a scan written from column 1 on).
    pub skew: i64,
}

impl Placement {
    /// The strides of the concatenation's result of `shape`, in its layout.
    pub fn strides(&self, shape: &[i64]) -> Vec<i64> {
        if self.channels_last && shape.len() >= 3 {
            strides_in_order(shape, &channels_last_order(shape.len()))
        } else {
            row_major_strides(shape)
        }
    }

    /// How the producer stores into the result of `shape`.
    pub fn store_map(&self, shape: &[i64]) -> StoreMap {
        StoreMap::Strided {
            strides: self.strides(shape),
            origin: self.skew,
        }
    }
}

/// [`Placement::skew`] of a slice at `offset` along `dim` of a result of `shape` with
/// `strides` and elements of `size` bytes.
fn skew(shape: &[i64], strides: &[i64], (dim, offset): (usize, i64), size: u64) -> i64 {
    let Ok(size) = i64::try_from(size) else {
        return 0;
    };
    if size == 0 || 16 % size != 0 || strides[dim] != 1 {
        return 0;
    }
    let per = 16 / size;
    let rows_aligned = (0..shape.len()).all(|d| d == dim || shape[d] == 1 || strides[d] % per == 0);
    if rows_aligned {
        offset % per
    } else {
        0
    }
}

/// Offsets of a kernel's output index into an `i32`: the result's elements must fit (for
/// a concatenation's result and a view chain's alike).
pub(super) const MAX_ELEMENTS: u64 = 1 << 31;

pub(super) fn row_major_strides(shape: &[i64]) -> Vec<i64> {
    let order: Vec<usize> = (0..shape.len()).collect();
    strides_in_order(shape, &order)
}

/// The strides of a dense tensor of `shape` whose dims are laid out in `order` (outermost
/// first).
fn strides_in_order(shape: &[i64], order: &[usize]) -> Vec<i64> {
    let mut strides = vec![1i64; shape.len()];
    let mut s = 1i64;
    for &d in order.iter().rev() {
        strides[d] = s;
        s *= shape[d].max(1);
    }
    strides
}

/// The dim concatenation node `n` joins along, and each operand with its offset and length
/// along it.
pub(crate) fn operand_slices(g: &Graph, n: NodeId) -> (usize, Vec<(ValueId, i64, i64)>) {
    let node = g.node(n);
    let rank = g.ty(node.outputs[0]).rank().max(1) as i64;
    let dim = node.attrs.get("dim").and_then(Attr::as_int).unwrap_or(0);
    let dim = dim.rem_euclid(rank) as usize;
    let mut offset = 0i64;
    let slices = node
        .inputs
        .iter()
        .map(|&v| {
            let len = g.ty(v).shape.get(dim).copied().unwrap_or(0);
            offset += len;
            (v, offset - len, len)
        })
        .collect();
    (dim, slices)
}

/// The placements of `plan`: for every `cat` region, each operand that a pointwise or
/// reduction template kernel computes as a domain-shaped output (not a GEMM's moment
/// partner), in the result's layout, read by nothing else, of the result's dtype, and that
/// the template writes through the result's strides (its answer).
pub(super) fn placements(
    g: &Graph,
    fusion: &FusionPlan,
    (regions, layout): (&[RegionPlan], &LayoutPlan),
    views: &[NodeId],
) -> Vec<Placement> {
    let uses = g.use_counts();
    let producer_of = |v: ValueId| fusion.regions.iter().position(|r| r.outputs.contains(&v));
    let mut out = vec![];
    for (ri, r) in fusion.regions.iter().enumerate() {
        let [n] = r.nodes[..] else { continue };
        let node = g.node(n);
        let cat = node.outputs[0];
        let ty = g.ty(cat);
        // a concatenation that is a view of a later one's result (`views`, from
        // `cat_prefix.rs`) has no tensor of its own to write into
        if node.op != Op::Cat
            || r.kind != RegionKind::Fallback
            || ty.numel() >= MAX_ELEMENTS
            || ty.rank() == 0
            || views.contains(&n)
        {
            continue;
        }
        let channels_last = result_channels_last(g, fusion, layout, n);
        let (dim, slices) = operand_slices(g, n);
        for (v, here, _) in slices {
            let Some(p) = producer_of(v) else { continue };
            let mut candidate = Placement {
                value: v,
                producer: p,
                cat,
                cat_region: ri,
                dim,
                offset: here,
                channels_last,
                skew: 0,
            };
            let strides = candidate.strides(&ty.shape);
            candidate.skew = skew(&ty.shape, &strides, (dim, here), ty.dtype.size_bytes());
            let vt = g.ty(v);
            let sole = uses[v.index()] == 1 && !g.outputs().contains(&v);
            if sole
                && vt.dtype == ty.dtype
                && vt.rank() == ty.rank()
                && layout.values.contains(&v) == channels_last
                && honored(
                    g,
                    fusion,
                    (regions, layout),
                    (p, v),
                    candidate.store_map(&ty.shape),
                )
            {
                out.push(candidate);
            }
        }
    }
    out
}

/// Whether concatenation node `n`'s result is allocated channels-last: the layout of its
/// first operand a kernel computes (channels-last when the layout plan writes it so), for a
/// result of rank 4 or more; operands of the other layout are copied.
pub(super) fn result_channels_last(
    g: &Graph,
    fusion: &FusionPlan,
    layout: &LayoutPlan,
    n: NodeId,
) -> bool {
    let node = g.node(n);
    let computed = |v: &&ValueId| fusion.regions.iter().any(|r| r.outputs.contains(v));
    g.ty(node.outputs[0]).rank() >= 4
        && (node.inputs.iter().find(computed)).is_some_and(|v| layout.values.contains(v))
}

/// Whether region `producer`'s template stores its output `value` through `map`: a
/// pointwise kernel always does (its outputs have the domain's shape); a reduction kernel
/// in the row strategy does for domain-shaped outputs (its answer, `RegionCode::placed`);
/// a GEMM or convolution template kernel when it generates with the map.
pub(super) fn honored(
    g: &Graph,
    fusion: &FusionPlan,
    (regions, layout): (&[RegionPlan], &LayoutPlan),
    (producer, value): (usize, ValueId),
    map: StoreMap,
) -> bool {
    let r = &fusion.regions[producer];
    let rp = &regions[producer];
    if r.kind == RegionKind::Contraction {
        return contraction_honors(g, rp, r, value, map);
    }
    // a convolution template's kernel computes this region (its epilogue), or the
    // convolution alone
    let conv = rp
        .epilogue_of
        .or_else(|| rp.implementation.conv().map(|_| producer));
    if let Some(c) = conv {
        return conv_honors(g, fusion, (regions, layout), (c, producer), value, map);
    }
    if rp.implementation != Implementation::Template
        || rp.moments_from.is_some()
        || rp.applied_in.is_some()
    {
        return false;
    }
    let mut placed: Vec<Option<StoreMap>> = vec![None; r.outputs.len()];
    let Some(k) = r.outputs.iter().position(|&v| v == value) else {
        return false;
    };
    placed[k] = Some(map);
    let placed: &Placements = &placed;
    let order = rp
        .channels_last
        .then(|| {
            r.reduction
                .as_ref()
                .map(|s| channels_last_order(s.domain.len()))
        })
        .flatten();
    match r.kind {
        RegionKind::Pointwise => g.ty(value).shape == r.iteration,
        RegionKind::Reduction => r.reduction.as_ref().is_some_and(|space| {
            g.ty(value).shape == space.domain
                && reduction_kernel(
                    g,
                    "drtc_placement_probe",
                    (&r.nodes, &r.outputs),
                    space,
                    rp.config.clone(),
                    order.as_deref(),
                    None,
                    placed,
                )
                .is_some_and(|code| code.placed)
        }),
        // answered above
        RegionKind::Contraction
        | RegionKind::Window
        | RegionKind::Library
        | RegionKind::View
        | RegionKind::Fallback => false,
    }
}

/// Whether the template's kernel of convolution region `conv`, emitted at region `at`
/// (its pointwise partner, or `conv` itself), stores `value` through `map`.
fn conv_honors(
    g: &Graph,
    fusion: &FusionPlan,
    (regions, layout): (&[RegionPlan], &LayoutPlan),
    (conv, at): (usize, usize),
    value: ValueId,
    map: StoreMap,
) -> bool {
    let Some(plan) = regions[conv].implementation.conv() else {
        return false;
    };
    let ConvImpl::Triton { dot, phases } = plan.imp else {
        return false;
    };
    if plan.emitted_at(conv) != Some(at) {
        return false;
    }
    let outputs = &fusion.regions[at].outputs;
    let Some(k) = outputs.iter().position(|&v| v == value) else {
        return false;
    };
    let mut placed: Vec<Option<StoreMap>> = vec![None; outputs.len()];
    placed[k] = Some(map);
    conv_region_kernel(
        g,
        fusion,
        conv,
        plan.partner,
        (dot, phases),
        layout,
        (&placed, None),
    )
    .is_some()
}

/// Whether contraction region `r` (plan `rp`) stores its output `value` through `map`: a
/// GEMM drtc's template computes (not the library's, which writes a tensor of its own),
/// with no tile moments for a later region, whose output is the product's whole domain.
fn contraction_honors(
    g: &Graph,
    rp: &RegionPlan,
    r: &drtc_passes::fuse::Region,
    value: ValueId,
    map: StoreMap,
) -> bool {
    let Implementation::Gemm(gemm) = &rp.implementation else {
        return false;
    };
    let GemmImpl::Triton { dot } = gemm.imp else {
        return false;
    };
    if rp.moments.is_some() || rp.channels_last {
        return false;
    }
    let Some(k) = r.outputs.iter().position(|&v| v == value) else {
        return false;
    };
    let mut placed: Vec<Option<StoreMap>> = vec![None; r.outputs.len()];
    placed[k] = Some(map);
    let mode = DotMode { dot, moments: None };
    let region = (&r.nodes[..], &r.outputs[..]);
    g.ty(value).shape == g.ty(g.node(gemm.shape.main).outputs[0]).shape
        && contraction_kernel(
            g,
            "drtc_placement_probe",
            region,
            &gemm.shape,
            mode,
            false,
            rp.config.clone(),
            &placed,
        )
        .is_some()
}

#[cfg(test)]
mod tests {
    use super::row_major_strides;

    #[test]
    fn channels_last_strides_put_channels_innermost() {
        let order = super::channels_last_order(4);
        assert_eq!(
            super::strides_in_order(&[2, 8, 3, 5], &order),
            vec![120, 1, 40, 8]
        );
    }

    #[test]
    fn strides_are_row_major() {
        assert_eq!(row_major_strides(&[4, 3, 5]), vec![15, 5, 1]);
        assert_eq!(row_major_strides(&[7]), vec![1]);
        assert_eq!(row_major_strides(&[2, 0, 3]), vec![3, 3, 1]);
    }

    #[test]
    fn a_slice_between_boundaries_of_a_contiguous_dim_is_skewed() {
        let skew = |shape: &[i64], dim: usize, offset: i64, size: u64| {
            super::skew(shape, &row_major_strides(shape), (dim, offset), size)
        };
        // float32 rows of 32768 from column 1: one element past the boundary
        assert_eq!(skew(&[32768, 32768], 1, 1, 4), 1);
        assert_eq!(skew(&[3, 9004], 1, 3, 4), 3);
        assert_eq!(skew(&[3, 9004], 1, 8, 4), 0);
        // half-precision: eight to a boundary
        assert_eq!(skew(&[2, 64], 1, 5, 2), 5);
        // rows that do not all start on a boundary, a dim that is not contiguous
        assert_eq!(skew(&[3, 9005], 1, 3, 4), 0);
        assert_eq!(skew(&[4, 14, 5], 1, 3, 4), 0);
        // a single row needs no row alignment
        assert_eq!(skew(&[1, 9005], 1, 3, 4), 3);
    }
}
