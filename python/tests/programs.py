"""Small programs for the tests: a seed-format reference and answers to it, tiny enough
for Triton's CPU interpreter."""

REFERENCE = '''import torch


def get_inputs():
    tensor_0 = torch.randn([4, 32], dtype=torch.float32)
    return [tensor_0]


def fused_operator(tensor_0):
    tensor_1 = torch.relu(tensor_0)
    return [tensor_1]
'''

KERNEL = '''import torch
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, {body}, mask=mask)


def triton_fused_operator(tensor_0):
    {prelude}y = torch.empty_like(tensor_0)
    n = tensor_0.numel()
    relu_kernel[(triton.cdiv(n, 64),)](tensor_0, y, n, BLOCK=64)
    return [y]
'''

CORRECT = KERNEL.format(body="tl.maximum(x, 0.0)", prelude="")
# computes |x| instead of relu(x)
WRONG = KERNEL.format(body="tl.abs(x)", prelude="")
# never returns
HANGING = KERNEL.format(body="x", prelude="while True:\n        pass\n    ")


def answer(code: str) -> str:
    """A model's answer around `code`, with reasoning and an earlier draft block."""
    return (
        "<think>relu is elementwise; one block per 64 elements.</think>\n"
        "A first idea:\n\n```python\nprint('draft')\n```\n\n"
        "The final kernel:\n\n```python\n" + code + "```\n"
    )


GARBAGE = "I am not sure how to do this. Maybe use CUDA? }}}{{{ ```"

BAD_REFERENCE = '''import torch


def get_inputs():
    return [torch.randn([4, 4])]


def fused_operator(tensor_0):
    return [torch.frobnicate(tensor_0)]
'''
