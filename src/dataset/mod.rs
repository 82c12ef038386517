//! Training datasets for kernel-writing models, in the schema verl reads: one row per task,
//! with the chat prompt rendered from the shared templates (`drtc_llm::prompt`, the same the
//! LLM backend sends), the reference program as the rule-based reward's ground truth, and
//! the task's ops, FLOPs and curriculum level.
//!
//! Two modes: `regions` splits every program into subproblems of at most `max_ops` ops
//! along fusion-legal cuts (the `decompose` pass) and asks for a `triton_fused_operator`
//! per subproblem; `whole` asks for the whole program (`ModelNew` for a KernelBench file,
//! `triton_fused_operator` for a seed program). Rows are ordered by level, easiest first,
//! and each level is also written to its own file (a curriculum by stages).

pub mod parquet;

use crate::driver::load::{load_programs, LoadedProgram};
use drtc_backends::stitch::ModuleForm;
use drtc_backends::torch::emit_seed_program;
use drtc_frontends::Signature;
use drtc_ir::Graph;
use drtc_llm::{render, ChatMessage, PromptMode, PromptTarget};
use drtc_passes::decompose::{decompose, subproblem_graph, Subproblem};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// What each row asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DatasetMode {
    /// One row per fusable subproblem (seed format, `triton_fused_operator`).
    Regions,
    /// One row per program, whole.
    Whole,
}

impl DatasetMode {
    pub fn name(self) -> &'static str {
        match self {
            DatasetMode::Regions => "regions",
            DatasetMode::Whole => "whole",
        }
    }
}

/// How a dataset is built.
#[derive(Clone, Debug)]
pub struct DatasetOptions {
    pub mode: DatasetMode,
    /// Regions mode: most ops in one subproblem.
    pub max_ops: usize,
    /// The GPU the prompts name.
    pub gpu: String,
    /// The dtype the prompts name; `None`: the program's first input's dtype.
    pub dtype: Option<String>,
    /// A user-message template replacing the shared one.
    pub template: Option<PathBuf>,
    /// `data_source` of every row.
    pub data_source: String,
    /// `ability` of every row.
    pub ability: String,
    /// Share of each level held out as `split = "test"` (chosen by a hash of the program).
    pub test_fraction: f64,
}

impl Default for DatasetOptions {
    fn default() -> Self {
        DatasetOptions {
            mode: DatasetMode::Regions,
            max_ops: 8,
            gpu: "NVIDIA H200".into(),
            dtype: None,
            template: None,
            data_source: "drtc".into(),
            ability: "triton_kernel".into(),
            test_fraction: 0.0,
        }
    }
}

/// One task.
#[derive(Clone, Debug, PartialEq)]
pub struct DatasetRow {
    pub data_source: String,
    pub prompt: Vec<ChatMessage>,
    pub ability: String,
    /// The reference program (what the reward verifies an answer against).
    pub ground_truth: String,
    /// "train" or "test".
    pub split: String,
    /// Position within its split, in curriculum order.
    pub index: usize,
    pub ops: Vec<String>,
    /// The seed's difficulty levels: 0..5 for 1, 2, 3, 5, 10, 20 ops (the level of the
    /// largest of those counts the task reaches).
    pub level: u8,
    /// Ops not counting scalar constants (what `max_ops` and `level` count).
    pub num_ops: usize,
    pub flops: u64,
    /// Where the task came from: `file.jsonl:3`, `model.py` (plus `#k` for a subproblem).
    pub source: String,
    pub mode: String,
    /// `triton_fused_operator` or `ModelNew`.
    pub entry_point: String,
}

/// The rows, and what could not be used (never dropped silently).
#[derive(Debug, Default)]
pub struct Dataset {
    pub rows: Vec<DatasetRow>,
    /// (source, reason) of programs that could not be loaded or prompted.
    pub skipped: Vec<(String, String)>,
    /// Tasks left out because an identical reference program was already a row.
    pub duplicates: usize,
}

/// The curriculum level of a task of `ops` ops.
pub fn level_of(ops: usize) -> u8 {
    let reached = [1usize, 2, 3, 5, 10, 20]
        .iter()
        .filter(|&&l| l <= ops)
        .count();
    reached.saturating_sub(1) as u8
}

/// The input files under `path`: the file itself, or every `.py`, `.jsonl` and `.drt` file
/// of a directory tree, sorted by path.
pub fn input_files(path: &Path) -> Result<Vec<PathBuf>, String> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    if !path.is_dir() {
        return Err(format!("`{}`: no such file or directory", path.display()));
    }
    let mut out = vec![];
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries =
            std::fs::read_dir(&dir).map_err(|e| format!("cannot read `{}`: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "py" | "jsonl" | "drt"))
            {
                out.push(p);
            }
        }
    }
    out.sort();
    if out.is_empty() {
        return Err(format!(
            "`{}` holds no .py, .jsonl or .drt file",
            path.display()
        ));
    }
    Ok(out)
}

fn graph_ops(g: &Graph, nodes: &[drtc_ir::NodeId]) -> Vec<String> {
    nodes
        .iter()
        .map(|&n| g.node(n).op.name().to_string())
        .collect()
}

fn first_dtype(g: &Graph) -> String {
    Signature::of(g)
        .inputs
        .first()
        .map_or("float32", |t| t.dtype)
        .to_string()
}

/// A task before it is prompted: mode, reference text, graph facts.
struct Task {
    prompt_mode: PromptMode,
    reference: String,
    ops: Vec<String>,
    op_count: usize,
    flops: u64,
    dtype: String,
    source: String,
}

fn tasks_of(p: &LoadedProgram, o: &DatasetOptions) -> Vec<Task> {
    let g = &p.graph;
    match o.mode {
        DatasetMode::Whole => {
            let nodes: Vec<_> = g.body().to_vec();
            let op_count = Subproblem {
                nodes: nodes.clone(),
                inputs: vec![],
                outputs: vec![],
            }
            .op_count(g);
            let (prompt_mode, reference) = match (&p.form, &p.reference_source) {
                (ModuleForm::KernelBench { model_source, .. }, _) => {
                    (PromptMode::Whole, model_source.clone())
                }
                (ModuleForm::Seed, Some(src)) => (PromptMode::Regions, src.clone()),
                (ModuleForm::Seed, None) => (PromptMode::Regions, emit_seed_program(g)),
            };
            vec![Task {
                prompt_mode,
                reference,
                ops: graph_ops(g, &nodes),
                op_count,
                flops: g.flops(),
                dtype: first_dtype(g),
                source: p.name.clone(),
            }]
        }
        DatasetMode::Regions => {
            let d = decompose(g, o.max_ops);
            let k = d.subproblems.len();
            d.subproblems
                .iter()
                .enumerate()
                .map(|(i, sp)| {
                    let sub = subproblem_graph(g, sp, &format!("subproblem_{i}"));
                    Task {
                        prompt_mode: PromptMode::Regions,
                        reference: emit_seed_program(&sub),
                        ops: graph_ops(g, &sp.nodes),
                        op_count: sp.op_count(g),
                        flops: sub.flops(),
                        dtype: first_dtype(&sub),
                        source: if k > 1 {
                            format!("{}#{i}", p.name)
                        } else {
                            p.name.clone()
                        },
                    }
                })
                .collect()
        }
    }
}

/// A stable hash in [0, 1) of a text (FNV-1a), for the held-out split.
fn unit_hash(text: &str) -> f64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// Builds the dataset of every program in `files`.
pub fn build(files: &[PathBuf], o: &DatasetOptions) -> Dataset {
    let mut out = Dataset::default();
    let mut seen: HashSet<String> = HashSet::new();
    for file in files {
        let name = file.display().to_string();
        let contents = match std::fs::read_to_string(file) {
            Ok(c) => c,
            Err(e) => {
                out.skipped.push((name, format!("cannot read: {e}")));
                continue;
            }
        };
        let programs = match load_programs(file, &contents, &[], None) {
            Ok(p) => p,
            Err(e) => {
                out.skipped.push((name, e));
                continue;
            }
        };
        for p in programs {
            let p = match p {
                Ok(p) => p,
                Err(e) => {
                    out.skipped.push((e.name, e.message));
                    continue;
                }
            };
            for t in tasks_of(&p, o) {
                if !seen.insert(t.reference.clone()) {
                    out.duplicates += 1;
                    continue;
                }
                let target = PromptTarget::new(
                    o.gpu.clone(),
                    o.dtype.clone().unwrap_or_else(|| t.dtype.clone()),
                );
                let prompt =
                    match render(t.prompt_mode, &t.reference, &target, o.template.as_deref()) {
                        Ok(m) => m,
                        Err(e) => {
                            out.skipped.push((t.source, e.to_string()));
                            continue;
                        }
                    };
                let split = if o.test_fraction > 0.0 && unit_hash(&t.reference) < o.test_fraction {
                    "test"
                } else {
                    "train"
                };
                out.rows.push(DatasetRow {
                    data_source: o.data_source.clone(),
                    prompt,
                    ability: o.ability.clone(),
                    ground_truth: t.reference,
                    split: split.into(),
                    index: 0,
                    ops: t.ops,
                    level: level_of(t.op_count),
                    num_ops: t.op_count,
                    flops: t.flops,
                    source: t.source,
                    mode: o.mode.name().into(),
                    entry_point: t.prompt_mode.entry_point().into(),
                });
            }
        }
    }
    // curriculum order: easiest level first, input order within a level
    out.rows.sort_by_key(|r| r.level);
    for split in ["train", "test"] {
        for (i, r) in out.rows.iter_mut().filter(|r| r.split == split).enumerate() {
            r.index = i;
        }
    }
    out
}

/// `dir/stem.level2.parquet` for `dir/stem.parquet`.
pub fn level_path(output: &Path, level: u8) -> PathBuf {
    sibling(output, &format!("level{level}"))
}

/// `dir/stem.test.parquet` for `dir/stem.parquet`.
pub fn test_path(output: &Path) -> PathBuf {
    sibling(output, "test")
}

fn sibling(output: &Path, tag: &str) -> PathBuf {
    let stem = output
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("dataset");
    output.with_file_name(format!("{stem}.{tag}.parquet"))
}

/// Writes the train rows to `output`, each level's train rows to [`level_path`], and the
/// test rows (if any) to [`test_path`]; returns the files written with their row counts.
pub fn write_all(d: &Dataset, output: &Path) -> Result<Vec<(PathBuf, usize)>, String> {
    let train: Vec<DatasetRow> = d
        .rows
        .iter()
        .filter(|r| r.split == "train")
        .cloned()
        .collect();
    let test: Vec<DatasetRow> = d
        .rows
        .iter()
        .filter(|r| r.split == "test")
        .cloned()
        .collect();
    let mut written = vec![];
    parquet::write(&train, output)?;
    written.push((output.to_path_buf(), train.len()));
    let mut levels: Vec<u8> = train.iter().map(|r| r.level).collect();
    levels.dedup();
    for l in levels {
        let rows: Vec<DatasetRow> = train.iter().filter(|r| r.level == l).cloned().collect();
        let path = level_path(output, l);
        parquet::write(&rows, &path)?;
        written.push((path, rows.len()));
    }
    if !test.is_empty() {
        let path = test_path(output);
        parquet::write(&test, &path)?;
        written.push((path, test.len()));
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_the_seed_op_counts() {
        let got: Vec<u8> = [0, 1, 2, 3, 4, 5, 9, 10, 19, 20, 40]
            .iter()
            .map(|&n| level_of(n))
            .collect();
        assert_eq!(got, vec![0, 0, 1, 2, 2, 3, 3, 4, 4, 5, 5]);
    }

    #[test]
    fn side_files_are_named_after_the_output() {
        let o = Path::new("/tmp/x/train.parquet");
        assert_eq!(level_path(o, 2), Path::new("/tmp/x/train.level2.parquet"));
        assert_eq!(test_path(o), Path::new("/tmp/x/train.test.parquet"));
    }
}
