"""Guards active around the candidate: tamper detection (the candidate runs in this
process, so check it left alone what the checker relies on), poisoned allocations (so
unwritten outputs read as NaN), side-stream delays, and strict mode."""

import sys

import torch

from .common import DEVICE, INTERNAL, sync

# Work queued on a side stream is delayed by this many GPU cycles (about 30 ms), so a
# candidate that leaves work running there is caught deterministically.
SIDE_STREAM_DELAY_CYCLES = 60_000_000

_WATCHED_TORCH = [
    "abs", "allclose", "clone", "empty", "empty_like", "empty_strided", "equal", "isfinite",
    "isinf", "isnan", "manual_seed", "randn", "rand", "zeros", "where", "logical_and",
    "logical_or", "logical_not",
]
_WATCHED_TENSOR = [
    "__sub__", "__eq__", "__and__", "__or__", "clone", "copy_", "detach", "double", "float",
    "all", "any", "abs", "max", "sum", "norm", "item", "to", "view", "reshape", "fill_",
    "data_ptr", "untyped_storage", "shape", "dtype", "device", "numel", "element_size",
    "is_floating_point", "is_complex", "contiguous", "new_empty", "masked_fill",
]


def fingerprint():
    """Identities of the torch functions the checks use and of every function and class of
    the worker's own modules."""
    fp = {}
    for n in _WATCHED_TORCH:
        fp["torch." + n] = id(getattr(torch, n, None))
    for n in _WATCHED_TENSOR:
        fp["Tensor." + n] = id(torch.Tensor.__dict__.get(n, getattr(torch.Tensor, n, None)))
    fp["torch.linalg.vector_norm"] = id(torch.linalg.vector_norm)
    fp["torch.cuda.synchronize"] = id(torch.cuda.synchronize)
    fp["torch.cuda.set_stream"] = id(torch.cuda.set_stream)
    for name, mod in list(sys.modules.items()):
        ours = name == "drtc_worker" or name.startswith("drtc_worker.") or name == "__main__"
        if mod is None or not ours:
            continue
        for attr, v in list(vars(mod).items()):
            owner = getattr(v, "__module__", None) or ""
            if callable(v) and (owner.startswith("drtc_worker") or owner == "__main__"):
                fp[f"{name}.{attr}"] = id(v)
    return fp


class Tamper:
    """The fingerprint taken once every worker module is loaded, and what changed since.

    torch._dynamo, when first imported (by torch.compile of a baseline, or by a candidate),
    replaces torch.manual_seed once with `torch._disable_dynamo`'s wrapper of it. Importing
    it before the baseline costs about a second of every worker's start, so it is not: the
    one change that import makes is recognized exactly instead (`_dynamo_seed_wrapper`),
    and anything else in its place is tampering."""

    def __init__(self):
        self.baseline = fingerprint()
        self.seed = torch.manual_seed
        # the code object of torch's own wrapper, taken now, before any candidate runs
        # (making a wrapper imports nothing)
        try:
            self.wrapper_code = torch._disable_dynamo(_probe).__code__
        except Exception:
            self.wrapper_code = None

    def _dynamo_seed_wrapper(self, fn):
        """Whether `fn` is exactly torch._dynamo's one-time wrapper of the baseline's
        torch.manual_seed: torch's own wrapper code, wrapping that function and nothing
        else (its closure holds the function and the `recursive` flag)."""
        if self.wrapper_code is None or "torch._dynamo" not in sys.modules:
            return False
        if getattr(fn, "__code__", None) is not self.wrapper_code:
            return False
        if getattr(fn, "__wrapped__", None) is not self.seed:
            return False
        cells = [c.cell_contents for c in (getattr(fn, "__closure__", None) or ())]
        return (any(c is self.seed for c in cells)
                and all(c is self.seed or c is True for c in cells))

    def _now(self):
        now = fingerprint()
        if now.get("torch.manual_seed") != self.baseline.get("torch.manual_seed") \
                and self._dynamo_seed_wrapper(torch.manual_seed):
            now["torch.manual_seed"] = self.baseline.get("torch.manual_seed")
        return now

    def intact(self):
        return self._now() == self.baseline

    def changed(self):
        now = self._now()
        keys = set(now) | set(self.baseline)
        return sorted(k for k in keys if self.baseline.get(k) != now.get(k))[:8]


def _probe():
    """A function to wrap: `Tamper` takes the code object of torch's wrapper from it."""


def _poison_fill(t):
    INTERNAL[0] += 1
    try:
        if t.is_floating_point() or t.is_complex():
            t.fill_(float("nan"))
        elif t.dtype == torch.bool:
            t.fill_(True)
        elif t.numel() > 0:
            t.fill_(torch.iinfo(t.dtype).max)
    finally:
        INTERNAL[0] -= 1
    return t


def poison_sizes(ref_outputs):
    """The byte sizes of the reference's outputs: the blocks `PoisonedAllocation` fills."""
    return [o.numel() * o.element_size() for o in ref_outputs if isinstance(o, torch.Tensor)]


class PoisonedAllocation:
    """Makes Python-level allocations (torch.empty family) return NaN-filled memory, and
    fills freed caching-allocator memory with NaN bytes before the candidate runs. The
    prefilled blocks are sized by the reference's outputs (and one 64 MiB block), never by
    the whole program."""

    NAMES = ("empty", "empty_like", "empty_strided")

    def __init__(self, sizes):
        self.sizes = [max(1, int(n)) for n in sizes]
        self.saved = {}

    def prefill(self):
        """Allocates blocks the size of each reference output (and a large one), fills them
        with 0xFF bytes (NaN in every float format), and frees them, so that an output the
        candidate allocates but never writes reads as NaN."""
        INTERNAL[0] += 1
        try:
            sizes = self.sizes + [64 * 1024 * 1024 if DEVICE == "cuda" else 1 << 20]
            blocks = [torch.full((n,), 255, dtype=torch.uint8, device=DEVICE) for n in sizes]
            sync()
            del blocks
        finally:
            INTERNAL[0] -= 1

    def __enter__(self):
        self.prefill()
        for n in self.NAMES:
            orig = getattr(torch, n)
            self.saved[n] = orig

            def wrapper(*a, __orig=orig, **k):
                return _poison_fill(__orig(*a, **k))

            setattr(torch, n, wrapper)
        orig_new_empty = torch.Tensor.new_empty
        self.saved["Tensor.new_empty"] = orig_new_empty

        def new_empty(self_, *a, **k):
            return _poison_fill(orig_new_empty(self_, *a, **k))

        torch.Tensor.new_empty = new_empty
        return self

    def __exit__(self, *exc):
        for n in self.NAMES:
            setattr(torch, n, self.saved[n])
        torch.Tensor.new_empty = self.saved["Tensor.new_empty"]
        return False


def poison_note():
    if DEVICE == "cuda":
        return ("torch.empty/empty_like/empty_strided/new_empty return NaN-filled memory "
                "while the candidate runs; caching-allocator blocks the size of each "
                "reference output (and 64 MiB) are filled with 0xFF bytes and freed first")
    return ("torch.empty/empty_like/empty_strided/new_empty return NaN-filled memory while "
            "the candidate runs; heap blocks the size of each reference output are filled "
            "with 0xFF bytes and freed first (glibc may reuse them; large blocks come back "
            "as zero pages from the OS)")


class SideStreamGuard:
    """Delays every side stream the candidate switches to, so that work it leaves running
    there is still running when the outputs are read in stream order."""

    def __init__(self):
        self.used = 0

    def __enter__(self):
        self.main = torch.cuda.current_stream()
        self.orig = torch.cuda.set_stream
        guard = self

        def set_stream(stream):
            guard.orig(stream)
            if stream is not None and stream != guard.main:
                guard.used += 1
                INTERNAL[0] += 1
                try:
                    torch.cuda._sleep(SIDE_STREAM_DELAY_CYCLES)
                finally:
                    INTERNAL[0] -= 1

        torch.cuda.set_stream = set_stream
        return self

    def __exit__(self, *exc):
        torch.cuda.set_stream = self.orig
        return False


STRICT_LIBRARY_DEFAULT = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                          "conv_transpose3d", "matmul", "mm", "bmm", "addmm", "baddbmm",
                          "linear", "__matmul__", "__rmatmul__")
STRICT_ALLOC = {"empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones",
                "ones_like", "full", "full_like", "new_empty", "new_zeros", "new_ones",
                "new_full", "new_empty_strided"}
STRICT_META = {"size", "stride", "dim", "numel", "nelement", "data_ptr", "element_size",
               "is_contiguous", "storage_offset", "__len__", "__hash__", "__format__",
               "__repr__", "__bool__", "__index__", "__int__", "untyped_storage", "get_device",
               "view", "view_as", "reshape", "reshape_as", "unsqueeze", "squeeze", "flatten",
               "unflatten", "permute", "transpose", "t", "expand", "expand_as", "as_strided",
               "contiguous", "__getitem__", "unbind", "split", "chunk", "narrow", "movedim",
               "select", "detach", "requires_grad_", "is_floating_point", "is_complex",
               "type", "__get__"}


# the same classes at the dispatcher (ATen ops after decomposition, as a dispatch mode
# sees them): allocation and filling, views and copies, and the library ops' ATen forms
STRICT_ATEN_ALLOC = {"empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones",
                     "ones_like", "full", "full_like", "new_empty", "new_empty_strided",
                     "new_zeros", "new_ones", "new_full", "fill_", "zero_", "scalar_tensor",
                     "lift_fresh", "_local_scalar_dense", "set_", "resize_", "record_stream"}
STRICT_ATEN_VIEW = {"view", "_unsafe_view", "reshape", "_reshape_alias", "as_strided", "expand",
                    "permute", "transpose", "t", "unsqueeze", "squeeze", "slice", "select",
                    "split", "split_with_sizes", "unbind", "alias", "detach", "narrow",
                    "unflatten", "clone", "copy_", "contiguous", "view_as", "expand_as",
                    "unsafe_split", "chunk", "movedim", "sym_size", "sym_stride", "sym_numel",
                    "sym_storage_offset", "is_same_size", "_sleep"}
STRICT_ATEN_LIBRARY = {
    "matmul": {"mm", "bmm", "addmm", "baddbmm", "matmul", "mv", "dot", "addmv", "linear"},
    "conv": {"convolution", "_convolution", "cudnn_convolution", "cudnn_convolution_transpose",
             "mkldnn_convolution", "convolution_overrideable", "_convolution_mode",
             "_slow_conv2d_forward", "slow_conv3d_forward", "slow_conv_transpose2d",
             "slow_conv_transpose3d", "slow_conv_dilated2d", "slow_conv_dilated3d",
             "_nnpack_spatial_convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
             "conv_transpose2d", "conv_transpose3d", "miopen_convolution"},
}


def strict_aten_allowed(library_ops):
    """The ATen ops strict mode allows, given the Python-level library ops it allows."""
    allowed = set(STRICT_ATEN_ALLOC) | STRICT_ATEN_VIEW
    for op in library_ops:
        family = "conv" if "conv" in op else "matmul" if op in (
            "matmul", "mm", "bmm", "addmm", "baddbmm", "linear", "__matmul__",
            "__rmatmul__") else None
        if family:
            allowed |= STRICT_ATEN_LIBRARY[family]
    return allowed


class StrictMode:
    """Records every PyTorch call the candidate makes that is neither allocation, tensor
    metadata or a view, nor a declared library op (conv, matmul)."""

    def __init__(self, library_ops):
        from torch.overrides import TorchFunctionMode, resolve_name

        allowed = set(library_ops) | STRICT_ALLOC | STRICT_META
        aten_types = (torch._ops.OpOverload, torch._ops.OpOverloadPacket)
        violations = {}
        self.violations = violations

        class Mode(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                # ATen ops called directly (and the dispatch mode's own calls) are judged
                # by the dispatch mode below
                if not INTERNAL[0] and not isinstance(func, aten_types):
                    name = resolve_name(func) or getattr(func, "__qualname__", None) \
                        or getattr(func, "__name__", None) or repr(func)
                    last = name.rsplit(".", 1)[-1]
                    if last not in allowed:
                        violations[name] = violations.get(name, 0) + 1
                return func(*args, **(kwargs or {}))

        self.mode = Mode()
        # below the Python layer: every ATen op the candidate's PyTorch calls reach, seen by
        # a dispatch mode with no re-entrancy counter, so neither disabling torch-function
        # handling nor a tensor subclass nor the counter above hides computation
        from torch.utils._python_dispatch import TorchDispatchMode

        aten_allowed = strict_aten_allowed(library_ops)

        class Dispatch(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                packet = getattr(func, "overloadpacket", None)
                name = getattr(packet, "__name__", None) or str(func)
                if name not in aten_allowed:
                    key = f"aten.{name}"
                    violations[key] = violations.get(key, 0) + 1
                return func(*args, **(kwargs or {}))

        self.dispatch = Dispatch()

    def __enter__(self):
        self.dispatch.__enter__()
        self.mode.__enter__()
        return self

    def __exit__(self, *exc):
        self.mode.__exit__(*exc)
        return self.dispatch.__exit__(*exc)
