//! Launch-configuration variants of a region's kernel, and the key under which the
//! fastest one is cached (region contents, shapes and device).

use crate::triton::{
    candidates, contraction_variants, long_rows_split_config, pointwise_variants, reduction_shape,
    reduction_variants, small_tiles_config, too_few_tiles, DotPrecision, GemmImpl, GemmShape,
    LaunchConfig, Precision,
};
use drtc_ir::{DType, Graph, Op};
use drtc_passes::fuse::{Region, RegionKind};

/// The configurations worth trying for `region` (empty when there is nothing to choose:
/// host regions, windows, split reductions).
pub fn region_variants(g: &Graph, region: &Region) -> Vec<LaunchConfig> {
    match region.kind {
        RegionKind::Pointwise => {
            let n: u64 = region.iteration.iter().map(|&d| d as u64).product();
            pointwise_variants(n)
        }
        RegionKind::Reduction => match &region.reduction {
            Some(space) => {
                let (rows, cols, split) = reduction_shape(space);
                if split {
                    vec![]
                } else {
                    let mut out = reduction_variants(rows, cols);
                    out.extend(long_rows_split_config(g, &region.nodes, space));
                    out
                }
            }
            None => vec![],
        },
        RegionKind::Contraction => {
            let Some(&main) = region
                .nodes
                .iter()
                .find(|&&n| matches!(g.node(n).op, Op::Matmul | Op::Bmm | Op::Linear))
            else {
                return vec![];
            };
            let node = g.node(main);
            let out = g.ty(node.outputs[0]);
            let r = out.rank();
            if r < 2 {
                return vec![];
            }
            let half = matches!(g.ty(node.inputs[0]).dtype, DType::F16 | DType::BF16);
            let k = g.ty(node.inputs[0]).shape.last().copied().unwrap_or(1) as u64;
            let batch = out.shape[..r - 2].iter().map(|&d| d as u64).product();
            contraction_variants(
                out.shape[r - 2] as u64,
                out.shape[r - 1] as u64,
                k,
                batch,
                half,
            )
        }
        // windows have one configuration; host regions none
        RegionKind::Window | RegionKind::Library | RegionKind::View | RegionKind::Fallback => {
            vec![]
        }
    }
}

/// The implementations worth trying for a GEMM region of `shape` (the lowering plan's)
/// under `policy`: the library call (with its fused epilogue; also on zero-padded operand
/// copies when K or N is not a multiple of 4), and the fastest Triton precision the error
/// model admits with each of its launch configurations.
pub fn gemm_variants(
    shape: &GemmShape,
    policy: Precision,
) -> Vec<(GemmImpl, Option<LaunchConfig>)> {
    let all = candidates(policy, shape.k, shape.half);
    let mut out = vec![];
    let admitted: Vec<DotPrecision> = (all.iter().filter(|c| c.admitted))
        .filter_map(|c| match c.imp {
            GemmImpl::Triton { dot } => Some(dot),
            GemmImpl::Library | GemmImpl::PaddedLibrary | GemmImpl::PyTorch => None,
        })
        .collect();
    // the template, unless it would leave most of the GPU idle (`FEW_TILES`); there, its
    // 64 x 64 tiles where they are enough
    if let Some(&dot) = admitted.iter().find(|&&d| !too_few_tiles(shape, d)) {
        for c in contraction_variants(shape.m, shape.n, shape.k, shape.batch, shape.half) {
            out.push((GemmImpl::Triton { dot }, Some(c)));
        }
    } else if let Some((dot, c)) =
        (admitted.iter()).find_map(|&d| small_tiles_config(shape, d).map(|c| (d, c)))
    {
        out.push((GemmImpl::Triton { dot }, Some(c)));
    }
    out.push((GemmImpl::Library, None));
    // K or N not a multiple of 4 fp32: rows not 16-byte aligned, where cuBLAS falls back
    // to slower kernels; the same call on zero-padded copies is measured against it
    let aligned = shape.k.is_multiple_of(4) && shape.n.is_multiple_of(4);
    if !shape.half && !aligned {
        out.push((GemmImpl::PaddedLibrary, None));
    }
    out
}

/// FNV-1a, 64 bits: a stable hash for cache keys (std's hasher may change between
/// releases).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// A key naming a region's computation (ops, attributes, input and output types, in
/// order) on a device, independent of value numbering elsewhere in the graph.
pub fn region_key(g: &Graph, region: &Region, device: &str) -> String {
    let mut text = format!("{device}|{}|", region.kind.name());
    let mut local: Vec<drtc_ir::ValueId> = vec![];
    let name = |local: &Vec<drtc_ir::ValueId>, v: drtc_ir::ValueId| match local
        .iter()
        .position(|&x| x == v)
    {
        Some(i) => format!("%{i}"),
        None => format!("in:{}", g.ty(v)),
    };
    for &n in &region.nodes {
        let node = g.node(n);
        let args: Vec<String> = node.inputs.iter().map(|&v| name(&local, v)).collect();
        let attrs: Vec<String> = node.attrs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let outs: Vec<String> = node.outputs.iter().map(|&v| g.ty(v).to_string()).collect();
        text.push_str(&format!(
            "{}({}){{{}}}:{};",
            node.op.name(),
            args.join(","),
            attrs.join(","),
            outs.join(",")
        ));
        local.extend(node.outputs.iter().copied());
    }
    let outs: Vec<String> = region.outputs.iter().map(|&v| name(&local, v)).collect();
    text.push_str(&format!("->{}", outs.join(",")));
    format!("{:016x}", fnv1a(text.as_bytes()))
}
