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
