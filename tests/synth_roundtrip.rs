//! The frontend parses every synthesized program back to the program the synthesizer
//! built: the same op sequence and the same type for every input and every op's result.

use std::process::Command;

fn synth(args: &[&str]) -> Vec<serde_json::Value> {
    let out = std::env::temp_dir().join(format!(
        "drtc-roundtrip-{}-{}.jsonl",
        std::process::id(),
        args.join("_").replace(['/', '.', '^'], "")
    ));
    let status = Command::new(env!("CARGO_BIN_EXE_drtc"))
        .arg("synth")
        .args(args)
        .args(["--validate", "none", "--quiet", "-o"])
        .arg(&out)
        .status()
        .expect("drtc runs");
    assert!(status.success(), "drtc synth {args:?} failed");
    std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn check(programs: &[serde_json::Value]) -> usize {
    let mut checked = 0;
    for p in programs {
        let src = p["pytorch"].as_str().unwrap();
        let lowered =
            drtc_frontends::lower(src).unwrap_or_else(|e| panic!("{}", e.render("synth", src)));
        let g = &lowered.graph;
        let mut shapes: Vec<Vec<i64>> = g.inputs().iter().map(|&v| g.ty(v).shape.clone()).collect();
        let mut ops = vec![];
        for &n in g.body() {
            let node = g.node(n);
            // constants the frontend makes for Python numbers are not ops of the program
            if node.op == drtc_ir::Op::Full && g.ty(node.outputs[0]).rank() == 0 {
                continue;
            }
            ops.push(node.op.name().to_string());
            shapes.push(g.ty(node.outputs[0]).shape.clone());
        }
        let want_shapes: Vec<Vec<i64>> = serde_json::from_value(p["shapes"].clone()).unwrap();
        let want_ops: Vec<String> = serde_json::from_value(p["program_ops"].clone()).unwrap();
        assert_eq!(ops, want_ops, "op sequence of:\n{src}");
        // the drawn ops are the program's ops less guards (abs, clamp) and argmax's cast
        let drawn: Vec<String> = serde_json::from_value(p["ops"].clone()).unwrap();
        let casts = ops.iter().filter(|o| o.as_str() == "cast").count();
        let guards = p["guards"].as_u64().unwrap() as usize;
        assert_eq!(drawn.len() + guards + casts, ops.len(), "{src}");
        // the shapes list has an entry for the cast as well
        let shapes_seen = shapes;
        assert_eq!(shapes_seen, want_shapes, "types of:\n{src}");
        checked += 1;
    }
    checked
}

#[test]
fn synthesized_programs_parse_back_to_the_same_program() {
    let mut n = 0;
    n += check(&synth(&[
        "--ops",
        "1",
        "--count",
        "61",
        "--selection",
        "coverage",
        "--seed",
        "3",
        "--flops",
        "0..2^20",
    ]));
    for ops in ["2", "5", "10"] {
        n += check(&synth(&[
            "--ops",
            ops,
            "--count",
            "40",
            "--seed",
            "7",
            "--flops",
            "2^10..2^20",
        ]));
    }
    println!("{n} synthesized programs parsed back to the same op sequence and types");
}
