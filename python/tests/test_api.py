"""The native API: each function, its errors, and the stubs."""

import pathlib

import pytest

import drtc
from programs import BAD_REFERENCE, CORRECT, REFERENCE, WRONG, answer

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "data" / "examples" / "conv_relu_gn.py").read_text()


def test_parse_gives_ir_signature_ops_and_flops():
    p = drtc.parse(REFERENCE)
    assert p.format == "seed"
    assert p.ops == ["relu"]
    assert p.flops == 4 * 32
    assert p.signature == {
        "inputs": [{"shape": [4, 32], "dtype": "float32"}],
        "params": {},
        "outputs": [{"shape": [4, 32], "dtype": "float32"}],
    }
    assert "relu(%" in p.ir and p.ir.startswith("graph @")
    k = drtc.parse(EXAMPLE)
    assert k.format == "kernelbench"
    assert "conv.weight" in k.signature["params"]
    assert "conv2d" in k.ops


def test_a_program_that_does_not_parse_raises_frontend_error_with_a_caret():
    with pytest.raises(drtc.FrontendError) as info:
        drtc.parse(BAD_REFERENCE, name="bad.py")
    e = info.value
    text = str(e)
    assert "torch.frobnicate" in text and "bad.py:9:13" in text
    assert "─┬─" in text or "^" in text, text  # the caret line
    start, end = e.span
    assert BAD_REFERENCE[start:end] == "torch.frobnicate(tensor_0)"
    assert e.kind == "unsupported"
    assert isinstance(e, drtc.DrtcError)
    with pytest.raises(drtc.FrontendError, match="syntax error"):
        drtc.compile("def f(:\n")


WHOLE_MODEL = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(2)])

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x

def get_inputs():
    return [torch.randn(4, 8)]

def get_init_inputs():
    return []
"""


def test_frontend_defaults_to_auto_as_in_the_cli():
    # a loop over nn.ModuleList: the native parser refuses it, torch.export reads it
    with pytest.raises(drtc.FrontendError):
        drtc.parse(WHOLE_MODEL, frontend="native")
    p = drtc.parse(WHOLE_MODEL)
    assert p.format == "kernelbench" and p.ops.count("relu") == 2, p.ir
    with pytest.raises(ValueError, match="frontend must be"):
        drtc.parse(REFERENCE, frontend="torch")


def test_wrong_argument_types_raise_type_error_naming_the_type():
    with pytest.raises(TypeError, match="str"):
        drtc.parse(42)
    with pytest.raises(TypeError, match="int"):
        drtc.decompose(REFERENCE, max_ops="four")
    with pytest.raises(TypeError):
        drtc.verify(REFERENCE, None)
    with pytest.raises(TypeError):
        drtc.Verifier(timeout="soon")
    with pytest.raises(ValueError, match="workers_per_gpu"):
        drtc.Verifier(device="cpu", workers_per_gpu=0)
    with pytest.raises(ValueError, match="precision"):
        drtc.compile(REFERENCE, precision="fp64")
    with pytest.raises(ValueError, match="backend"):
        drtc.compile(REFERENCE, backend="cuda-c")
    with pytest.raises(ValueError, match="device"):
        drtc.verify(REFERENCE, CORRECT, device="tpu")


def test_compile_writes_a_module_that_verifies_on_the_cpu():
    c = drtc.compile(REFERENCE, device="cpu", verify=True)
    assert "def triton_fused_operator" in c.source and "@triton.jit" in c.source
    assert c.report["kernels"] == 1
    assert c.report["regions"][0]["ops"] == ["relu"]
    v = c.report["verification"]
    assert v["verified"] is True, v
    k = drtc.compile(EXAMPLE, device="cpu")
    assert "class ModelNew" in k.source


def test_set_and_shrink_are_the_clis_options():
    # --set NAME=VALUE: an int's repr, or Python source text
    p = drtc.parse(EXAMPLE, set={"batch_size": 2})
    assert p.signature["inputs"][0]["shape"][0] == 2
    q = drtc.parse(EXAMPLE, set={"batch_size": "1 + 2"})
    assert q.signature["inputs"][0]["shape"][0] == 3
    with pytest.raises(ValueError, match="no_such_constant"):
        drtc.parse(EXAMPLE, set={"no_such_constant": 1})
    # the module and its report say what was set; verification runs the changed reference
    c = drtc.compile(EXAMPLE, device="cpu", set={"batch_size": 2}, verify=True)
    assert c.report["overrides"] == ["batch_size=2"]
    assert c.report["verification"]["verified"] is True, c.report["verification"]
    v = drtc.verify(EXAMPLE, c.source, device="cpu", set={"batch_size": 2})
    assert v["verified"] is True, v
    # --shrink: the size caps, and a name in set wins over its cap
    s = drtc.compile(EXAMPLE, device="cpu", shrink=True, set={"batch_size": 3})
    assert "batch_size=3" in s.report["overrides"]
    assert drtc.compile(EXAMPLE, device="cpu").report["overrides"] == []
    subs = drtc.decompose(EXAMPLE, 2, set={"batch_size": 2})
    assert any("[2, 3, 32, 32]" in x["pytorch"] for x in subs), subs[0]["pytorch"]


def test_bench_refuses_an_unknown_torch_compile_mode_before_any_work():
    # the modes are the CLI's --baseline ones; a misspelt one is a ValueError naming it,
    # raised before a GPU is looked for
    with pytest.raises(ValueError, match="max-autotune-no-cudagraph"):
        drtc.bench(REFERENCE, CORRECT, compile_modes=["default", "max-autotune-no-cudagraph"])


def test_decompose_splits_along_fusion_cuts():
    subs = drtc.decompose(EXAMPLE, 2)
    assert len(subs) >= 2
    assert sum(s["difficulty"] for s in subs) == len(
        [op for op in drtc.parse(EXAMPLE).ops if op != "constant"]
    ) or all(s["difficulty"] <= 2 for s in subs)
    for s in subs:
        assert s["difficulty"] <= 2
        assert drtc.parse(s["pytorch"]).format == "seed"
    with pytest.raises(ValueError):
        drtc.decompose(EXAMPLE, 0)


def test_synth_is_reproducible_and_its_programs_lower():
    a = drtc.synth(ops=2, count=3, seed=7, flops="2^10..2^16")
    b = drtc.synth(ops=2, count=3, seed=7, flops="2^10..2^16")
    assert [p["pytorch"] for p in a] == [p["pytorch"] for p in b]
    assert len(a) == 3
    for p in a:
        assert p["num_ops"] == 2
        assert drtc.parse(p["pytorch"]).flops == p["flops"]
    with pytest.raises(drtc.SynthError, match="ops"):
        drtc.synth(count=1)


def test_verify_returns_the_runtime_report():
    ok = drtc.verify(REFERENCE, CORRECT, device="cpu")
    assert ok["verified"] is True
    assert ok["device"] == "cpu" and len(ok["trials"]) >= 5
    bad = drtc.verify(REFERENCE, WRONG, device="cpu")
    assert bad["verified"] is False
    assert [f["check"] for f in bad["failures"]][0] == "values"
    assert bad["reasons"][0].startswith("values: ")


def test_extract_code_and_prompts_are_the_llm_backends():
    assert drtc.extract_code(answer("x = 1\n")) == "x = 1\n"
    assert drtc.extract_code(answer("x = 1\n"), "first") == "print('draft')\n"
    assert drtc.extract_code("no code here") is None
    msgs = drtc.render_prompt(REFERENCE, "regions")
    assert [m["role"] for m in msgs][0] == "system" and msgs[-1]["role"] == "user"
    assert "fused_operator(tensor_0)" in msgs[-1]["content"]
    assert "triton_fused_operator" in msgs[-1]["content"]


def test_stubs_cover_the_module():
    stub = (pathlib.Path(drtc.__file__).parent / "_native.pyi").read_text()
    for name in drtc.__all__:
        if not name.startswith("__"):
            assert f"def {name}(" in stub or f"class {name}" in stub, name
