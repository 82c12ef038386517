//! Filetests for passes: each `filetests/*.drt` starts with `// pipeline: <pipeline>`, then
//! a graph in the text format. The harness parses the graph, runs the pipeline through the
//! pass manager with verify-each on, and snapshots the decisions the passes logged and the
//! printed result (`filetests/snapshots/<file name>.snap`), so a change in any pass shows
//! up as a readable IR diff. The result must also read back to itself.

use drtc_ir::text;
use drtc_passes::{ManagerOptions, PassManager};
use std::fmt::Write;
use std::path::{Path, PathBuf};

const HEADER: &str = "// pipeline:";

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/filetests")
}

fn files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("tests/filetests exists")
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "drt"))
        .collect();
    files.sort();
    files
}

/// Runs one filetest; `Err` says what went wrong (parse error with caret, pipeline error,
/// pass or verifier failure).
fn run_file(path: &Path) -> Result<String, String> {
    let name = path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    let src = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let pipeline = src
        .lines()
        .next()
        .and_then(|l| l.strip_prefix(HEADER))
        .ok_or_else(|| format!("the first line must be `{HEADER} <pipeline>`"))?
        .trim();
    let mut graph = text::parse(&src).map_err(|e| e.render(&src, &name))?;
    let options = ManagerOptions {
        verify_each: true,
        print_ir_after: vec![],
    };
    let pm = PassManager::parse(pipeline, options).map_err(|e| match e {
        drtc_passes::PassError::Pipeline(p) => p.render(),
        other => other.to_string(),
    })?;
    let report = pm.run(&mut graph).map_err(|e| e.to_string())?;
    let printed = text::print(&graph);
    let reparsed = text::parse(&printed).map_err(|e| e.render(&printed, "<result>"))?;
    if text::print(&reparsed) != printed {
        return Err(format!(
            "the result does not read back to itself:\n{printed}"
        ));
    }
    let mut out = format!("// pipeline: {}\n", pm.pipeline());
    for run in &report.runs {
        for d in &run.decisions {
            writeln!(out, "// {}: {d}", run.pass).unwrap();
        }
    }
    out.push_str(&printed);
    Ok(out)
}

#[test]
fn filetests() {
    let files = files();
    let mut failures = vec![];
    for path in &files {
        let stem = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let outcome = std::panic::catch_unwind(|| {
            let out = run_file(path).unwrap_or_else(|e| panic!("{}:\n{e}", path.display()));
            insta::with_settings!({
                snapshot_path => "filetests/snapshots",
                prepend_module_to_snapshot => false,
                input_file => path,
                omit_expression => true,
            }, {
                insta::assert_snapshot!(stem.as_str(), out);
            });
        });
        if outcome.is_err() {
            failures.push(stem);
        }
    }
    assert!(
        failures.is_empty(),
        "failing filetests: {}",
        failures.join(", ")
    );
}

/// Every registered pass has filetests (`<pass>_*.drt`); the foundational `dce` and `cse`
/// have at least five each.
#[test]
fn every_pass_has_filetests() {
    let names: Vec<String> = files()
        .iter()
        .map(|p| {
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string()
        })
        .collect();
    for pass in drtc_passes::registry::names() {
        let n = names
            .iter()
            .filter(|f| f.starts_with(&format!("{pass}_")))
            .count();
        let want = if matches!(pass, "dce" | "cse") { 5 } else { 1 };
        assert!(
            n >= want,
            "pass `{pass}` has {n} filetests (`{pass}_*.drt`), want at least {want}"
        );
    }
}

#[test]
fn every_snapshot_has_its_filetest() {
    let stems: Vec<String> = files()
        .iter()
        .map(|p| {
            p.file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string()
        })
        .collect();
    let snaps = dir().join("snapshots");
    for entry in std::fs::read_dir(&snaps).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if let Some(stem) = name.strip_suffix(".snap") {
            assert!(
                stems.iter().any(|s| s == stem),
                "snapshot {name} has no filetest"
            );
        }
    }
}
