//! The index space of a reduction region: rows and columns, what each domain dim is, and
//! the runs of columns that are adjacent in a row-major tensor of the domain's shape.

use drtc_passes::fuse::ReduceSpace;

pub(super) struct Dims {
    /// index expression of each domain dim, in Full space
    pub(super) full: Vec<String>,
    /// index expression of each domain dim, in Row space ("0" for column dims)
    pub(super) row: Vec<String>,
    pub(super) row_comps: Vec<(String, i64)>,
    pub(super) col_comps: Vec<(String, i64)>,
    /// what each domain dim is
    pub(super) kinds: Vec<DimKind>,
    /// the column dims in runs that are contiguous in a row-major tensor of the domain's
    /// shape (`flat.rs`)
    pub(super) runs: Vec<Run>,
}

/// A domain dim of a reduction space.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum DimKind {
    /// size 1
    Unit,
    Row,
    Col,
    /// a group_norm channel dim: `row * per + col`, `row` its row index ("0" for one group)
    Group {
        row: String,
        per: i64,
    },
}

pub(super) fn dims_of(space: &ReduceSpace) -> Dims {
    let mut d = Dims {
        full: vec![],
        row: vec![],
        row_comps: vec![],
        col_comps: vec![],
        kinds: vec![],
        runs: vec![],
    };
    for (i, (&size, &red)) in space.domain.iter().zip(&space.reduced).enumerate() {
        match space.groups {
            Some((gd, g)) if gd == i => {
                let per = size / g;
                let rg = if g == 1 {
                    "0".to_string()
                } else {
                    format!("r{i}")
                };
                let cg = if per == 1 {
                    "0".to_string()
                } else {
                    format!("c{i}")
                };
                d.row_comps.push((format!("r{i}"), g));
                d.col_comps.push((format!("c{i}"), per));
                d.kinds.push(DimKind::Group {
                    row: rg.clone(),
                    per,
                });
                d.full.push(format!("({rg} * {per} + {cg})"));
                d.row.push("0".into());
            }
            _ if size == 1 => {
                d.kinds.push(DimKind::Unit);
                d.full.push("0".into());
                d.row.push("0".into());
            }
            _ if red => {
                d.kinds.push(DimKind::Col);
                d.col_comps.push((format!("c{i}"), size));
                d.full.push(format!("c{i}"));
                d.row.push("0".into());
            }
            _ => {
                d.kinds.push(DimKind::Row);
                d.row_comps.push((format!("r{i}"), size));
                d.full.push(format!("r{i}"));
                d.row.push(format!("r{i}"));
            }
        }
    }
    d.runs = runs_of(&d.kinds, &space.domain);
    d
}

/// The index space with its columns enumerated in memory order: when `order` (the memory
/// order of the domain-shaped tensors, outermost first) is given and `order_free` (no
/// reduction in the region depends on the columns' order, as arg-reductions do: their
/// result is a column index), the column comps are sorted by their dim's position in
/// `order`, so that consecutive columns of a channels-last group norm are adjacent
/// channels of one group. Reordered columns have no run form (the run form assumes the
/// row-major column order): every load then goes through its strides.
pub(super) fn dims_in_order(
    space: &ReduceSpace,
    order: Option<&[usize]>,
    order_free: bool,
) -> Dims {
    let mut d = dims_of(space);
    let Some(order) = order.filter(|_| order_free) else {
        return d;
    };
    let pos = |name: &str| -> usize {
        let dim: usize = name[1..].parse().expect("a column comp is named c<dim>");
        order.iter().position(|&o| o == dim).unwrap_or(dim)
    };
    let mut sorted = d.col_comps.clone();
    sorted.sort_by_key(|c| pos(&c.0));
    if sorted != d.col_comps {
        d.col_comps = sorted;
        d.runs = vec![];
    }
    d
}

/// A run of column dims, adjacent in a row-major tensor of the domain's shape.
#[derive(Clone, Debug)]
pub(crate) struct Run {
    /// Domain dims, in order (a group dim only first).
    pub(crate) dims: Vec<usize>,
    /// Product of the dims' column sizes.
    pub(crate) size: i64,
    /// The variable holding the run's index: `cols` for a single run, else `cr{j}`.
    pub(crate) var: String,
}

/// The runs of a domain: maximal sequences of column dims with only unit dims between
/// them; a row dim ends a run, a group dim (a row part before its columns) starts one.
pub(crate) fn runs_of(kinds: &[DimKind], domain: &[i64]) -> Vec<Run> {
    let mut runs: Vec<Run> = vec![];
    let mut open = false;
    for (d, kind) in kinds.iter().enumerate() {
        match kind {
            DimKind::Unit => {}
            DimKind::Row => open = false,
            DimKind::Col if open => {
                let r = runs.last_mut().expect("an open run");
                r.dims.push(d);
                r.size *= domain[d];
            }
            DimKind::Col => {
                runs.push(Run {
                    dims: vec![d],
                    size: domain[d],
                    var: String::new(),
                });
                open = true;
            }
            DimKind::Group { per, .. } => {
                runs.push(Run {
                    dims: vec![d],
                    size: *per,
                    var: String::new(),
                });
                open = true;
            }
        }
    }
    if runs.iter().any(|r| r.size == 0) {
        // an empty domain: no run form (its index arithmetic would divide by zero)
        return vec![];
    }
    let single = runs.len() == 1;
    for (j, r) in runs.iter_mut().enumerate() {
        r.var = if single {
            "cols".into()
        } else {
            format!("cr{j}")
        };
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group_norm() -> ReduceSpace {
        ReduceSpace {
            domain: vec![2, 32, 5, 6],
            reduced: vec![false, true, true, true],
            groups: Some((1, 4)),
        }
    }

    fn names(d: &Dims) -> Vec<&str> {
        d.col_comps.iter().map(|c| c.0.as_str()).collect()
    }

    #[test]
    fn channels_last_group_norm_columns_are_walked_in_memory_order() {
        let cl = [0, 2, 3, 1];
        let d = dims_in_order(&group_norm(), Some(&cl), true);
        assert_eq!(names(&d), ["c2", "c3", "c1"]);
        assert!(d.runs.is_empty(), "reordered columns have no run form");
        // row-major, or a region whose result is a column index: the domain's order
        assert_eq!(
            names(&dims_in_order(&group_norm(), None, true)),
            ["c1", "c2", "c3"]
        );
        let arg = dims_in_order(&group_norm(), Some(&cl), false);
        assert_eq!(names(&arg), ["c1", "c2", "c3"]);
        assert_eq!(arg.runs.len(), 1);
    }

    #[test]
    fn an_order_that_keeps_the_columns_keeps_the_run_form() {
        // a batch norm over N, H, W: channels-last does not reorder its columns
        let bn = ReduceSpace {
            domain: vec![2, 32, 5, 6],
            reduced: vec![true, false, true, true],
            groups: None,
        };
        let d = dims_in_order(&bn, Some(&[0, 2, 3, 1]), true);
        assert_eq!(names(&d), ["c0", "c2", "c3"]);
        assert_eq!(d.runs.len(), 2);
    }
}
