//! Replays the fuzz targets' inputs in the ordinary test suite (CI does not fuzz): every
//! file of `fuzz/seeds/<target>/` and `fuzz/regressions/<target>/` (minimized crashers,
//! once there are any) goes through the same checks as the target in `fuzz/fuzz_targets/`.
//! A check either returns or panics, as the fuzzer sees it; the file is named on stderr.

use drtc::driver::compile::{compile_graph, CompileOptions};
use drtc_backends::stitch::ModuleForm;
use drtc_frontends::{lower, split_programs, Signature};
use drtc_ir::{text, verify, Graph};
use drtc_synth::report::{overlap, scan_kernelbench, Record, Report};
use std::path::{Path, PathBuf};

fn python_frontend(src: &str) {
    match lower(src) {
        Err(e) => {
            let _ = e.render("fuzz.py", src);
        }
        Ok(l) => {
            let errors: Vec<_> = verify(&l.graph)
                .into_iter()
                .filter(|e| e.is_error())
                .collect();
            assert!(
                errors.is_empty(),
                "lowered graph does not verify: {errors:?}"
            );
            let printed = text::print(&l.graph);
            let back = text::parse(&printed).expect("printed IR parses");
            assert_eq!(text::print(&back), printed);
            let sig = Signature::of(&l.graph).to_json();
            serde_json::from_str::<serde_json::Value>(&sig).expect("signature is JSON");
        }
    }
}

fn ir_text(src: &str) {
    let g = match text::parse(src) {
        Ok(g) => g,
        Err(e) => {
            let _ = e.render(src, "fuzz.drt");
            return;
        }
    };
    if verify(&g).iter().any(|e| e.is_error()) {
        return;
    }
    let printed = text::print(&g);
    let back = text::parse(&printed).expect("printed IR parses");
    assert_eq!(text::print(&back), printed);
    let json = serde_json::to_string(&g).expect("graph serializes");
    let from_json: Graph = serde_json::from_str(&json).expect("graph JSON reads back");
    assert_eq!(text::print(&from_json), printed);
}

fn compile_pipeline(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let Ok(src) = std::str::from_utf8(rest) else {
        return;
    };
    let Ok(g) = text::parse(src) else { return };
    if verify(&g).iter().any(|e| e.is_error()) {
        return;
    }
    let opts = CompileOptions {
        interpret: flags & 1 != 0,
        simplify: flags & 2 != 0,
        ..CompileOptions::default()
    };
    let _ = compile_graph(g, &ModuleForm::Seed, &opts);
}

fn json_loaders(src: &str) {
    for p in split_programs("fuzz.jsonl", src) {
        match p {
            Ok(p) => {
                if let Err(e) = lower(&p.text) {
                    let _ = e.render(&p.name, &p.text);
                }
            }
            Err((e, raw)) => {
                let _ = e.render(&raw.name, &raw.text);
            }
        }
    }
    for n in 0..4 {
        let _ = drtc::verifier::program_file::seed_program(src, n);
    }
    let records: Vec<Record> = src
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let report = Report::new(&records);
    let names: Vec<&str> = report.ops.keys().map(String::as_str).collect();
    let _ = report.op_imbalance(&names);
    let _ = report.op_chi_square(&names);
    let _ = overlap(&records, &[("fuzz.py".into(), scan_kernelbench(src))]);
}

/// The input files of `target`, from the seed corpus and the regressions.
fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut files = vec![];
    for dir in ["seeds", "regressions"] {
        let Ok(rd) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        files.extend(rd.filter_map(|e| e.ok().map(|e| e.path())));
    }
    files.sort();
    files
}

fn replay(target: &str, check: impl Fn(&[u8])) {
    let files = inputs(target);
    assert!(!files.is_empty(), "no inputs for {target}");
    for f in files {
        let data = std::fs::read(&f).unwrap();
        // shown with the panic, if the check panics
        eprintln!("{target}: {}", f.display());
        check(&data);
    }
}

fn utf8(check: fn(&str)) -> impl Fn(&[u8]) {
    move |d| {
        if let Ok(s) = std::str::from_utf8(d) {
            check(s)
        }
    }
}

#[test]
fn python_frontend_inputs_do_not_panic() {
    replay("python_frontend", utf8(python_frontend));
}

#[test]
fn ir_text_inputs_do_not_panic() {
    replay("ir_text", utf8(ir_text));
}

#[test]
fn compile_pipeline_inputs_do_not_panic() {
    replay("compile_pipeline", compile_pipeline);
}

#[test]
fn json_loader_inputs_do_not_panic() {
    replay("json_loaders", utf8(json_loaders));
}
