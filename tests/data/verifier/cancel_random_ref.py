# cancel_ref.py with a random draw in the computation (scaled to nothing): float64 draws
# differ from float32 ones, so no float64 truth may judge it.
import torch


def get_inputs():
    return [torch.rand(64, 256)]


def fused_operator(x):
    return [(x + 1e4) - 1e4 + 0.0 * torch.randn_like(x)]
