# Off by 3e-3: further from the float64 truth than twice the reference's own rounding.
import torch


def triton_fused_operator(x):
    return [x + 3e-3]
