# A reference whose own fp32 result is ~5e-4 from the exact one: `(x + 1e4) - 1e4` rounds
# x to the spacing of fp32 at 1e4 (about 1e-3). Used by the reference-accuracy rule's tests.
import torch


def get_inputs():
    return [torch.rand(64, 256)]


def fused_operator(x):
    return [(x + 1e4) - 1e4]
