//! Flat column offsets: fewer index operations per element for contiguous tensors.
//!
//! A reduction kernel's column index `cols` is decomposed into one index per reduced dim
//! (`c2 = cols % W`, ...), and a load adds `c_k * stride_k` per dim: two integer divisions
//! per dim and element. In a row-major contiguous tensor, column dims that are adjacent in
//! memory form a *run* whose offset is one index times the stride of its last dim: the
//! trailing run of a group norm or a softmax is `cols` itself, and the `[H, W]` run of a
//! batch norm over `[N, H, W]` is `cols % (H * W)`. Loads of region inputs take the run
//! form when the input is contiguous at run time (a constexpr the host sets to
//! `x.is_contiguous()`), the strided form otherwise; stores into the region's own
//! (contiguous) outputs always take it.

use super::space::{DimKind, Dims};
use crate::triton::epilogue::contiguous_offset;
use crate::triton::statements::DimMap;
use std::fmt::Write;

/// Python lines computing the run indices from `cols` (none for a single run, which is
/// `cols`).
pub(crate) fn runs_decompose(out: &mut String, indent: &str, dims: &Dims) {
    if dims.runs.len() < 2 {
        return;
    }
    let mut later: i64 = dims.runs.iter().map(|r| r.size).product();
    for (j, r) in dims.runs.iter().enumerate() {
        later /= r.size;
        let q = if later == 1 {
            "cols".to_string()
        } else {
            format!("(cols // {later})")
        };
        let e = if j == 0 {
            q
        } else {
            format!("{q} % {}", r.size)
        };
        writeln!(out, "{indent}{} = {e}", r.var).unwrap();
    }
}

/// The offset terms `(tensor dim, index)` of a Full-space load through `map` of a
/// row-major contiguous tensor, each to be multiplied by that dim's stride: row dims by
/// their index, the row part of a group dim, and each run by its index at its last dim.
/// `None` when some column dim is broadcast or a run is not contiguous in the tensor.
pub(crate) fn flat_terms(dims: &Dims, map: &DimMap) -> Option<Vec<(usize, String)>> {
    let has_columns = dims
        .kinds
        .iter()
        .any(|k| matches!(k, DimKind::Col | DimKind::Group { .. }));
    if has_columns && dims.runs.is_empty() {
        return None;
    }
    let tensor_dim = |d: usize| map.iter().position(|m| *m == Some(d));
    let mut terms = vec![];
    for (t, m) in map.iter().enumerate() {
        let Some(d) = *m else { continue };
        match &dims.kinds[d] {
            DimKind::Row => terms.push((t, dims.full[d].clone())),
            DimKind::Group { row, per } if row != "0" => {
                terms.push((t, format!("{row} * {per}")));
            }
            DimKind::Group { .. } | DimKind::Col | DimKind::Unit => {}
        }
    }
    for run in &dims.runs {
        let ts: Vec<usize> = run
            .dims
            .iter()
            .map(|&d| tensor_dim(d))
            .collect::<Option<_>>()?;
        // the run's dims, adjacent among the tensor's dims that index the domain
        let used: Vec<usize> = (0..map.len()).filter(|&t| map[t].is_some()).collect();
        let first = used.iter().position(|&t| t == ts[0])?;
        if used.get(first..first + ts.len()) != Some(&ts[..]) {
            return None;
        }
        terms.push((*ts.last().unwrap(), run.var.clone()));
    }
    Some(terms)
}

/// The offset of a Full-space store into a contiguous output of the domain's shape (the
/// region's own outputs), in run form; `None` where there are no runs.
pub(crate) fn flat_store_offset(dims: &Dims, domain: &[i64]) -> Option<String> {
    if dims.runs.is_empty() {
        return None;
    }
    let map: DimMap = domain
        .iter()
        .enumerate()
        .map(|(d, &n)| (n != 1).then_some(d))
        .collect();
    let terms = flat_terms(dims, &map)?;
    let terms: Vec<String> = terms
        .iter()
        .map(|(t, e)| match domain[t + 1..].iter().product::<i64>() {
            1 => e.clone(),
            stride => format!("{e} * {stride}"),
        })
        .collect();
    Some(terms.join(" + "))
}

/// The offset of a Full-space store into the region's own output of the domain's shape:
/// dense in `order` (outermost first) when given (channels-last outputs), else row-major
/// in run form where there are runs.
pub(crate) fn store_offset(dims: &Dims, domain: &[i64], order: Option<&[usize]>) -> String {
    let Some(order) = order else {
        return flat_store_offset(dims, domain)
            .unwrap_or_else(|| contiguous_offset(domain, &|d| dims.full[d].clone()));
    };
    let mut stride = vec![0i64; domain.len()];
    let mut s = 1i64;
    for &d in order.iter().rev() {
        stride[d] = s;
        s *= domain[d];
    }
    let terms: Vec<String> = (0..domain.len())
        .filter(|&d| domain[d] != 1)
        .map(|d| match stride[d] {
            1 => dims.full[d].clone(),
            st => format!("{} * {st}", dims.full[d]),
        })
        .collect();
    if terms.is_empty() {
        "0".into()
    } else {
        terms.join(" + ")
    }
}

#[cfg(test)]
mod tests {
    use super::super::space::dims_of;
    use super::*;
    use drtc_passes::fuse::ReduceSpace;

    fn space(domain: &[i64], reduced: &[bool], groups: Option<(usize, i64)>) -> Dims {
        dims_of(&ReduceSpace {
            domain: domain.to_vec(),
            reduced: reduced.to_vec(),
            groups,
        })
    }

    #[test]
    fn batch_norm_columns_are_two_runs() {
        // [N, C, H, W] reduced over N, H, W: the runs [N] and [H, W]
        let d = space(&[8, 4, 5, 6], &[true, false, true, true], None);
        let runs: Vec<(Vec<usize>, i64)> =
            d.runs.iter().map(|r| (r.dims.clone(), r.size)).collect();
        assert_eq!(runs, vec![(vec![0], 8), (vec![2, 3], 30)]);
        let mut py = String::new();
        runs_decompose(&mut py, "", &d);
        assert_eq!(py, "cr0 = (cols // 30)\ncr1 = cols % 30\n");
        let full: DimMap = vec![Some(0), Some(1), Some(2), Some(3)];
        let terms = flat_terms(&d, &full).unwrap();
        assert_eq!(
            terms,
            vec![(1, "r1".into()), (0, "cr0".into()), (3, "cr1".into())]
        );
        // a per-channel tensor broadcast over the columns has no run form
        assert!(flat_terms(&d, &vec![Some(1), None, None]).is_none());
        // the stores into a contiguous [8, 4, 5, 6] output
        assert_eq!(
            flat_store_offset(&d, &[8, 4, 5, 6]).unwrap(),
            "r1 * 30 + cr0 * 120 + cr1"
        );
    }

    #[test]
    fn group_norm_columns_are_one_trailing_run() {
        // [N, C, H, W] with 2 groups of the 4 channels: a row part, then cols
        let d = space(&[3, 4, 5, 6], &[false, true, true, true], Some((1, 2)));
        assert_eq!(d.runs.len(), 1);
        assert_eq!(d.runs[0].var, "cols");
        let terms = flat_terms(&d, &vec![Some(0), Some(1), Some(2), Some(3)]).unwrap();
        assert_eq!(
            terms,
            vec![(0, "r0".into()), (1, "r1 * 2".into()), (3, "cols".into())]
        );
        assert_eq!(
            flat_store_offset(&d, &[3, 4, 5, 6]).unwrap(),
            "r0 * 120 + r1 * 2 * 30 + cols"
        );
    }

    #[test]
    fn an_empty_domain_has_no_run_form() {
        // [3, 4, 0] reduced over dims 0 and 2: two runs, one of them empty
        let d = space(&[3, 4, 0], &[true, false, true], None);
        assert!(d.runs.is_empty());
        let mut py = String::new();
        runs_decompose(&mut py, "", &d);
        assert!(py.is_empty());
        assert!(flat_terms(&d, &vec![Some(0), Some(1), Some(2)]).is_none());
        assert!(flat_store_offset(&d, &[3, 4, 0]).is_none());
    }

    #[test]
    fn channels_last_stores_follow_their_order() {
        // softmax over the channels of [N, C, H, W], outputs dense in N, H, W, C
        let d = space(&[2, 3, 4, 5], &[false, true, false, false], None);
        assert_eq!(
            store_offset(&d, &[2, 3, 4, 5], Some(&[0, 2, 3, 1])),
            "r0 * 60 + c1 + r2 * 15 + r3 * 3"
        );
    }

    #[test]
    fn a_reduction_over_a_middle_dim_is_a_run_of_one() {
        // softmax over the channels of [N, C, H, W]: the run [C] at stride H * W
        let d = space(&[2, 3, 4, 5], &[false, true, false, false], None);
        let terms = flat_terms(&d, &vec![Some(0), Some(1), Some(2), Some(3)]).unwrap();
        assert_eq!(terms.last().unwrap(), &(1, "cols".to_string()));
    }
}
