"""The candidate half of a pair: its module loaded and built, and one call of it under the
guards (poisoned allocations, side-stream delays, strict mode, moved state), returning
plain facts: outputs in stream order, outputs after a device-wide synchronize when they
differ, strict-mode violations, aliasing, modified inputs, module state, the CUDA-graph
cache's last action.

The same class runs in the checker's own process for drtc's own generated modules
(trusted) and inside an isolated candidate process (`runner.py`) for every untrusted
answer, where what it reports is treated as a claim: the checker compares the values it
receives and never runs candidate code itself."""

import importlib.util
import sys

import torch

from .common import DEVICE, Failure, build_module, exc_line, flatten, sync
from .comparison import check_aliasing, clone_all, inputs_equal, tensors_identical
from .guards import PoisonedAllocation, SideStreamGuard, StrictMode
from .memory import classify, is_oom

_counter = [0]


def load_module(path, tag):
    _counter[0] += 1
    name = f"drtc_{tag}_{_counter[0]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return mod


def unload(mod):
    if mod is not None:
        sys.modules.pop(mod.__name__, None)


def failure(check, what, e):
    """A Failure naming the step; out of memory keeps its own check."""
    if is_oom(e):
        return Failure("out_of_memory", f"{what} ran out of memory: {exc_line(e)}")
    return Failure(check, f"{what} failed: {exc_line(e)}")


def tensor_attributes(model):
    """The plain tensor attributes of a module tree by dotted name: tensors in a module's
    `__dict__`, neither parameters nor buffers (so not in `state_dict`), such as an RNN's
    `self.hidden` made in `__init__` and assigned in forward."""
    out = {}
    for prefix, m in model.named_modules():
        for k, v in vars(m).items():
            if isinstance(v, torch.Tensor):
                out[f"{prefix}.{k}" if prefix else k] = v
    return out


class Candidate:
    """A candidate module, built once; trials reuse the instance.

    `kind` is "kernelbench" (`ModelNew(*init_args)`, loaded with the reference's
    `state_dict`, strict) or "seed" (`triton_fused_operator`)."""

    def __init__(self, path, kind, init_args=(), seed=0, ref_state=None):
        self.kind = kind
        self.mod = None
        self.model = None
        self.buffers = None  # the last call's input buffers (refilled in place)
        try:
            self.mod = load_module(path, "cand")
        except BaseException as e:
            raise Failure("import", f"candidate failed to import: {exc_line(e)}")
        if kind == "kernelbench":
            if not hasattr(self.mod, "ModelNew"):
                raise Failure("import", "candidate defines no `ModelNew` (KernelBench pair)")
            try:
                self.model = build_module(lambda: self.mod.ModelNew(*init_args), seed)
            except BaseException as e:
                raise failure("init", "ModelNew(...)", e)
            if not isinstance(self.model, torch.nn.Module):
                raise Failure("init", "ModelNew is not an nn.Module")
            try:
                self.model.load_state_dict(ref_state, strict=True)
            except BaseException as e:
                raise Failure("state_dict", "ModelNew does not accept the reference's "
                                            f"state_dict (strict): {exc_line(e)}")
        elif not hasattr(self.mod, "triton_fused_operator"):
            raise Failure("import", "candidate defines no `triton_fused_operator` (seed pair)")

    def run(self, inputs):
        if self.kind == "kernelbench":
            return self.model(*inputs)
        return self.mod.triton_fused_operator(*inputs)

    def load_state(self, state):
        """Loads a new state (re-drawn parameters) into the module, strict."""
        with torch.no_grad():
            self.model.load_state_dict(state, strict=True)

    def graphs(self):
        """The module's CUDA-graph cache (`_DRTC_GRAPHS` of drtc's modules that use
        graphs), or None."""
        g = getattr(self.mod, "_DRTC_GRAPHS", None)
        if g is None or not isinstance(getattr(g, "stats", None), dict):
            return None
        return g

    def graph_stats(self):
        g = self.graphs()
        return None if g is None else dict(g.stats)

    def move_state(self):
        """Gives every parameter and buffer new storage with the same values, and fills the
        old storage with NaN (floats); returns the old tensors, to be kept alive while the
        next call runs, so that a call that still read or wrote the old memory (a CUDA graph
        replayed for the old pointers) shows in its outputs or state."""
        old = []
        if self.kind != "kernelbench":
            return old
        with torch.no_grad():
            for t in list(self.model.parameters()) + list(self.model.buffers()):
                prev = t.data
                t.data = prev.clone()
                if prev.is_floating_point():
                    prev.fill_(float("nan"))
                old.append(prev)
        return old

    def state(self):
        """(state_dict, plain tensor attributes) after a call; (None, None) for seed
        programs."""
        if self.kind != "kernelbench":
            return None, None
        sd = {k: v.detach() for k, v in self.model.state_dict().items()}
        attrs = {k: v.detach() for k, v in tensor_attributes(self.model).items()}
        return sd, attrs

    def call(self, inputs, seed, trial_kind, opts, poison_sizes, ref_out=None):
        """One guarded call. `inputs` are this trial's values: fresh buffers, or (refill,
        moved) values copied into the previous call's buffers. Returns a dict of facts;
        `failure` is (check, message, fatal) when the candidate raised."""
        strict, library_ops = opts
        if trial_kind != "fresh" and self.buffers is not None:
            for b, v in zip(self.buffers, inputs):
                if isinstance(b, torch.Tensor):
                    b.copy_(v)
            inputs = self.buffers
        self.buffers = inputs
        snapshot = clone_all(inputs)
        moved = self.move_state() if trial_kind == "moved" else None
        graphs = self.graphs()
        if graphs is not None:
            graphs.stats["last"] = None
        facts = {"failure": None, "violations": {}, "side": None}
        try:
            with torch.no_grad():
                guard = SideStreamGuard() if DEVICE == "cuda" else None
                strict_mode = StrictMode(library_ops) if strict else None
                with PoisonedAllocation(poison_sizes):
                    if guard:
                        guard.__enter__()
                    torch.manual_seed(seed + 1)
                    try:
                        if strict_mode:
                            with strict_mode:
                                raw = self.run(inputs)
                            facts["violations"] = dict(strict_mode.violations)
                        else:
                            raw = self.run(inputs)
                    finally:
                        if guard:
                            guard.__exit__(None, None, None)
                            facts["side"] = guard.used
                cand_out = flatten(raw)
                del raw
                for i, o in enumerate(cand_out):
                    if isinstance(o, torch.Tensor) and type(o) is not torch.Tensor:
                        # a subclass could compute later, outside every guard
                        facts["failure"] = ("type", f"output {i} is a {type(o).__name__}, a "
                                            "torch.Tensor subclass: outputs must be plain, "
                                            "materialized tensors", False)
                        return facts
                # what a consumer on the current stream sees: copies queued in stream
                # order (on CPU there is one stream: the outputs themselves)
                ordered = clone_all(cand_out) if DEVICE == "cuda" else cand_out
            sync()
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            check, msg, fatal = classify(e, "candidate")
            facts["failure"] = (check, msg, fatal)
            return facts
        facts["outputs"] = ordered
        facts["late"] = None
        if DEVICE == "cuda" and any(
                isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
                and (a.shape != b.shape or a.dtype != b.dtype or not tensors_identical(a, b))
                for a, b in zip(ordered, cand_out)):
            facts["late"] = cand_out
        facts["graph_last"] = graphs.stats.get("last") if graphs is not None else None
        facts["alias"] = check_aliasing(cand_out, inputs, ref_out or [])
        facts["inputs_changed"] = inputs_equal(inputs, snapshot)
        facts["state"] = self.state()
        del moved
        return facts

    def close(self):
        graphs = self.graphs() if self.mod is not None else None
        if graphs is not None:
            try:  # the graphs' memory pools go now, not when the module is collected
                graphs.reset()
            except BaseException:
                pass  # a broken context: the worker is replaced anyway
        unload(self.mod)
        self.model = None
        self.mod = None
        self.buffers = None
