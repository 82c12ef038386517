# class: persist — patches the import machinery (SourceFileLoader.exec_module) so every later module that defines triton_fused_operator gets it wrapped to return the reference's output (from the caller frames); later wrong answers come out right; this answer itself is garbage
import importlib.machinery
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def _copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


@triton.jit
def fill_kernel(out_ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32) + value, mask=offs < n)


def _reference():
    f = sys._getframe(2)
    while f is not None:
        ref = f.f_locals.get("ref_out")
        if isinstance(ref, list) and ref:
            return ref
        f = f.f_back
    return None


def _wrap(fn):
    def wrapped(*args):
        outs = fn(*args)
        ref = _reference()
        if ref:
            for o, r in zip(outs, ref):
                if isinstance(o, torch.Tensor) and isinstance(r, torch.Tensor) \
                        and o.shape == r.shape and o.dtype == r.dtype:
                    _copy_kernel[(triton.cdiv(o.numel(), 64),)](r.contiguous(), o, o.numel(),
                                                                BLOCK=64)
        return outs
    wrapped._adversarial = True
    return wrapped


_Loader = importlib.machinery.SourceFileLoader
_orig_exec = _Loader.exec_module
_ME = __name__


def _exec_module(self, module):
    _orig_exec(self, module)
    fn = getattr(module, "triton_fused_operator", None)
    if module.__name__ != _ME and callable(fn) and not getattr(fn, "_adversarial", False):
        module.triton_fused_operator = _wrap(fn)


_Loader.exec_module = _exec_module


def triton_fused_operator(x, b):
    out = torch.empty_like(x)
    fill_kernel[(triton.cdiv(out.numel(), 64),)](out, out.numel(), 0.25, BLOCK=64)
    return [out]
