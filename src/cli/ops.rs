//! `drtc ops`: the matrix of which layer supports which op, from each layer's own code
//! (see `drtc::driver::ops`).

use super::error::{DriverError, DriverResult};
use clap::Args;
use drtc::driver::ops::{op_matrix, OpRow, LAYERS};
use std::process::ExitCode;

#[derive(Args, Debug)]
#[command(
    about = "Print which layer supports which op (frontend, inference, FLOPs, Triton, torch, synth, e-graph)",
    long_about = concat!(
        "Print the op matrix: for every op of the IR, what each layer's own code does \
with the op's example application (no hand-written list).\n\n\
frontend  the Python frontend reads back the PyTorch call the emitter writes (yes, as other ops, or the error)\n\
infer     the example's result types\n\
flops     its FLOP count\n\
triton    what the Triton backend supports: template:KIND, library call, host view, or gap: REASON\n\
codegen   what the stitcher generated: kernel, library, host, or pytorch (computed with PyTorch, reported)\n\
torch     the PyTorch call the emitter writes\n\
synth     the synthesizer's family (- when it does not place the op)\n\
e-graph   rewrite rules matching the op, and fold when constant folding evaluates it",
        exit_status_help!()
    )
)]
pub struct OpsArgs {
    /// Print JSON lines, one object per op.
    #[arg(long)]
    pub json: bool,
    /// Only the ops whose name contains this text.
    #[arg(long)]
    pub only: Option<String>,
    /// Every column in full (infer, flops, torch, the frontend's and the Triton backend's
    /// messages): wider than a terminal. The default table fits in 100 columns.
    #[arg(long, conflicts_with = "json")]
    pub wide: bool,
}

const COMPACT_HEADER: [&str; 7] = [
    "op", "category", "front", "triton", "codegen", "synth", "e-graph",
];

/// The widest each compact column may be: the table fits in 100 columns.
const COMPACT_WIDTH: [usize; 7] = [28, 11, 6, 12, 7, 12, 10];

/// `s` cut to `w` characters, a `~` marking the cut.
fn fit(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        return s.to_string();
    }
    let cut: String = s.chars().take(w.saturating_sub(1)).collect();
    format!("{cut}~")
}

/// A row of the default table: the layers' answers in a word each.
fn compact_cells(r: &OpRow) -> [String; 7] {
    let frontend = if r.frontend == "yes" {
        "yes"
    } else if r.frontend.starts_with("as ") {
        "as ops"
    } else {
        "no"
    };
    let triton = match r.triton.strip_prefix("template:") {
        Some(kind) => kind.to_string(),
        None if r.triton.starts_with("gap") => "gap".to_string(),
        None => r.triton.clone(),
    };
    let egraph = match (r.egraph_rules, r.egraph_folds) {
        (0, false) => "-".to_string(),
        (0, true) => "fold".to_string(),
        (n, false) => n.to_string(),
        (n, true) => format!("{n}, fold"),
    };
    let cells = [
        r.op.to_string(),
        r.category.to_string(),
        frontend.to_string(),
        triton,
        r.codegen.clone(),
        r.synth.clone(),
        egraph,
    ];
    let mut i = 0;
    cells.map(|c| {
        i += 1;
        fit(&c, COMPACT_WIDTH[i - 1])
    })
}

/// Prints `table` under `header`, each column as wide as its widest cell.
fn print_table<const N: usize>(header: [&str; N], table: &[[String; N]]) {
    let mut width = header.map(str::len);
    for row in table {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |row: &[String]| {
        let padded: Vec<String> = row
            .iter()
            .zip(width)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        println!("{}", padded.join("  ").trim_end());
    };
    line(&header.map(String::from));
    for row in table {
        line(row);
    }
}

const HEADER: [&str; 10] = [
    "op", "category", "frontend", "infer", "flops", "triton", "codegen", "torch", "synth",
    "e-graph",
];

fn cells(r: &OpRow) -> [String; 10] {
    let egraph = match (r.egraph_rules, r.egraph_folds) {
        (0, false) => "-".to_string(),
        (0, true) => "fold".to_string(),
        (1, false) => "1 rule".to_string(),
        (1, true) => "1 rule, fold".to_string(),
        (n, false) => format!("{n} rules"),
        (n, true) => format!("{n} rules, fold"),
    };
    // long messages in full with --json
    let short = |s: &str| match s.char_indices().nth(48) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    };
    [
        r.op.to_string(),
        r.category.to_string(),
        short(&r.frontend),
        r.infer.clone(),
        r.flops.to_string(),
        r.triton.clone(),
        r.codegen.clone(),
        r.torch.clone(),
        r.synth.clone(),
        egraph,
    ]
}

/// `head` and the comma-separated `names` in lines of at most `width` characters, the
/// continuation lines indented.
fn print_wrapped(head: &str, names: &[&str], width: usize) {
    let mut line = head.to_string();
    for (i, name) in names.iter().enumerate() {
        let item = if i + 1 < names.len() {
            format!(" {name},")
        } else {
            format!(" {name}")
        };
        if line.chars().count() + item.chars().count() > width {
            println!("{line}");
            line = format!("   {item}");
        } else {
            line.push_str(&item);
        }
    }
    println!("{line}");
}

pub fn run(args: OpsArgs) -> DriverResult<ExitCode> {
    let rows: Vec<OpRow> = op_matrix()
        .into_iter()
        .filter(|r| args.only.as_deref().is_none_or(|s| r.op.contains(s)))
        .collect();
    if args.json {
        for r in &rows {
            let line =
                serde_json::to_string(r).map_err(|e| DriverError::Reported(e.to_string()))?;
            println!("{line}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.wide {
        let table: Vec<[String; 10]> = rows.iter().map(cells).collect();
        print_table(HEADER, &table);
    } else {
        let table: Vec<[String; 7]> = rows.iter().map(compact_cells).collect();
        print_table(COMPACT_HEADER, &table);
        println!(
            "\nfront: the Python frontend reads the emitted call back (as ops: as other ops)\n\
             triton: the template's kind, host view, library call, or gap (the reason: --wide)\n\
             e-graph: rules matching the op, fold when constant folding evaluates it\n\
             --wide: every column in full; --json: one object per op"
        );
    }
    let count = |f: &dyn Fn(&OpRow) -> bool| rows.iter().filter(|r| f(r)).count();
    println!(
        "\n{} ops: frontend reads {}, Triton templates {}, generated as kernels {},\n\
         synthesized {}, in e-graph rules {}",
        rows.len(),
        count(&|r| r.frontend == "yes"),
        count(&|r| r.triton.starts_with("template:")),
        count(&|r| r.codegen == "kernel"),
        count(&|r| r.synth != "-"),
        count(&|r| r.egraph_rules > 0),
    );
    println!();
    for layer in LAYERS {
        let names: Vec<&str> = rows
            .iter()
            .filter(|r| r.lacks.contains(&layer))
            .map(|r| r.op)
            .collect();
        if names.is_empty() {
            println!("{layer} lacks no op");
        } else {
            print_wrapped(&format!("{layer} lacks {}:", names.len()), &names, 100);
        }
    }
    Ok(ExitCode::SUCCESS)
}
