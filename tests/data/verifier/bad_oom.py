# Runs out of memory on every call (as an answer may beside other verifications on a GPU).
import torch


def triton_fused_operator(x, b):
    raise MemoryError("out of memory on purpose")
