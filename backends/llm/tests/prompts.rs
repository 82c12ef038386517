//! Snapshots of the rendered prompts (the text a model sees, and the contract with the
//! Python bindings that render the same templates).

use drtc_llm::{render, render_refine, PromptMode, PromptTarget};

const REGION: &str = "import torch\n\n\ndef get_inputs():\n    return [\n        torch.randn([4, 8], dtype=torch.float32),\n        torch.randn([8], dtype=torch.float32),\n    ]\n\n\ndef fused_operator(x, w):\n    tensor_0 = torch.mul(x, w)\n    return [tensor_0]\n";

const WHOLE: &str = "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n    def forward(self, x):\n        return torch.tanh(x)\n\n\ndef get_inputs():\n    return [torch.randn(4, 8)]\n\n\ndef get_init_inputs():\n    return []\n";

fn transcript(mode: PromptMode, program: &str) -> String {
    let target = PromptTarget::new("NVIDIA H200", "float32");
    render(mode, program, &target, None)
        .unwrap()
        .iter()
        .map(|m| format!("=== {} ===\n{}\n", m.role, m.content))
        .collect()
}

#[test]
fn region_prompt() {
    insta::assert_snapshot!(transcript(PromptMode::Regions, REGION));
}

#[test]
fn whole_prompt() {
    insta::assert_snapshot!(transcript(PromptMode::Whole, WHOLE));
}

#[test]
fn refine_prompt() {
    let m = render_refine(
        "The verifier rejected it:\nvalues: output 0: relative norm error 1.9e+00 >= 0.001",
        "def triton_fused_operator(x, w):\n    return [x]\n",
        None,
    )
    .unwrap();
    insta::assert_snapshot!(m.content);
}
