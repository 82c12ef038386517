"""The CUDA-graph runtime of generated modules (`backends/src/graph_runtime.py`), on CPU:
the key a replay depends on, the graph cache (replay, capture, least-recently-used
eviction, eager fallbacks, reset) and the replay's fresh outputs, with CPU tensors and a
stand-in for a captured graph. The CUDA calls themselves (capture, replay) need a GPU.

Also the guard's one-pass check (`_drtc_dense_devices` in `guard_runtime.py`), which the
graph path runs before its key.

usage: check_graphs.py GRAPH_RUNTIME.py GUARD_RUNTIME.py
Prints one line per check group and `ok N` at the end; any failure raises.
"""
import sys
import warnings

import torch

NS = {}
exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), NS)
key = NS["_drtc_graph_key"]
Cache = NS["_DrtcGraphCache"]
replay_fn = NS["_drtc_graph_replay"]
checks = [0]


def check(cond, what):
    checks[0] += 1
    assert cond, what


# ---- the key: everything a replay depends on --------------------------------------------
x = torch.randn(4, 4)
w = torch.randn(4, 4)
args = [x, w]
k0 = key(args, 0, 7)
check(key([x, w], 0, 7) == k0, "same tensors, same stream: same key")
x.copy_(torch.randn(4, 4))
check(key([x, w], 0, 7) == k0, "new values in the same buffers: same key (a replay)")
check(key([x.clone(), w], 0, 7) != k0, "an input at a new pointer: another key")
check(key([x, w.clone()], 0, 7) != k0, "a parameter at a new pointer: another key")
check(key([x, w], 0, 8) != k0, "another stream: another key")
check(key([x, w], 1, 7) != k0, "another device: another key")
xt = x.t()  # the same pointer, other strides
check(xt.data_ptr() == x.data_ptr() and key([xt, w], 0, 7) != k0, "other strides: another key")
check(key([x.view(2, 8).view(4, 4), w], 0, 7) == k0, "a view with the same layout: same key")
base = torch.randn(32)
v1, v2 = base[:16].view(4, 4), base[16:].view(4, 4)  # one storage, two offsets
check(v1.untyped_storage().data_ptr() == v2.untyped_storage().data_ptr()
      and key([v1, w], 0, 7) != key([v2, w], 0, 7), "another offset in one storage: another key")
xf = torch.empty(4, 4, dtype=torch.float64)
check(key([xf, w], 0, 7) != k0, "another dtype: another key")
with torch.no_grad():
    check(key([x, w], 0, 7) != k0, "grad mode off: another key")
wg = w.clone().requires_grad_(True)
check(key([x, wg], 0, 7) != key([x, wg.detach()], 0, 7), "requires_grad is in the key")
prec = torch.get_float32_matmul_precision()
torch.set_float32_matmul_precision("high" if prec == "highest" else "highest")
try:
    check(key([x, w], 0, 7) != k0, "another float32 matmul precision: another key")
finally:
    torch.set_float32_matmul_precision(prec)
tf32 = torch.backends.cudnn.allow_tf32
torch.backends.cudnn.allow_tf32 = not tf32
try:
    check(key([x, w], 0, 7) != k0, "another cuDNN TF32 switch: another key")
finally:
    torch.backends.cudnn.allow_tf32 = tf32
check(key([x, w], 0, 7) == k0, "switches restored: the first key again")
# arguments that passed the one-pass dense check: only pointers and requires_grad vary
d0 = key([x, w], 0, 7, True)
check(d0 != k0 and key([x.clone(), w], 0, 7, True) != d0, "dense keys: their own form, pointers in")
check(key([x, wg], 0, 7, True) != key([x, wg.detach()], 0, 7, True),
      "requires_grad is in the dense key")
print("key ok")

# ---- the cache -----------------------------------------------------------------------------
log = []


class FakeGraph:
    """Stands in for a captured graph: replay() rewrites the static outputs in place, as
    a CUDA graph replay does (here from the inputs' current values)."""

    def __init__(self, args, static):
        self.args = args
        self.static = static
        self.replays = 0

    def replay(self):
        self.replays += 1
        self.static[0].copy_(self.args[0] + self.args[1])


def forward(a):
    return (a[0] + a[1],)


def capture(a):
    log.append(("capture", tuple(t.data_ptr() for t in a)))
    outs = forward(a)  # the warm-up: this call's result
    static = (torch.empty_like(outs[0]),)
    return (FakeGraph(a, static), static), outs, None, None


syncs = []
c = Cache(capacity=2, capture=capture, replay=replay_fn, reason="test",
          synchronize=lambda: syncs.append(1))
a0 = [torch.randn(3), torch.randn(3)]
out = c.call(key(a0, 0, 1), a0, lambda: forward(a0))
check(c.stats["last"] == "capture" and c.stats["captures"] == 1, "a new key captures")
check(torch.equal(out[0], a0[0] + a0[1]), "the capturing call returns its warm-up result")
a0[0].copy_(torch.randn(3))
r1 = c.call(key(a0, 0, 1), a0, lambda: forward(a0))
check(c.stats["last"] == "replay" and c.stats["replays"] == 1, "the same key replays")
check(torch.equal(r1[0], a0[0] + a0[1]), "a replay computes from the new values")
static = c.graphs[key(a0, 0, 1)][1][0]
check(r1[0].data_ptr() != static.data_ptr(), "a replay returns a copy, not the static output")
saved = r1[0].clone()
a0[0].copy_(torch.randn(3))
r2 = c.call(key(a0, 0, 1), a0, lambda: forward(a0))
check(torch.equal(r1[0], saved), "the next replay does not overwrite an earlier result")
check(r2[0].data_ptr() != r1[0].data_ptr(), "every replay returns fresh memory")
a1 = [torch.randn(3), a0[1]]
c.call(key(a1, 0, 1), a1, lambda: forward(a1))
check(c.stats["captures"] == 2 and len(c.graphs) == 2, "new input pointers: a new capture")
a2 = [torch.randn(3), a0[1]]
c.call(key(a2, 0, 1), a2, lambda: forward(a2))
check(len(c.graphs) == 2 and c.stats["evictions"] == 1, "at capacity the oldest key goes")
check(syncs == [1], "the device is synchronized before a graph is dropped")
check(key(a0, 0, 1) not in c.graphs, "the least recently used key was dropped")
c.call(key(a1, 0, 1), a1, lambda: forward(a1))
check(c.stats["last"] == "replay", "a kept key still replays")
c.call(key(a0, 0, 1), a0, lambda: forward(a0))
check(c.stats["last"] == "capture", "a dropped key captures again")
check(key(a2, 0, 1) not in c.graphs, "replaying a1 made a2 the least recently used")
c.reset()
check(not c.graphs, "reset drops every graph")
print("cache ok")

# ---- what cannot be captured runs eagerly, and says why --------------------------------------


def capture_grad(a):
    return None, forward(a), "the outputs require grad", "key"


c = Cache(capacity=2, capture=capture_grad, replay=replay_fn, reason="test",
          synchronize=lambda: None)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = c.call(key(a0, 0, 1), a0, lambda: forward(a0))
    out2 = c.call(key(a0, 0, 1), a0, lambda: ("eager",))
check(torch.equal(out[0], a0[0] + a0[1]), "a key that cannot capture returns its warm-up")
check(out2 == ("eager",) and c.stats["last"] == "eager", "that key then runs eagerly")
check(c.stats["eager_reason"] == "the outputs require grad", "the reason is kept")
check(sum("CUDA graphs not used" in str(w.message) for w in caught) == 1, "warned once")
check(c.stats["fallback"] is None, "a per-key reason does not turn graphs off")


def capture_fails(a):
    return None, forward(a), "capture failed: RuntimeError: no", "module"


c = Cache(capacity=2, capture=capture_fails, replay=replay_fn, reason="test",
          synchronize=lambda: None)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    c.call(key(a0, 0, 1), a0, lambda: forward(a0))
    out = c.call(key(a1, 0, 1), a1, lambda: ("eager",))
check(c.stats["fallback"].startswith("capture failed") and out == ("eager",),
      "a failed capture turns graphs off for every key")

# ---- the entry: inputs the kernels were not compiled for take the guard's path -------------
NS["_drtc_dense_index"] = lambda a: None  # the one-pass check did not match
NS["_drtc_each_matches"] = lambda a: None
NS["_drtc_dispatch"] = lambda a: ("dispatched",)
NS["_DRTC_GRAPHS"] = Cache(capacity=2, capture=capture, replay=replay_fn, reason="test",
                           synchronize=lambda: None)
check(NS["_drtc_graphed"](a0) == ("dispatched",), "a guard mismatch dispatches")
NS["_drtc_each_matches"] = lambda a: True
check(NS["_drtc_graphed"](a0) == ("dispatched",), "CPU tensors never reach a graph")
check(NS["_DRTC_GRAPHS"].stats["last"] == "guard" and not NS["_DRTC_GRAPHS"].graphs,
      "and capture nothing")
print("fallbacks ok")

# ---- the guard's one-pass check ----------------------------------------------------------
G = {}
exec(compile(open(sys.argv[2]).read(), sys.argv[2], "exec"), G)
G["_DRTC_GUARD"] = {"device": None, "inputs": [
    ("x", "activation", (2, 3, 4, 4), torch.float32), ("w", "param", (3, 3, 3, 3), torch.float32),
    ("b", "param", (3,), torch.float32), ("s", "buffer", (), torch.int64),
    ("p", "param", (3, 3, 1, 1), torch.float32)]}
G["_DRTC_LAYOUTS"] = {1: torch.channels_last, 4: torch.channels_last}
G["_DRTC_DENSE"] = G["_drtc_dense_spec"]()
dense = G["_drtc_dense_devices"]
xs = torch.randn(2, 3, 4, 4)
ws = torch.randn(3, 3, 3, 3).contiguous(memory_format=torch.channels_last)
bs, ss = torch.randn(3), torch.tensor(4)
# a 1x1 kernel converted as ModelNew converts it keeps its NCHW strides
ps = torch.randn(3, 3, 1, 1).contiguous(memory_format=torch.channels_last)
ok = [xs, ws, bs, ss, ps]
check(dense(ok) == (-1,) * 5, "compiled dtypes, shapes and dense strides: devices")
check(G["_drtc_dense_index"](ok) is None, "CPU tensors: no CUDA index")
check(dense([xs, ws.contiguous(), bs, ss, ps]) is None, "a channels-last weight in NCHW: no")
check(dense([xs.transpose(2, 3), ws, bs, ss, ps]) is None, "a transposed input: no")
check(dense([xs.double(), ws, bs, ss, ps]) is None, "another dtype: no")
check(dense([xs[:1], ws, bs, ss, ps]) is None, "another shape: no")
check(dense([xs, ws, bs, ss]) is None and dense(ok + [bs]) is None, "another count: no")
check(dense([xs, ws, 1.0, ss, ps]) is None, "a Python number: no")
check(dense([torch.randn(2, 3, 4, 8)[..., :4], ws, bs, ss, ps]) is None, "a strided view: no")
print("dense ok")
print(f"ok {checks[0]}")
