//! What `drtc synth-report --plots` draws, as data: each chart's title, axis titles,
//! categories (every bucket between the smallest and largest, empty ones included) and
//! series (the synthetic set, and with `--against` the benchmark beside it). `synth_plot`
//! renders them; their text form is what the tests snapshot.

use drtc_synth::report::{Hist, Report};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// One series of a bar chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub values: Vec<f64>,
}

/// A bar chart: one group of bars per category, one bar per series.
#[derive(Clone, Debug, PartialEq)]
pub struct BarChart {
    pub file: &'static str,
    pub title: String,
    pub x_title: String,
    pub y_title: String,
    pub categories: Vec<String>,
    pub series: Vec<Series>,
}

/// A heatmap of counts (row = first op, column = the op after it), with cells marked
/// (`marks`, named `mark_name`) where the benchmark has that pair.
#[derive(Clone, Debug, PartialEq)]
pub struct HeatMap {
    pub file: &'static str,
    pub title: String,
    pub row_title: String,
    pub col_title: String,
    pub labels: Vec<String>,
    pub counts: Vec<Vec<usize>>,
    pub marks: Option<(String, Vec<Vec<bool>>)>,
}

/// A chart of the report.
#[derive(Clone, Debug, PartialEq)]
pub enum Chart {
    Bars(BarChart),
    Heat(HeatMap),
}

impl Chart {
    pub fn file(&self) -> &'static str {
        match self {
            Chart::Bars(b) => b.file,
            Chart::Heat(h) => h.file,
        }
    }
}

/// The benchmark beside the synthetic set: its name and each task's op sequence.
pub struct Benchmark<'a> {
    pub name: String,
    pub tasks: &'a [(String, Vec<String>)],
}

/// Every key from the smallest to the largest, with 0 for the empty ones.
fn dense(h: &Hist<u32>) -> (Vec<u32>, Vec<f64>) {
    let (Some(&lo), Some(&hi)) = (h.keys().next(), h.keys().next_back()) else {
        return (vec![], vec![]);
    };
    let keys: Vec<u32> = (lo..=hi).collect();
    let values = keys
        .iter()
        .map(|k| *h.get(k).unwrap_or(&0) as f64)
        .collect();
    (keys, values)
}

fn dense_usize(h: &Hist<usize>) -> (Vec<usize>, Vec<f64>) {
    let (Some(&lo), Some(&hi)) = (h.keys().next(), h.keys().next_back()) else {
        return (vec![], vec![]);
    };
    let keys: Vec<usize> = (lo..=hi).collect();
    let values = keys
        .iter()
        .map(|k| *h.get(k).unwrap_or(&0) as f64)
        .collect();
    (keys, values)
}

fn percent(values: &[f64]) -> Vec<f64> {
    let total: f64 = values.iter().sum();
    values
        .iter()
        .map(|v| if total > 0.0 { 100.0 * v / total } else { 0.0 })
        .collect()
}

/// The report's charts; `names` is the op set in its order.
pub fn charts(rep: &Report, names: &[&str], bench: Option<&Benchmark>) -> Vec<Chart> {
    let mut out = vec![];
    // ops: the op set, then benchmark ops outside it (never synthesized)
    let mut labels: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    let mut bench_ops: BTreeMap<String, usize> = BTreeMap::new();
    if let Some(b) = bench {
        for (_, seq) in b.tasks {
            for op in seq {
                *bench_ops.entry(op.clone()).or_default() += 1;
            }
        }
        for op in bench_ops.keys() {
            if !labels.contains(op) {
                labels.push(op.clone());
            }
        }
    }
    let synth: Vec<f64> = labels
        .iter()
        .map(|n| *rep.ops.get(n).unwrap_or(&0) as f64)
        .collect();
    let ops = match bench {
        None => BarChart {
            file: "ops.png",
            title: format!("op frequency ({} programs)", rep.programs),
            x_title: "op".into(),
            y_title: "occurrences".into(),
            categories: labels.clone(),
            series: vec![Series {
                name: "synthetic".into(),
                values: synth,
            }],
        },
        Some(b) => {
            let theirs: Vec<f64> = labels
                .iter()
                .map(|n| *bench_ops.get(n).unwrap_or(&0) as f64)
                .collect();
            BarChart {
                file: "ops.png",
                title: format!(
                    "op frequency: {} synthetic programs vs {} ({} tasks)",
                    rep.programs,
                    b.name,
                    b.tasks.len()
                ),
                x_title: "op".into(),
                y_title: "share of op occurrences (%)".into(),
                categories: labels.clone(),
                series: vec![
                    Series {
                        name: "synthetic".into(),
                        values: percent(&synth),
                    },
                    Series {
                        name: b.name.clone(),
                        values: percent(&theirs),
                    },
                ],
            }
        }
    };
    out.push(Chart::Bars(ops));
    let counts: Vec<Vec<usize>> = labels
        .iter()
        .map(|a| {
            labels
                .iter()
                .map(|b| *rep.pairs.get(&(a.clone(), b.clone())).unwrap_or(&0))
                .collect()
        })
        .collect();
    let marks = bench.map(|b| {
        let pairs: BTreeSet<(&str, &str)> = b
            .tasks
            .iter()
            .flat_map(|(_, s)| s.windows(2).map(|w| (w[0].as_str(), w[1].as_str())))
            .collect();
        let grid = labels
            .iter()
            .map(|a| {
                labels
                    .iter()
                    .map(|c| pairs.contains(&(a.as_str(), c.as_str())))
                    .collect()
            })
            .collect();
        (format!("pair occurs in {}", b.name), grid)
    });
    out.push(Chart::Heat(HeatMap {
        file: "op_pairs.png",
        title: "consecutive op pairs".into(),
        row_title: "first op".into(),
        col_title: "next op".into(),
        labels,
        counts,
        marks,
    }));
    let (keys, values) = dense(&rep.dims_log2);
    out.push(Chart::Bars(BarChart {
        file: "dims.png",
        title: "tensor dim sizes".into(),
        x_title: "dim size, log2 bucket (2^k <= size < 2^(k+1))".into(),
        y_title: "dims".into(),
        categories: keys.iter().map(|k| format!("2^{k}")).collect(),
        series: vec![Series {
            name: "synthetic".into(),
            values,
        }],
    }));
    let (keys, values) = dense(&rep.flops_log2);
    out.push(Chart::Bars(BarChart {
        file: "flops.png",
        title: "program FLOPs".into(),
        x_title: "FLOPs, log2 bucket (2^k <= FLOPs < 2^(k+1))".into(),
        y_title: "programs".into(),
        categories: keys.iter().map(|k| format!("2^{k}")).collect(),
        series: vec![Series {
            name: "synthetic".into(),
            values,
        }],
    }));
    let (keys, values) = dense_usize(&rep.ranks);
    out.push(Chart::Bars(BarChart {
        file: "ranks.png",
        title: "tensor ranks".into(),
        x_title: "rank".into(),
        y_title: "tensors".into(),
        categories: keys.iter().map(|k| k.to_string()).collect(),
        series: vec![Series {
            name: "synthetic".into(),
            values,
        }],
    }));
    out
}

impl fmt::Display for Chart {
    /// The chart as text: titles, then one line per category (per row of a heatmap, its
    /// non-zero cells and marks).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Chart::Bars(b) => {
                writeln!(f, "{}: {}", b.file, b.title)?;
                writeln!(f, "  x: {} | y: {}", b.x_title, b.y_title)?;
                let names: Vec<&str> = b.series.iter().map(|s| s.name.as_str()).collect();
                writeln!(f, "  series: {}", names.join(", "))?;
                for (i, c) in b.categories.iter().enumerate() {
                    let vals: Vec<String> = b
                        .series
                        .iter()
                        .map(|s| format!("{:.2}", s.values[i]))
                        .collect();
                    writeln!(f, "  {c}: {}", vals.join(" "))?;
                }
            }
            Chart::Heat(h) => {
                writeln!(f, "{}: {}", h.file, h.title)?;
                writeln!(f, "  rows: {} | columns: {}", h.row_title, h.col_title)?;
                if let Some((name, _)) = &h.marks {
                    writeln!(f, "  marked: {name}")?;
                }
                for (i, row) in h.counts.iter().enumerate() {
                    let cells: Vec<String> = row
                        .iter()
                        .enumerate()
                        .filter_map(|(j, &v)| {
                            let marked = h.marks.as_ref().is_some_and(|(_, m)| m[i][j]);
                            (v > 0 || marked).then(|| {
                                format!("{}={v}{}", h.labels[j], if marked { "*" } else { "" })
                            })
                        })
                        .collect();
                    if !cells.is_empty() {
                        writeln!(f, "  {}: {}", h.labels[i], cells.join(" "))?;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drtc_synth::report::Record;

    fn record(ops: &[&str], flops: u64, shapes: &[&[i64]]) -> Record {
        Record {
            ops: ops.iter().map(|s| s.to_string()).collect(),
            flops,
            shapes: shapes.iter().map(|s| s.to_vec()).collect(),
            hash: format!("{ops:?}{flops}"),
        }
    }

    fn fixture() -> (Report, Vec<(String, Vec<String>)>) {
        let records = [
            record(&["add", "relu"], 1 << 10, &[&[4, 8], &[4, 8]]),
            record(&["relu", "add"], 1 << 13, &[&[2, 64, 3]]),
            record(&["matmul"], (1 << 13) + 5, &[&[16, 16]]),
        ];
        let bench = vec![
            (
                "t1".to_string(),
                vec!["matmul".to_string(), "relu".to_string()],
            ),
            (
                "t2".to_string(),
                vec!["conv2d".to_string(), "relu".to_string()],
            ),
        ];
        (Report::new(&records), bench)
    }

    #[test]
    fn charts_have_axis_titles_empty_buckets_and_the_benchmark_beside() {
        let (rep, bench) = fixture();
        let names = ["add", "relu", "matmul"];
        let b = Benchmark {
            name: "bench".into(),
            tasks: &bench,
        };
        let text: String = charts(&rep, &names, Some(&b))
            .iter()
            .map(|c| c.to_string())
            .collect();
        insta::assert_snapshot!(text);
        // without a benchmark: counts, one series, no marks
        let alone = charts(&rep, &names, None);
        let Chart::Bars(ops) = &alone[0] else {
            panic!("ops first")
        };
        assert_eq!(ops.series.len(), 1);
        assert_eq!(ops.series[0].values, vec![2.0, 2.0, 1.0]);
        let Chart::Heat(pairs) = &alone[1] else {
            panic!("pairs second")
        };
        assert!(pairs.marks.is_none());
    }

    #[test]
    fn every_chart_renders_a_png_of_its_size() {
        let (rep, bench) = fixture();
        let b = Benchmark {
            name: "bench".into(),
            tasks: &bench,
        };
        let dir = tempfile::tempdir().unwrap();
        for chart in charts(&rep, &["add", "relu", "matmul"], Some(&b)) {
            let p = dir.path().join(chart.file());
            crate::cli::synth_plot::render(&chart, &p).unwrap();
            let bytes = std::fs::read(&p).unwrap();
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", chart.file());
            let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
            let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
            assert!(
                width >= 400 && height >= 300,
                "{}: {width}x{height}",
                chart.file()
            );
        }
    }
}
