//! Launch-configuration variants of a region's kernel, and the key under which the
//! fastest one is cached (region contents, shapes and device).

use crate::triton::{
    contraction_variants, pointwise_variants, reduction_shape, reduction_variants, LaunchConfig,
};
use drtc_ir::{DType, Graph, Op};
use drtc_passes::fuse::{check_reduction, pointwise_domain, Region, RegionKind};

/// The configurations worth trying for `region` (empty when there is nothing to choose:
/// host regions, windows, split reductions).
pub fn region_variants(g: &Graph, region: &Region) -> Vec<LaunchConfig> {
    match region.kind {
        RegionKind::Pointwise => {
            let n: u64 = pointwise_domain(g, &region.nodes)
                .iter()
                .map(|&d| d as u64)
                .product();
            pointwise_variants(n)
        }
        RegionKind::Reduction => match check_reduction(g, &region.nodes) {
            Ok(space) => {
                let (rows, cols, split) = reduction_shape(&space);
                if split {
                    vec![]
                } else {
                    reduction_variants(rows, cols)
                }
            }
            Err(_) => vec![],
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
            contraction_variants(out.shape[r - 2] as u64, out.shape[r - 1] as u64, half)
        }
        _ => vec![],
    }
}

/// FNV-1a, 64 bits: a stable hash for cache keys (std's hasher may change between
/// releases).
fn fnv1a(bytes: &[u8]) -> u64 {
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
