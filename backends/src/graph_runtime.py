# ---- drtc CUDA graphs ----------------------------------------------------------------
# This module captures its forward (`drtc_forward`) into CUDA graphs and replays them,
# which saves the host time of launching each kernel. A replay re-runs the captured
# kernels on exactly the memory the capture saw, so `_drtc_graphed` replays a graph only
# when the call's key equals the graph's key (`_drtc_graph_key`): every argument's (the
# inputs', parameters' and buffers') data pointer, shape, dtype, strides and
# requires_grad, the device and the current stream, and the switches that change which
# kernels PyTorch's library calls would run (grad and inference mode, matmul precision,
# cuDNN flags, autocast, deterministic algorithms). Any difference is another key. So:
#   * inputs the kernels were not compiled for (other shapes or dtypes, non-contiguous
#     views, Python numbers, CPU tensors) take the guard's path, `_drtc_dispatch`: eager;
#   * a new key runs the eager forward once, on a side stream, as the warm-up PyTorch's
#     CUDA-graph docs ask for, returns that result, and then captures the forward into a
#     new graph (nothing runs while a capture records, so in-place updates such as
#     training-mode BatchNorm's running statistics happen once per call, as in eager);
#   * a known key replays its graph and returns copies of the graph's static outputs
#     (fresh tensors: the next replay overwrites the static ones);
#   * at most `capacity` graphs are kept (each in its own memory pool); the least recently
#     used one is dropped first, after a device synchronize;
#   * a forward whose outputs require grad (a graph does not record autograd) runs eagerly
#     for that key; a forward that fails to capture runs eagerly from then on; either
#     reason is kept in `_DRTC_GRAPHS.stats` and warned once. Inside a caller's own capture
#     the forward runs eagerly (into the caller's graph).
# `_DRTC_GRAPHS.stats` counts captures, replays and eager calls; "last" says what the
# latest call did ("capture", "replay", "eager" or "guard"). `_DRTC_GRAPHS.reset()` drops
# every graph.
import collections as _drtc_collections
import operator as _drtc_operator
import threading as _drtc_threading
import warnings as _drtc_graph_warnings

import torch


def _drtc_graph_flags():
    """The global switches a captured graph freezes: what PyTorch's own calls in the
    forward (convolutions, library matmuls) would choose differently under other ones."""
    matmul = torch.backends.cuda.matmul
    cudnn = torch.backends.cudnn
    return (torch.is_grad_enabled(), torch.is_inference_mode_enabled(),
            torch.get_float32_matmul_precision(),
            matmul.allow_fp16_reduced_precision_reduction,
            matmul.allow_bf16_reduced_precision_reduction,
            cudnn.enabled, cudnn.allow_tf32, cudnn.deterministic, cudnn.benchmark,
            torch.are_deterministic_algorithms_enabled(), torch.is_autocast_enabled())


_drtc_graph_ptr = torch.Tensor.data_ptr
_drtc_graph_strides = torch.Tensor.stride
_drtc_graph_meta = _drtc_operator.attrgetter("dtype", "shape", "requires_grad")
_drtc_graph_grad = _drtc_operator.attrgetter("requires_grad")


def _drtc_graph_key(args, device_index, stream, dense=False):
    """Everything a replay of the forward on `args` depends on. `args` are tensors of the
    compiled shapes and dtypes (they passed `_drtc_matches`); `dense`: they passed
    `_drtc_dense_index`, so their dtypes, shapes and strides are the compiled ones and only
    pointers and requires_grad vary (a key of the other form, one element longer, never
    equals such a key). Every call pays for it (a ResNet has 123 arguments): `map` over
    the tensor methods, no Python loop."""
    ptrs = tuple(map(_drtc_graph_ptr, args))
    if dense:
        return (device_index, stream, _drtc_graph_flags(), ptrs,
                tuple(map(_drtc_graph_grad, args)))
    return (device_index, stream, _drtc_graph_flags(), ptrs,
            tuple(map(_drtc_graph_strides, args)), tuple(map(_drtc_graph_meta, args)))


class _DrtcGraphCache:
    """Captured graphs by key, least recently used first out.

    `capture(args)` runs the forward once (this call's result) and captures it; it
    returns (entry, outputs, why, scope): `entry` is None when it could not capture, and
    then `why` says why and `scope` is "key" (run this key eagerly) or "module" (run every
    call eagerly). `replay(entry)` returns fresh outputs. `synchronize()` waits for the
    device before a graph's memory is given back."""

    def __init__(self, capacity, capture, replay, reason, synchronize=None):
        self.capacity = max(1, capacity)
        self.capture = capture
        self.replay = replay
        self.synchronize = synchronize or torch.cuda.synchronize
        self.graphs = _drtc_collections.OrderedDict()
        self.eager_keys = _drtc_collections.OrderedDict()
        self.lock = _drtc_threading.Lock()
        self.warned = set()
        self.stats = {"enabled": True, "reason": reason, "captures": 0, "replays": 0,
                      "eager": 0, "evictions": 0, "fallback": None, "eager_reason": None,
                      "last": None}

    def _note(self, why):
        if why not in self.warned:
            self.warned.add(why)
            _drtc_graph_warnings.warn(f"drtc: CUDA graphs not used ({why}); running the eager "
                                      "forward", RuntimeWarning, stacklevel=4)

    def _eager(self, eager):
        self.stats["eager"] += 1
        self.stats["last"] = "eager"
        return eager()

    def call(self, key, args, eager):
        """The forward's outputs for `args`; `eager()` computes them without a graph."""
        with self.lock:
            if self.stats["fallback"] is not None or key in self.eager_keys:
                return self._eager(eager)
            entry = self.graphs.get(key)
            if entry is not None:
                self.graphs.move_to_end(key)
                self.stats["replays"] += 1
                self.stats["last"] = "replay"
                return self.replay(entry)
            entry, outs, why, scope = self.capture(args)
            if entry is None:
                self.stats["eager"] += 1
                self.stats["last"] = "eager"
                if scope == "module":
                    self.stats["fallback"] = why
                    self._drop_all()
                else:
                    self.stats["eager_reason"] = why
                    self.eager_keys[key] = why
                    while len(self.eager_keys) > 4 * self.capacity:
                        self.eager_keys.popitem(last=False)
                self._note(why)
                return outs
            self.stats["captures"] += 1
            self.stats["last"] = "capture"
            self.graphs[key] = entry
            if len(self.graphs) > self.capacity:
                # copies of the dropped graph's outputs may still be queued: wait for them
                self.synchronize()
                while len(self.graphs) > self.capacity:
                    self.graphs.popitem(last=False)
                    self.stats["evictions"] += 1
            return outs

    def _drop_all(self):
        if self.graphs:
            self.synchronize()
            self.graphs.clear()

    def reset(self):
        """Drops every graph (the next call of each key captures again)."""
        with self.lock:
            self._drop_all()
            self.eager_keys.clear()


def _drtc_graph_capture(args):
    """This call's outputs from a warm-up run of the eager forward on a side stream, then
    a capture of the forward into a new graph (see _DrtcGraphCache for what it returns)."""
    current = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    side.wait_stream(current)
    with torch.cuda.stream(side):
        outs = drtc_forward(*args)
    current.wait_stream(side)
    for o in outs:
        o.record_stream(current)  # made on the side stream, used on this one
    if torch.is_grad_enabled() and any(o.requires_grad for o in outs):
        return None, outs, "the outputs require grad: a graph would not record autograd", "key"
    graph = torch.cuda.CUDAGraph()
    # captured on a stream of this device (torch.cuda.graph's own default stream is made
    # once, on whichever device was current then); "thread_local": calls other threads make
    # meanwhile (a DataLoader pinning memory) do not break this capture
    capture_stream = torch.cuda.Stream()
    try:
        with torch.no_grad(), torch.cuda.graph(graph, stream=capture_stream,
                                               capture_error_mode="thread_local"):
            static = drtc_forward(*args)
    except Exception as e:  # a forward that cannot be captured: eager from now on
        first = (str(e).strip().splitlines() or [""])[0][:300]
        return None, outs, f"capture failed: {type(e).__name__}: {first}", "module"
    return (graph, tuple(static)), outs, None, None


def _drtc_graph_replay(entry):
    """Replays on the current stream; the outputs are fresh copies of the static ones."""
    graph, static = entry
    graph.replay()
    return tuple(o.clone() for o in static)


def _drtc_graphed(args):
    """`_drtc_dispatch` through CUDA graphs: the kernels' outputs for `args` (every
    `drtc_forward` argument, in order), or None when the caller must compute the
    reference instead."""
    index = _drtc_dense_index(args)
    dense = index is not None
    if not dense and (_drtc_each_matches(args) is None or args[0].device.type != "cuda"):
        _DRTC_GRAPHS.stats["last"] = "guard"
        return _drtc_dispatch(args)
    device = args[0].device
    with torch.cuda.device(device):
        if torch.cuda.is_current_stream_capturing():
            _DRTC_GRAPHS.stats["last"] = "eager"
            return drtc_forward(*args)
        key = _drtc_graph_key(args, device.index, torch.cuda.current_stream(device).cuda_stream,
                              dense)
        return _DRTC_GRAPHS.call(key, args, lambda: drtc_forward(*args))
