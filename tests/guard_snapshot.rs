//! The guard code of one generated module (conv + GroupNorm + softmax, KernelBench form),
//! as a snapshot for review: the runtime every module embeds, its signature table, the
//! embedded source and the guarded `ModelNew`.

use drtc::driver::compile::{compile_graph, CompileOptions};
use drtc::driver::load::load_programs;
use drtc_backends::guard::{GuardMode, GuardOptions};
use std::path::Path;

#[test]
fn guard_code_of_a_kernelbench_module() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/examples/conv_relu_gn.py");
    let text = std::fs::read_to_string(&path).unwrap();
    let overrides: Vec<_> = ["batch_size=2", "height=8", "width=8"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    let prog = load_programs(Path::new("conv_relu_gn.py"), &text, &overrides, None)
        .unwrap()
        .remove(0)
        .unwrap_or_else(|e| panic!("{}", e.message));
    let opts = CompileOptions {
        interpret: true,
        guard: GuardOptions {
            mode: GuardMode::Recompile,
            drtc_bin: Some("/opt/drtc/bin/drtc".into()),
            compile_args: vec!["--precision".into(), "tf32".into()],
            reference_source: prog.reference_source.clone(),
        },
        ..Default::default()
    };
    let compiled = compile_graph(prog.graph, &prog.form, &opts).unwrap();
    let src = &compiled.module.source;
    let start = src
        .find("# the kernels, for exactly the inputs")
        .expect("the module has a drtc_forward");
    // the kernel launches are the templates' business: keep the signature, drop the body
    let forward_end = src[start..].find("\n\n\n").unwrap() + start;
    let signature: Vec<&str> = src[start..forward_end].lines().take(2).collect();
    let guards = &src[forward_end..];
    insta::assert_snapshot!(format!("{}\n    ...{guards}", signature.join("\n")));
}
