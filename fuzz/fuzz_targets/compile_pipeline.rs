//! The compile pipeline (cleanup or e-graph passes, fusion planning, Triton code
//! generation, stitching) on every IR text that parses and verifies: it either compiles or
//! reports an error; it never panics. The first byte picks the options.
#![no_main]

use drtc::driver::compile::{compile_graph, CompileOptions};
use drtc_backends::stitch::ModuleForm;
use drtc_ir::{text, verify};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let Ok(src) = std::str::from_utf8(rest) else {
        return;
    };
    let Ok(g) = text::parse(src) else {
        return;
    };
    if verify(&g).iter().any(|e| e.is_error()) {
        return;
    }
    let opts = CompileOptions {
        interpret: flags & 1 != 0,
        simplify: flags & 2 != 0,
        ..CompileOptions::default()
    };
    let _ = compile_graph(g, &ModuleForm::Seed, &opts);
});
