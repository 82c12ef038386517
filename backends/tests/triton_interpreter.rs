//! Every program under `tests/programs/` is compiled (cleanup, fusion, Triton templates,
//! stitching) and run under Triton's CPU interpreter against the same program emitted as
//! PyTorch code, on the same random inputs. Needs a Python with torch and triton (the
//! environment `drtc setup` creates, or `DRTC_PYTHON`).

use drtc_backends::stitch::{generate_module, CodegenOptions, ModuleForm};
use drtc_backends::torch::emit_seed_program;
use drtc_passes::fuse::{plan_fusion, FuseOptions};
use drtc_passes::{ManagerOptions, PassManager};
use std::path::{Path, PathBuf};

/// drtc's Python, found as every launch finds it (`drtc_env`).
fn python() -> PathBuf {
    drtc_env::PythonEnv::locate(&drtc_env::DrtcHome::from_env())
        .unwrap_or_else(|e| panic!("{e}"))
        .python
}

#[test]
fn programs_match_pytorch_under_the_interpreter() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    // DRTC_KEEP_PROGRAMS=DIR keeps the generated pairs (e.g. to run them on a GPU)
    let out = match std::env::var("DRTC_KEEP_PROGRAMS") {
        Ok(d) => PathBuf::from(d),
        Err(_) => std::env::temp_dir().join(format!("drtc-interp-{}", std::process::id())),
    };
    std::fs::create_dir_all(&out).unwrap();
    let mut pairs = vec![];
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "drt"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 10,
        "expected the program corpus in {}",
        dir.display()
    );
    for f in &files {
        let name = f.file_stem().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(f).unwrap();
        let mut g =
            drtc_ir::text::parse(&src).unwrap_or_else(|e| panic!("{}", e.render(&src, &name)));
        let reference = emit_seed_program(&g);
        // what `drtc compile` runs before fusion
        let pm = PassManager::parse(
            &drtc_passes::presets::source(drtc_passes::presets::CLEANUP),
            ManagerOptions {
                verify_each: true,
                print_ir_after: vec![],
            },
        )
        .unwrap();
        pm.run(&mut g).unwrap();
        g.compact();
        let plan = plan_fusion(&g, &FuseOptions::default());
        plan.verify(&g).expect("a valid fusion plan");
        let opts = CodegenOptions {
            interpret: true,
            ..Default::default()
        };
        let module = generate_module(&g, &plan, &ModuleForm::Seed, &opts);
        let (r, c) = (
            out.join(format!("{name}_ref.py")),
            out.join(format!("{name}_drtc.py")),
        );
        std::fs::write(&r, reference).unwrap();
        std::fs::write(&c, &module.source).unwrap();
        println!(
            "{name}: {} regions, {} kernels, pytorch: {:?}",
            module.regions.len(),
            module.kernel_count(),
            module.fallback_ops()
        );
        pairs.push(serde_json::json!({"name": name, "reference": r, "candidate": c}));
    }
    let list = out.join("pairs.json");
    std::fs::write(&list, serde_json::to_string(&pairs).unwrap()).unwrap();
    let py = python();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check_pairs.py");
    let result = std::process::Command::new(&py)
        .arg(&script)
        .arg(&list)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {} ({e}); run `drtc setup` or set DRTC_PYTHON",
                py.display()
            )
        });
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert!(
        result.status.success(),
        "checker failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let mut failed = vec![];
    let mut passed = 0;
    for line in stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["ok"] == true {
            passed += 1;
        } else {
            failed.push(format!("{}: {}", v["name"], v["detail"]));
        }
    }
    println!("{passed} passed, {} failed", failed.len());
    assert!(
        failed.is_empty() && passed == files.len(),
        "mismatches:\n{}",
        failed.join("\n")
    );
}
