//! The LLM backend's static checks (Python's `ast` in the runtime's Python), and the
//! prompts' one-shot examples: their answers are real Triton that verifies.

use drtc::verifier::{DeviceKind, DrtcHome, PoolOptions, PythonEnv, VerifyRequest, WorkerPool};
use drtc_llm::prompt::{REGION_EXAMPLE, WHOLE_EXAMPLE};
use drtc_llm::{extract_code, Extract, PromptMode, StaticChecker, StaticVerdict};
use std::path::PathBuf;

fn python() -> PythonEnv {
    PythonEnv::locate(&DrtcHome::from_env()).expect("drtc's Python environment (drtc setup)")
}

fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("llm_checks")
        .join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn checker() -> StaticChecker {
    StaticChecker::new(python().python, &dir("checker")).unwrap()
}

const HEAD: &str = "import torch\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr):\n    x = tl.load(x_ptr + tl.arange(0, BLOCK))\n    tl.store(x_ptr + tl.arange(0, BLOCK), x)\n\n\n";

fn reason(c: &StaticChecker, code: &str, strict: bool, ops: &[&str]) -> Option<String> {
    let ops: Vec<String> = ops.iter().map(|s| s.to_string()).collect();
    c.check_code(code, PromptMode::Regions, strict, &ops)
        .unwrap()
}

#[test]
fn static_checks_give_a_reason_each() {
    let c = checker();
    let ok = format!("{HEAD}def triton_fused_operator(x):\n    out = torch.empty_like(x)\n    k[(1,)](out, BLOCK=8)\n    return [out.view(-1)]\n");
    assert_eq!(reason(&c, &ok, true, &[]), None);
    let r = reason(&c, "def f(:\n", true, &[]).unwrap();
    assert!(r.starts_with("syntax error at line 1"), "{r}");
    let r = reason(
        &c,
        &format!("{HEAD}def other(x):\n    return [x]\n"),
        false,
        &[],
    )
    .unwrap();
    assert!(
        r.contains("missing entry point `triton_fused_operator`"),
        "{r}"
    );
    let r = reason(
        &c,
        "import torch\n\ndef triton_fused_operator(x):\n    return [torch.empty_like(x)]\n",
        false,
        &[],
    )
    .unwrap();
    assert_eq!(r, "no @triton.jit kernel");
    // strict rules
    let compute = format!("{HEAD}def triton_fused_operator(x):\n    return [torch.relu(x)]\n");
    let r = reason(&c, &compute, true, &[]).unwrap();
    assert!(r.contains("`torch.relu` computes with PyTorch"), "{r}");
    assert_eq!(
        reason(&c, &compute, false, &[]),
        None,
        "only strict mode forbids it"
    );
    let f = format!("{HEAD}import torch.nn.functional as F\n\ndef triton_fused_operator(x, w):\n    return [F.conv2d(x, w)]\n");
    assert!(reason(&c, &f, true, &[]).unwrap().contains("F.conv2d"));
    assert_eq!(
        reason(&c, &f, true, &["conv2d"]),
        None,
        "a declared library op"
    );
    let t = format!("{HEAD}def triton_fused_operator(x):\n    try:\n        k[(1,)](x, BLOCK=8)\n    except Exception:\n        pass\n    return [x]\n");
    assert!(reason(&c, &t, true, &[]).unwrap().contains("try/except"));
    let st = format!("{HEAD}def triton_fused_operator(x):\n    s = torch.cuda.Stream()\n    with torch.cuda.stream(s):\n        k[(1,)](x, BLOCK=8)\n    return [x]\n");
    assert!(reason(&c, &st, true, &[]).unwrap().contains("CUDA streams"));
    let from = format!("{HEAD}from torch import sigmoid\n\ndef triton_fused_operator(x):\n    return [sigmoid(x)]\n");
    assert!(reason(&c, &from, true, &[]).unwrap().contains("`sigmoid`"));
}

#[test]
fn answers_without_code_and_declared_library_ops() {
    let c = checker();
    let v = c
        .check_answer(
            "I would write a kernel.",
            Extract::Last,
            PromptMode::Regions,
            true,
            &[],
        )
        .unwrap();
    assert_eq!(v, StaticVerdict::NoCode);
    let whole = format!("```python\n{HEAD}import torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n        self.w = nn.Parameter(torch.randn(n))\n\n    def forward(self, x):\n        return x.view(-1)\n```\n");
    let v = c
        .check_answer(&whole, Extract::Last, PromptMode::Whole, true, &[])
        .unwrap();
    assert!(matches!(v, StaticVerdict::Pass(_)), "{v:?}");
    let ops = c
        .declared_library_ops("import torch\nimport torch.nn as nn\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n    def forward(self, x, y):\n        return torch.bmm(self.fc(x), y) @ y\n")
        .unwrap();
    assert_eq!(
        ops,
        vec!["__matmul__", "__rmatmul__", "bmm", "linear", "matmul"]
    );
    let none = c
        .declared_library_ops("import torch\ndef fused_operator(x):\n    return [torch.relu(x)]\n")
        .unwrap();
    assert!(none.is_empty());
}

/// The example answers the prompts show are held to the same bar as any candidate.
#[test]
fn the_prompt_examples_verify() {
    let home = DrtcHome::from_env();
    let mut opts = PoolOptions::new(DeviceKind::Cpu);
    opts.workers = Some(1);
    let pool = WorkerPool::new(python(), &home, opts).unwrap();
    let c = checker();
    let d = dir("examples");
    for (name, example, mode) in [
        ("region", REGION_EXAMPLE, PromptMode::Regions),
        ("whole", WHOLE_EXAMPLE, PromptMode::Whole),
    ] {
        let program = extract_code(example, Extract::First).unwrap();
        let answer = extract_code(example, Extract::Last).unwrap();
        assert_ne!(program, answer);
        assert_eq!(
            c.check_code(&answer, mode, true, &[]).unwrap(),
            None,
            "{name}"
        );
        let (p, a) = (
            d.join(format!("{name}_program.py")),
            d.join(format!("{name}_answer.py")),
        );
        std::fs::write(&p, program).unwrap();
        std::fs::write(&a, answer).unwrap();
        let mut req = VerifyRequest::new(&p, &a);
        req.strict = true;
        req.library_ops = Some(vec![]);
        let r = pool.verify(&req).unwrap();
        assert!(r.verified, "{name}: {:?}", r.reasons());
    }
}
