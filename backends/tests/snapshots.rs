//! Generated code as text, naga style: every program under `tests/programs/` goes through
//! the same pipeline as `triton_interpreter.rs` (cleanup, fusion, Triton templates, stitching), and
//! its module is snapshotted in two parts: the Triton kernels, and the host side (the
//! region listing, `drtc_forward`, the guard table and the entry point). The guard
//! runtime embedded in every module (`src/guard_runtime.py`) is replaced by one marker
//! line (so is the CUDA-graph runtime where a module uses graphs), and the drtc version by a
//! placeholder, so that neither churns every snapshot.
//! No Python is needed: `triton_interpreter.rs` runs the same modules.
//!
//! The GPU form is snapshotted (`interpret: false`, the module `drtc compile --device cuda`
//! writes); the interpreter form differs only where Triton's CPU interpreter needs it.

use drtc_backends::stitch::{generate_module, CodegenOptions, GeneratedModule, ModuleForm};
use drtc_passes::fuse::{plan_fusion, FuseOptions};
use drtc_passes::{ManagerOptions, PassManager};
use std::fmt::Write;
use std::path::Path;

const GUARD_RUNTIME: &str = include_str!("../src/guard_runtime.py");
const GRAPH_RUNTIME: &str = include_str!("../src/graph_runtime.py");
const KERNELS_END: &str =
    "# the kernels, for exactly the inputs in _DRTC_GUARD (call through _drtc_dispatch)\n";

fn compile(path: &Path) -> GeneratedModule {
    let src = std::fs::read_to_string(path).unwrap();
    let name = path.file_stem().unwrap().to_string_lossy();
    let mut g = drtc_ir::text::parse(&src).unwrap_or_else(|e| panic!("{}", e.render(&src, &name)));
    let pm = PassManager::parse(
        "dce,cse,dce",
        ManagerOptions {
            verify_each: true,
            print_ir_after: vec![],
        },
    )
    .unwrap();
    pm.run(&mut g).unwrap();
    g.compact();
    let plan = plan_fusion(&g, &FuseOptions::default());
    generate_module(&g, &plan, &ModuleForm::Seed, &CodegenOptions::default())
}

/// The region listing: kind, ops, kernel and launch configuration, or how it is computed.
fn regions(m: &GeneratedModule) -> String {
    let mut s = String::new();
    for r in &m.regions {
        write!(s, "# region {} ({}): {}", r.index, r.kind, r.ops.join(", ")).unwrap();
        match (&r.kernel, r.fallback) {
            (Some((name, config)), _) => write!(s, " -> {name} [{}]", config.describe()),
            (None, true) => write!(s, " -> pytorch (fallback)"),
            (None, false) => write!(s, " -> pytorch"),
        }
        .unwrap();
        if let Some(gemm) = &r.gemm {
            write!(s, "; gemm {}", gemm.imp.describe()).unwrap();
        }
        s.push('\n');
    }
    s
}

/// Splits a module into its kernels and its host side, with the guard runtime and the
/// version elided (each must be there exactly once).
fn parts(m: &GeneratedModule) -> (String, String) {
    let src = &m.source;
    let end = src
        .find(KERNELS_END)
        .expect("the module has a kernel section");
    let (kernels, host) = src.split_at(end);
    assert_eq!(host.matches(GUARD_RUNTIME).count(), 1, "one guard runtime");
    let host = host.replacen(
        GUARD_RUNTIME,
        "# <the guard runtime: src/guard_runtime.py>\n",
        1,
    );
    // the CUDA-graph runtime is embedded where the module uses graphs (at most once)
    assert!(
        host.matches(GRAPH_RUNTIME).count() <= 1,
        "one graph runtime"
    );
    let host = host.replacen(
        GRAPH_RUNTIME,
        "# <the CUDA-graph runtime: src/graph_runtime.py>\n",
        1,
    );
    let version = format!("    \"version\": \"{}\",\n", env!("CARGO_PKG_VERSION"));
    assert_eq!(host.matches(&version).count(), 1, "one version line");
    let host = host.replacen(&version, "    \"version\": \"<drtc version>\",\n", 1);
    (kernels.to_string(), format!("{}\n{host}", regions(m)))
}

#[test]
fn generated_code_of_every_program() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let count = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "drt")
        })
        .count();
    assert!(
        count >= 10,
        "expected the program corpus in {}",
        dir.display()
    );
    insta::glob!("programs/*.drt", |path| {
        let m = compile(path);
        let (kernels, host) = parts(&m);
        insta::assert_snapshot!("kernels", kernels);
        insta::assert_snapshot!("host", host);
    });
}
