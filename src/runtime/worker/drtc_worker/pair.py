"""Loading a reference program and a candidate, and calling them."""

import importlib.util
import sys

import torch

from .common import DEVICE, Failure, exc_line, to_device
from .memory import is_oom

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


def _failure(check, what, e):
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


class Pair:
    """A reference program and a candidate, built once; trials reuse both instances."""

    def __init__(self, req):
        self.ref_mod = None
        self.cand_mod = None
        self.ref_model = None
        self.cand_model = None
        self.base_seed = int(req.get("seed", 0))
        try:
            self.ref_mod = load_module(req["reference"], "ref")
        except BaseException as e:
            raise Failure("reference", f"reference failed to load: {exc_line(e)}")
        if hasattr(self.ref_mod, "Model"):
            self.kind = "kernelbench"
        elif hasattr(self.ref_mod, "fused_operator"):
            self.kind = "seed"
        else:
            raise Failure("reference", "reference defines neither `Model` (KernelBench) nor "
                                       "`fused_operator` (seed format)")
        if not hasattr(self.ref_mod, "get_inputs"):
            raise Failure("reference", "reference defines no `get_inputs()`")
        try:
            self.cand_mod = load_module(req["candidate"], "cand")
        except BaseException as e:
            raise Failure("import", f"candidate failed to import: {exc_line(e)}")
        if self.kind == "kernelbench":
            if not hasattr(self.cand_mod, "ModelNew"):
                raise Failure("import", "candidate defines no `ModelNew` (KernelBench pair)")
            init = []
            if hasattr(self.ref_mod, "get_init_inputs"):
                torch.manual_seed(self.base_seed)
                init = list(self.ref_mod.get_init_inputs())
            torch.manual_seed(self.base_seed)
            try:
                self.ref_model = self.ref_mod.Model(*init).to(DEVICE)
            except BaseException as e:
                raise _failure("reference", "reference Model(...)", e)
            torch.manual_seed(self.base_seed)
            try:
                self.cand_model = self.cand_mod.ModelNew(*init).to(DEVICE)
            except BaseException as e:
                raise _failure("init", "ModelNew(...)", e)
            if not isinstance(self.cand_model, torch.nn.Module):
                raise Failure("init", "ModelNew is not an nn.Module")
            try:
                self.cand_model.load_state_dict(self.ref_model.state_dict(), strict=True)
            except BaseException as e:
                raise Failure("state_dict", "ModelNew does not accept the reference's "
                                            f"state_dict (strict): {exc_line(e)}")
            # KernelBench runs models in their default training mode: no .eval().
            # the reference's tensor attributes as built, to tell state the forward
            # changes from constants (see `states`)
            with torch.no_grad():
                self.ref_attributes = {k: (v, v.detach().clone())
                                       for k, v in tensor_attributes(self.ref_model).items()}
        else:
            if not hasattr(self.cand_mod, "triton_fused_operator"):
                raise Failure("import", "candidate defines no `triton_fused_operator` "
                                        "(seed pair)")

    def host_inputs(self, seed):
        """The reference's `get_inputs()` under `seed`, where it makes them (the host for
        KernelBench and seed programs)."""
        torch.manual_seed(seed)
        return list(self.ref_mod.get_inputs())

    def make_inputs(self, seed):
        return [to_device(x) for x in self.host_inputs(seed)]

    def run_reference(self, inputs):
        if self.kind == "kernelbench":
            return self.ref_model(*inputs)
        return self.ref_mod.fused_operator(*inputs)

    def run_candidate(self, inputs):
        if self.kind == "kernelbench":
            return self.cand_model(*inputs)
        return self.cand_mod.triton_fused_operator(*inputs)

    def reference_callable(self):
        """What `torch.compile` compiles: the reference module, or its function."""
        if self.kind == "kernelbench":
            return self.ref_model
        return self.ref_mod.fused_operator

    def graphs(self):
        """The candidate module's CUDA-graph cache (`_DRTC_GRAPHS` of drtc's modules that
        use graphs), or None."""
        g = getattr(self.cand_mod, "_DRTC_GRAPHS", None)
        if g is None or not isinstance(getattr(g, "stats", None), dict):
            return None
        return g

    def move_state(self):
        """Gives every parameter and buffer of the candidate new storage with the same
        values, and fills the old storage with NaN (floats); returns the old tensors, to be
        kept alive while the next call runs, so that a call that still read or wrote the old
        memory (a CUDA graph replayed for the old pointers) shows in its outputs or state."""
        old = []
        if self.kind != "kernelbench":
            return old
        with torch.no_grad():
            for t in list(self.cand_model.parameters()) + list(self.cand_model.buffers()):
                prev = t.data
                t.data = prev.clone()
                if prev.is_floating_point():
                    prev.fill_(float("nan"))
                old.append(prev)
        return old

    def states(self):
        """The module state of reference and candidate after a call: each one's
        `state_dict()` and its plain tensor attributes (`self.hidden`), which `state_dict`
        leaves out. A reference attribute is compared when the candidate has it too, or
        when the reference's forward changed it since it was built (assigned a new tensor
        or updated in place): then a candidate without it fails as missing."""
        if self.kind != "kernelbench":
            return None, None
        ref, cand = dict(self.ref_model.state_dict()), dict(self.cand_model.state_dict())
        cand_attrs = tensor_attributes(self.cand_model)
        for k, v in tensor_attributes(self.ref_model).items():
            if k in ref:
                continue
            first, initial = self.ref_attributes.get(k, (None, None))
            changed = (first is not v or initial is None or initial.shape != v.shape
                       or initial.dtype != v.dtype
                       or not torch.equal(initial, v.detach().to(initial.device)))
            if k in cand_attrs or changed:
                ref[k] = v.detach()
                if k in cand_attrs and k not in cand:
                    cand[k] = cand_attrs[k].detach()
        return ref, cand

    def close(self):
        graphs = self.graphs() if self.cand_mod is not None else None
        if graphs is not None:
            try:  # the graphs' memory pools go now, not when the module is collected
                graphs.reset()
            except BaseException:
                pass  # a broken context: the worker is replaced anyway
        unload(self.ref_mod)
        unload(self.cand_mod)
        self.ref_model = self.cand_model = None
        self.ref_mod = self.cand_mod = None
