# ---- drtc guards -------------------------------------------------------------------
# `drtc_forward` runs kernels compiled for exactly the inputs listed in _DRTC_GUARD
# ("inputs": name, kind, shape, dtype of every argument; "device": the device type, or
# None when the kernels decide). Every call goes through `_drtc_dispatch` first:
#   * inputs that match run the kernels; a non-contiguous input is made contiguous first
#     (channels-last for the arguments in _DRTC_LAYOUTS; a non-contiguous buffer, which
#     the kernels may update in place, is a mismatch);
#   * on a mismatch, guard mode "error" raises a ValueError naming the expected and the
#     given inputs; mode "reference" computes the reference program (the `Model.forward`
#     or `fused_operator` this module was compiled from) and warns once per signature;
#     mode "recompile" (the default) compiles the same program again for the new
#     activation shapes and dtypes with `drtc compile --input-type ...` (the parameters
#     stay those of the model instance), verifies it as drtc always does, and caches it:
#     in this process per signature, and on disk in $DRTC_GUARD_CACHE (default
#     $DRTC_HOME/guard, else ~/.cache/drtc/guard). Where recompiling is not possible
#     (parameters, devices or non-tensors differ, no drtc is found, or the compile or
#     its verification fails) it computes the reference and warns once.
# drtc is found as: $DRTC_BIN, else the drtc that wrote this module (_DRTC_GUARD["drtc"]),
# else `drtc` on PATH. The guard never returns the kernels' result for other inputs.
import hashlib as _drtc_hashlib
import importlib.util as _drtc_importlib_util
import json as _drtc_json
import operator as _drtc_operator
import os as _drtc_os
import shutil as _drtc_shutil
import subprocess as _drtc_subprocess
import sys as _drtc_sys
import warnings as _drtc_warnings

import torch

_DRTC_DTYPE_NAMES = {
    torch.bool: "bool",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float32: "f32",
    torch.float64: "f64",
}
_DRTC_NUMBER_DTYPES = {bool: torch.bool, int: torch.int64, float: torch.float32}
# signature -> (launch function, None) or (None, why the reference is used)
_DRTC_COMPILED = {}
_DRTC_WARNED = set()
_DRTC_REFERENCE = {}
_DRTC_GUARD_STATS = {"mismatches": 0, "compiles": 0, "disk_hits": 0, "memory_hits": 0,
                     "reference": 0}


def _drtc_type_text(shape, dtype):
    name = _DRTC_DTYPE_NAMES.get(dtype, str(dtype).replace("torch.", ""))
    return f"{name}[{', '.join(str(d) for d in shape)}]"


def _drtc_describe(a):
    if isinstance(a, torch.Tensor):
        return f"{_drtc_type_text(tuple(a.shape), a.dtype)} on {a.device}"
    return f"a Python {type(a).__name__}"


def _drtc_expected():
    spec = _DRTC_GUARD["inputs"]
    where = _DRTC_GUARD["device"] or "one device"
    return ", ".join(f"{n}: {_drtc_type_text(s, d)}" for n, _, s, d in spec) + f" on {where}"


def _drtc_given(args):
    names = [n for n, _, _, _ in _DRTC_GUARD["inputs"]]
    names += [f"extra{i}" for i in range(len(names), len(args))]
    return ", ".join(f"{n}: {_drtc_describe(a)}" for n, a in zip(names, args))


def _drtc_check(args):
    """(arguments for the kernels, what does not match or None, whether recompiling for
    the given activations can fix it)."""
    spec = _DRTC_GUARD["inputs"]
    if len(args) != len(spec):
        return args, f"{len(args)} inputs given, {len(spec)} expected", False
    args = list(args)
    device = next((a.device for a in args if isinstance(a, torch.Tensor)), None)
    problems = []
    recompilable = True
    for i, (name, kind, shape, dtype) in enumerate(spec):
        a = args[i]
        if not isinstance(a, torch.Tensor):
            number = _DRTC_NUMBER_DTYPES.get(type(a))
            if shape == () and number is dtype:
                args[i] = torch.tensor(a, dtype=dtype, device=device or "cpu")
            else:
                problems.append(f"`{name}` is {_drtc_describe(a)}, compiled for "
                                f"{_drtc_type_text(shape, dtype)}")
                recompilable = False
            continue
        if a.device != device and a.dim() == 0 and a.device.type == "cpu":
            # a 0-dim CPU tensor (a module's `self.scale = torch.tensor(2.0)`, which
            # `.to(device)` leaves behind) mixes with tensors of any device in PyTorch
            args[i] = a = a.to(device)
        if a.device != device:
            problems.append(f"`{name}` is on {a.device}, `{spec[0][0]}` on {device}")
            recompilable = False
        if a.dtype != dtype or tuple(a.shape) != shape:
            problems.append(f"`{name}` is {_drtc_type_text(tuple(a.shape), a.dtype)}, "
                            f"compiled for {_drtc_type_text(shape, dtype)}")
            if kind != "activation" or a.dtype not in _DRTC_DTYPE_NAMES:
                recompilable = False
        if not _drtc_dense(i, a):
            if kind == "buffer":
                problems.append(f"buffer `{name}` is not contiguous")
                recompilable = False
            else:
                args[i] = a.contiguous(memory_format=_DRTC_LAYOUTS.get(i, torch.contiguous_format))
    want = _DRTC_GUARD["device"]
    if device is not None and want is not None and device.type != want:
        problems.append(f"the inputs are on {device}, the kernels were compiled for {want}")
        recompilable = False
    return args, "; ".join(problems) or None, recompilable


# argument index -> the memory format the kernels want it in, where not the contiguous one
# (weights of channels-last convolutions; the module sets it after this runtime)
_DRTC_LAYOUTS = {}


def _drtc_dense(i, a):
    fmt = _DRTC_LAYOUTS.get(i)
    return a.is_contiguous() if fmt is None else a.is_contiguous(memory_format=fmt)


_drtc_meta = _drtc_operator.attrgetter("dtype", "shape")
_drtc_strides = torch.Tensor.stride
_drtc_device_index = torch.Tensor.get_device


def _drtc_dense_spec():
    """Every argument's (dtype, shape) and its dense strides (in its memory format), as the
    kernels were compiled for: what `_drtc_dense_index` compares a call's arguments with."""
    metas, strides = [], []
    for i, (_, _, shape, dtype) in enumerate(_DRTC_GUARD["inputs"]):
        fmt = _DRTC_LAYOUTS.get(i, torch.contiguous_format)
        metas.append((dtype, tuple(shape)))
        # as ModelNew converts its weights: a tensor already dense in `fmt` keeps its
        # strides (a 1x1 kernel's NCHW strides are channels-last too)
        dense = torch.empty(shape, dtype=dtype, device="meta").contiguous(memory_format=fmt)
        strides.append(dense.stride())
    return tuple(metas), tuple(strides)


def _drtc_dense_devices(args):
    """Every argument's device index (`get_device`) when each is a tensor of exactly the
    compiled dtype, shape and dense strides, else None; one `map` per property (a ResNet
    passes 123 tensors per call)."""
    metas, strides = _DRTC_DENSE
    try:
        if tuple(map(_drtc_meta, args)) != metas or tuple(map(_drtc_strides, args)) != strides:
            return None
        return tuple(map(_drtc_device_index, args))
    except (AttributeError, TypeError):  # a Python number (or another non-tensor)
        return None


def _drtc_dense_index(args):
    """The common case on the GPU: `_drtc_dense_devices` matched and all are on one CUDA
    device. Returns that device's index, or None where `_drtc_matches` must look at each
    argument (other strides of a dense tensor, such as a size-1 dimension's, are a
    mismatch here and dense there)."""
    if _DRTC_GUARD["device"] not in (None, "cuda"):
        return None
    devices = _drtc_dense_devices(args)
    if not devices:
        return None
    index = devices[0]
    if index < 0 or devices.count(index) != len(devices) or not args[0].is_cuda:
        return None
    return index


def _drtc_matches(args):
    """The fast path: every argument is a contiguous tensor of the compiled shape and dtype,
    all on one device of the compiled type. Returns that device's CUDA index (-1 off the
    GPU), or None for the full check. Every call of the module pays for it before its
    first launch, so the GPU case compares ints (`get_device`), not device objects."""
    index = _drtc_dense_index(args)
    return index if index is not None else _drtc_each_matches(args)


def _drtc_each_matches(args):
    """`_drtc_matches` argument by argument, for calls the one-pass check did not take."""
    spec = _DRTC_GUARD["inputs"]
    if len(args) != len(spec) or not args:
        return None
    layouts = _DRTC_LAYOUTS
    try:
        index = args[0].get_device()
        for i, (a, (_, _, shape, dtype)) in enumerate(zip(args, spec)):
            if a.dtype is not dtype or a.shape != shape or a.get_device() != index:
                return None
            fmt = layouts.get(i) if layouts else None
            if not (a.is_contiguous() if fmt is None else a.is_contiguous(memory_format=fmt)):
                return None
        first = args[0]
        if index < 0:
            # off the GPU (-1 is every non-CUDA device): the devices themselves must agree
            device = first.device
            if any(a.device != device for a in args):
                return None
    except (AttributeError, TypeError):  # a Python number (or another non-tensor)
        return None
    if not isinstance(first, torch.Tensor):
        return None
    want = _DRTC_GUARD["device"]
    if want is not None and (not first.is_cuda if want == "cuda" else first.device.type != want):
        return None
    return index


def _drtc_dispatch(args):
    """The kernels' outputs for `args` (every `drtc_forward` argument, in order), or None
    when the caller must compute the reference instead."""
    index = _drtc_matches(args)
    if index is not None:
        if index < 0 or index == torch.cuda.current_device():
            return drtc_forward(*args)
        with torch.cuda.device(index):
            return drtc_forward(*args)
    checked, problem, recompilable = _drtc_check(args)
    if problem is None:
        return _drtc_launch(drtc_forward, checked)
    _DRTC_GUARD_STATS["mismatches"] += 1
    mode = _DRTC_GUARD["mode"]
    if mode == "error":
        raise ValueError(f"drtc: this module's kernels were compiled for {_drtc_expected()}; "
                         f"given {_drtc_given(args)} ({problem})")
    why = "guard mode 'reference'"
    if mode == "recompile":
        why = "cannot recompile for that"
        if recompilable:
            launch, why = _drtc_recompiled(checked)
            if launch is not None:
                return _drtc_launch(launch, checked)
    signature = _drtc_given(args)
    if signature not in _DRTC_WARNED:
        _DRTC_WARNED.add(signature)
        _drtc_warnings.warn(f"drtc: computing the reference PyTorch program for inputs the "
                            f"kernels were not compiled for ({problem}; {why})",
                            RuntimeWarning, stacklevel=3)
    _DRTC_GUARD_STATS["reference"] += 1
    return None


def _drtc_launch(launch, args):
    """Runs kernels on the GPU that holds the inputs (Triton launches on the current one)."""
    device = next((a.device for a in args if isinstance(a, torch.Tensor)), None)
    if device is not None and device.type == "cuda" \
            and device.index not in (None, torch.cuda.current_device()):
        with torch.cuda.device(device):
            return launch(*args)
    return launch(*args)


def _drtc_reference_operator(*inputs):
    """The reference seed program's `fused_operator`, as a list of outputs."""
    if not _DRTC_REFERENCE:
        exec(compile(_DRTC_SOURCE, "<drtc reference>", "exec"), _DRTC_REFERENCE)
    out = _DRTC_REFERENCE["fused_operator"](*inputs)
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _drtc_find_drtc():
    for candidate in (_drtc_os.environ.get("DRTC_BIN"), _DRTC_GUARD["drtc"],
                      _drtc_shutil.which("drtc")):
        if candidate and _drtc_os.path.isfile(candidate) \
                and _drtc_os.access(candidate, _drtc_os.X_OK):
            return candidate
    return None


def _drtc_cache_dir():
    env = _drtc_os.environ
    if env.get("DRTC_GUARD_CACHE"):
        return env["DRTC_GUARD_CACHE"]
    home = env.get("DRTC_HOME") or _drtc_os.path.join(
        env.get("XDG_CACHE_HOME") or _drtc_os.path.join(_drtc_os.path.expanduser("~"), ".cache"),
        "drtc")
    return _drtc_os.path.join(home, "guard")


def _drtc_recompiled(args):
    """(launch, None) for kernels compiled for these activations, or (None, reason)."""
    spec = _DRTC_GUARD["inputs"]
    device = _DRTC_GUARD["device"]
    if device is None:
        first = next(a for a in args if isinstance(a, torch.Tensor))
        device = "cuda" if first.device.type == "cuda" else "cpu"
    want = [(n, k, tuple(a.shape), a.dtype) if k == "activation" else (n, k, s, d)
            for (n, k, s, d), a in zip(spec, args)]
    types = [_drtc_type_text(s, d) for _, k, s, d in want if k == "activation"]
    key = (tuple(types), device)
    if key in _DRTC_COMPILED:
        _DRTC_GUARD_STATS["memory_hits"] += 1
        return _DRTC_COMPILED[key]
    result = _drtc_compile_for(types, device, want)
    _DRTC_COMPILED[key] = result
    return result


def _drtc_compile_for(types, device, want):
    argv = ["--device", device, "--guard", "error", *_DRTC_GUARD["compile_args"]]
    for t in types:
        argv += ["--input-type", t]
    digest = _drtc_hashlib.sha256(_drtc_json.dumps(
        [_DRTC_SOURCE, argv, _DRTC_GUARD["version"]]).encode()).hexdigest()[:32]
    cache = _drtc_cache_dir()
    path = _drtc_os.path.join(cache, f"{digest}.py")
    if _drtc_os.path.isfile(path):
        _DRTC_GUARD_STATS["disk_hits"] += 1
    else:
        drtc = _drtc_find_drtc()
        if drtc is None:
            return None, "no drtc to recompile with (set DRTC_BIN or put drtc on PATH)"
        try:
            _drtc_os.makedirs(cache, exist_ok=True)
            source = _drtc_os.path.join(cache, f"{digest}.{_drtc_os.getpid()}.source.py")
            with open(source, "w") as f:
                f.write(_DRTC_SOURCE)
        except OSError as e:
            return None, f"cannot write the guard cache {cache}: {e}"
        tmp = _drtc_os.path.join(cache, f"{digest}.{_drtc_os.getpid()}.tmp.py")
        _DRTC_GUARD_STATS["compiles"] += 1
        try:
            proc = _drtc_subprocess.run([drtc, "compile", source, "-o", tmp, *argv],
                                        capture_output=True, text=True)
        except OSError as e:
            return None, f"cannot run {drtc}: {e}"
        finally:
            if _drtc_os.path.exists(source):
                _drtc_os.remove(source)
        if proc.returncode != 0:
            if _drtc_os.path.exists(tmp):
                _drtc_os.remove(tmp)
            tail = " | ".join(proc.stderr.strip().splitlines()[-4:])
            return None, f"`drtc compile` for {', '.join(types)} failed: {tail}"
        _drtc_os.replace(tmp, path)
    name = f"_drtc_guard_{digest}"
    try:
        spec = _drtc_importlib_util.spec_from_file_location(name, path)
        module = _drtc_importlib_util.module_from_spec(spec)
        _drtc_sys.modules[name] = module
        spec.loader.exec_module(module)
    except Exception as e:
        _drtc_sys.modules.pop(name, None)
        return None, f"the recompiled module {path} failed to import: {type(e).__name__}: {e}"
    # names may differ (stitched modules name arguments by IR values): kinds and types may not
    got = [tuple(s[1:]) for s in module._DRTC_GUARD["inputs"]]
    if got != [tuple(w[1:]) for w in want]:
        return None, f"the recompiled module {path} was compiled for other inputs"
    return module.drtc_forward, None
