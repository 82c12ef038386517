//! Statistics of a synthesized set, answering the questions asked of the seed generator
//! with data: how uniform the op and op-pair frequencies are, what ranks, dims and FLOPs
//! look like, how many programs are distinct, and how much the op sequences overlap a
//! benchmark (KernelBench).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;

/// The fields of a `drtc synth` JSON line that the report reads.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct Record {
    pub ops: Vec<String>,
    pub flops: u64,
    #[serde(default)]
    pub shapes: Vec<Vec<i64>>,
    #[serde(default)]
    pub hash: String,
}

/// A histogram over ordered keys.
pub type Hist<K> = BTreeMap<K, usize>;

/// What `drtc synth-report` prints and plots.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub programs: usize,
    pub distinct: usize,
    pub op_counts: Hist<usize>,
    pub ops: Hist<String>,
    /// Consecutive ordered pairs in each program's op sequence.
    pub pairs: Hist<(String, String)>,
    pub ranks: Hist<usize>,
    /// `floor(log2(dim))` over every dim of every tensor.
    pub dims_log2: Hist<u32>,
    /// `floor(log2(flops))` per program.
    pub flops_log2: Hist<u32>,
}

fn log2_floor(x: u64) -> u32 {
    63 - x.max(1).leading_zeros()
}

impl Report {
    pub fn new(records: &[Record]) -> Report {
        let mut r = Report {
            programs: records.len(),
            ..Report::default()
        };
        let mut hashes = HashSet::new();
        for rec in records {
            hashes.insert(rec.hash.clone());
            *r.op_counts.entry(rec.ops.len()).or_default() += 1;
            for op in &rec.ops {
                *r.ops.entry(op.clone()).or_default() += 1;
            }
            for w in rec.ops.windows(2) {
                *r.pairs.entry((w[0].clone(), w[1].clone())).or_default() += 1;
            }
            for s in &rec.shapes {
                *r.ranks.entry(s.len()).or_default() += 1;
                for &d in s {
                    *r.dims_log2.entry(log2_floor(d.max(1) as u64)).or_default() += 1;
                }
            }
            *r.flops_log2.entry(log2_floor(rec.flops)).or_default() += 1;
        }
        r.distinct = hashes.len();
        r
    }

    /// max / min op frequency over the ops of `op_set` (infinite when one never appears).
    pub fn op_imbalance(&self, op_set: &[&str]) -> f64 {
        let counts: Vec<usize> = op_set
            .iter()
            .map(|o| self.ops.get(*o).copied().unwrap_or(0))
            .collect();
        let (min, max) = (
            counts.iter().copied().min().unwrap_or(0),
            counts.iter().copied().max().unwrap_or(0),
        );
        if min == 0 {
            f64::INFINITY
        } else {
            max as f64 / min as f64
        }
    }

    /// Pearson's chi-square statistic of the op counts against a uniform draw from `op_set`.
    pub fn op_chi_square(&self, op_set: &[&str]) -> f64 {
        let total: usize = op_set
            .iter()
            .map(|o| self.ops.get(*o).copied().unwrap_or(0))
            .sum();
        let expect = total as f64 / op_set.len().max(1) as f64;
        op_set
            .iter()
            .map(|o| {
                let c = self.ops.get(*o).copied().unwrap_or(0) as f64;
                (c - expect).powi(2) / expect.max(1e-9)
            })
            .sum()
    }
}

/// How the synthesized op sequences overlap a benchmark's.
#[derive(Clone, Debug, Default)]
pub struct Overlap {
    pub tasks: usize,
    /// Distinct ops of the benchmark, and those also in the synthesized set.
    pub bench_ops: BTreeSet<String>,
    pub shared_ops: BTreeSet<String>,
    /// Distinct consecutive op pairs of the benchmark, and those also synthesized.
    pub bench_pairs: usize,
    pub shared_pairs: usize,
    /// Benchmark tasks whose whole op sequence is some synthesized program's.
    pub exact_tasks: Vec<String>,
}

/// Compares synthesized op sequences with benchmark tasks' (name, op sequence).
pub fn overlap(records: &[Record], bench: &[(String, Vec<String>)]) -> Overlap {
    let ops: HashSet<&str> = records
        .iter()
        .flat_map(|r| r.ops.iter().map(String::as_str))
        .collect();
    let pairs: HashSet<(&str, &str)> = records
        .iter()
        .flat_map(|r| r.ops.windows(2).map(|w| (w[0].as_str(), w[1].as_str())))
        .collect();
    let seqs: HashSet<&[String]> = records.iter().map(|r| r.ops.as_slice()).collect();
    let mut o = Overlap {
        tasks: bench.len(),
        ..Overlap::default()
    };
    let mut bench_pairs: HashSet<(&str, &str)> = HashSet::new();
    for (name, seq) in bench {
        for op in seq {
            o.bench_ops.insert(op.clone());
            if ops.contains(op.as_str()) {
                o.shared_ops.insert(op.clone());
            }
        }
        for w in seq.windows(2) {
            bench_pairs.insert((w[0].as_str(), w[1].as_str()));
        }
        if !seq.is_empty() && seqs.contains(seq.as_slice()) {
            o.exact_tasks.push(name.clone());
        }
    }
    o.bench_pairs = bench_pairs.len();
    o.shared_pairs = bench_pairs.iter().filter(|p| pairs.contains(*p)).count();
    o
}

/// Maps a PyTorch spelling (function, method or module class) to an IR op name.
fn spelling_to_op(name: &str) -> Option<&'static str> {
    let snake = camel_to_snake(name);
    let n = snake.as_str();
    let n = n
        .strip_suffix("1d")
        .or_else(|| n.strip_suffix("2d"))
        .or_else(|| n.strip_suffix("3d"))
        .filter(|b| b.ends_with("norm"))
        .unwrap_or(n);
    let n = n.strip_prefix("lazy_").unwrap_or(n);
    let n = match n {
        "mm" => "matmul",
        "amax" => "max",
        "amin" => "min",
        "re_lu" => "relu",
        "leaky_re_lu" => "leaky_relu",
        "g_e_l_u" | "gelu" => "gelu",
        "si_l_u" | "silu" | "swish" => "silu",
        "log_softmax" | "log_soft_max" => "log_softmax",
        "soft_max" => "softmax",
        "soft_plus" => "softplus",
        "hard_tanh" => "hardtanh",
        "hard_swish" => "hardswish",
        "hard_sigmoid" => "hardsigmoid",
        "batch_norm" => "batch_norm",
        "clip" => "clamp",
        "mse_loss" => "mse_loss",
        "conv_transpose1d" | "conv_transpose2d" | "conv_transpose3d" => n,
        other => other,
    };
    drtc_ir::Op::from_name(n).map(|op| op.name())
}

fn camel_to_snake(s: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if i > 0 && (prev_lower || (next_lower && chars[i - 1].is_ascii_uppercase())) {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A rough op sequence of a KernelBench file: module attributes declared in `__init__`
/// (`self.conv = nn.Conv2d(...)`) and calls in `forward`, line by line, innermost call
/// first; `+ - * /` and `@` between names count as add/sub/mul/div/matmul. A textual scan,
/// not a parse: good enough for overlap statistics, not for compilation.
pub fn scan_kernelbench(src: &str) -> Vec<String> {
    let mut modules: BTreeMap<String, &'static str> = BTreeMap::new();
    for line in src.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("self.") {
            if let Some((attr, rhs)) = rest.split_once('=') {
                let rhs = rhs.trim();
                let rhs = rhs
                    .strip_prefix("nn.")
                    .or_else(|| rhs.strip_prefix("torch.nn."))
                    .unwrap_or("");
                let class: String = rhs
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if let Some(op) = spelling_to_op(&class) {
                    modules.insert(attr.trim().to_string(), op);
                }
            }
        }
    }
    let mut seq = vec![];
    let mut in_forward = false;
    let mut indent = 0;
    for line in src.lines() {
        let depth = line.len() - line.trim_start().len();
        let l = line.trim();
        if l.starts_with("def forward") {
            in_forward = true;
            indent = depth;
            continue;
        }
        if in_forward && !l.is_empty() && depth <= indent {
            in_forward = false;
        }
        if !in_forward || l.starts_with('#') {
            continue;
        }
        let mut line_ops = vec![];
        let bytes: Vec<char> = l.chars().collect();
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i];
            if c.is_alphabetic() || c == '_' {
                let start = i;
                while i < bytes.len()
                    && (bytes[i].is_alphanumeric() || bytes[i] == '_' || bytes[i] == '.')
                {
                    i += 1;
                }
                let word: String = bytes[start..i].iter().collect();
                if bytes.get(i) == Some(&'(') {
                    let last = word.rsplit('.').next().unwrap_or(&word);
                    let op = if let Some(attr) = word.strip_prefix("self.") {
                        modules.get(attr).copied()
                    } else if word.contains('.') || matches!(last, "max" | "min" | "abs") {
                        spelling_to_op(last)
                    } else {
                        None
                    };
                    if let Some(op) = op {
                        line_ops.push(op.to_string());
                    }
                }
                continue;
            }
            let binop = match c {
                '@' => Some("matmul"),
                '+' => Some("add"),
                '-' if i > 0 && bytes[i - 1] == ' ' && bytes.get(i + 1) == Some(&' ') => {
                    Some("sub")
                }
                '*' if bytes.get(i + 1) != Some(&'*')
                    && bytes.get(i.wrapping_sub(1)) != Some(&'*') =>
                {
                    Some("mul")
                }
                '/' => Some("div"),
                _ => None,
            };
            if let Some(op) = binop {
                line_ops.push(op.to_string());
            }
            i += 1;
        }
        line_ops.reverse();
        seq.extend(line_ops);
    }
    seq
}

/// Op sequences of every `.py` file under `dir` (recursively), named by file stem.
pub fn scan_benchmark_dir(dir: &Path) -> std::io::Result<Vec<(String, Vec<String>)>> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&d)?.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "py") {
                let src = std::fs::read_to_string(&p)?;
                let name = p
                    .file_stem()
                    .map(|s| s.to_string_lossy().to_string())
                    .unwrap_or_default();
                out.push((name, scan_kernelbench(&src)));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_map_to_ops() {
        assert_eq!(spelling_to_op("Conv2d"), Some("conv2d"));
        assert_eq!(spelling_to_op("ConvTranspose3d"), Some("conv_transpose3d"));
        assert_eq!(spelling_to_op("BatchNorm2d"), Some("batch_norm"));
        assert_eq!(spelling_to_op("GroupNorm"), Some("group_norm"));
        assert_eq!(spelling_to_op("ReLU"), Some("relu"));
        assert_eq!(spelling_to_op("log_softmax"), Some("log_softmax"));
        assert_eq!(spelling_to_op("Linear"), Some("linear"));
        assert_eq!(spelling_to_op("frobnicate"), None);
    }

    #[test]
    fn kernelbench_scan_orders_calls_innermost_first() {
        let src = "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3)\n\n    def forward(self, x):\n        x = torch.relu(self.conv(x))\n        x = x * 2.0\n        return torch.sum(x, dim=1)\n\ndef get_inputs():\n    return [torch.randn(1)]\n";
        assert_eq!(scan_kernelbench(src), vec!["conv2d", "relu", "mul", "sum"]);
    }

    #[test]
    fn report_counts_ops_pairs_and_distinct_programs() {
        let rec = |ops: &[&str], hash: &str| Record {
            ops: ops.iter().map(|s| s.to_string()).collect(),
            flops: 1 << 20,
            shapes: vec![vec![4, 8], vec![8]],
            hash: hash.into(),
        };
        let recs = vec![
            rec(&["relu", "add"], "a"),
            rec(&["relu", "add"], "a"),
            rec(&["add", "relu"], "b"),
        ];
        let r = Report::new(&recs);
        assert_eq!(r.distinct, 2);
        assert_eq!(r.ops["relu"], 3);
        assert_eq!(r.pairs[&("relu".to_string(), "add".to_string())], 2);
        assert_eq!(r.ranks[&2], 3);
        assert_eq!(r.dims_log2[&3], 6);
        assert_eq!(r.flops_log2[&20], 3);
        assert_eq!(r.op_imbalance(&["relu", "add"]), 1.0);
        assert!(r.op_imbalance(&["relu", "sub"]).is_infinite());
        let bench = vec![("t".to_string(), vec!["add".to_string(), "relu".to_string()])];
        let o = overlap(&recs, &bench);
        assert_eq!((o.bench_pairs, o.shared_pairs), (1, 1));
        assert_eq!(o.exact_tasks, vec!["t".to_string()]);
    }
}
