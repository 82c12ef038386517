"""A reference program (built and run here, in the checker) and its candidate: in this
process for drtc's own generated modules (`trusted` requests), in a sandboxed process of its
own for every other answer (`isolated.py`)."""

import torch

from .candidate import Candidate, failure, load_module, tensor_attributes, unload
from .common import Failure, build_module, exc_line, made_on_device, to_device
from .isolated import IsolatedCandidate


class Pair:
    """A reference program and a candidate, built once; trials reuse both instances."""

    def __init__(self, req, spares):
        self.ref_mod = None
        self.cand = None
        self.ref_model = None
        self.base_seed = int(req.get("seed", 0))
        # the request being answered (`isolated.Deadline`): its trials' give-way moves it
        self.deadline = spares.deadline
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
        self.trusted = bool(req.get("trusted", False))
        init = []
        ref_state = None
        if self.kind == "kernelbench":
            if hasattr(self.ref_mod, "get_init_inputs"):
                torch.manual_seed(self.base_seed)
                init = list(self.ref_mod.get_init_inputs())
            try:
                self.ref_model = build_module(lambda: self.ref_mod.Model(*init),
                                              self.base_seed)
            except BaseException as e:
                raise failure("reference", "reference Model(...)", e)
            # KernelBench runs models in their default training mode: no .eval().
            # the reference's tensor attributes as built, to tell state the forward
            # changes from constants (see `states`)
            with torch.no_grad():
                self.ref_attributes = {k: (v, v.detach().clone())
                                       for k, v in tensor_attributes(self.ref_model).items()}
            ref_state = dict(self.ref_model.state_dict())
        if self.trusted:
            self.cand = Candidate(req["candidate"], self.kind, init, self.base_seed, ref_state)
        else:
            self.cand = IsolatedCandidate(spares, req["candidate"], self.kind, init,
                                          self.base_seed, ref_state)

    def drawn_inputs(self, seed):
        """The reference's `get_inputs()` under `seed`, drawn on the device where it can
        be (`made_on_device`; tensors it places itself stay where it put them)."""
        return made_on_device(lambda: list(self.ref_mod.get_inputs()), seed)

    def make_inputs(self, seed):
        return [to_device(x) for x in self.drawn_inputs(seed)]

    def run_reference(self, inputs):
        if self.kind == "kernelbench":
            return self.ref_model(*inputs)
        return self.ref_mod.fused_operator(*inputs)

    def reference_callable(self):
        """What `torch.compile` compiles: the reference module, or its function."""
        if self.kind == "kernelbench":
            return self.ref_model
        return self.ref_mod.fused_operator

    def run_candidate(self, inputs):
        """A plain call of a trusted candidate (timing of drtc's own modules)."""
        return self.cand.run(inputs)

    def graphs(self):
        """A trusted candidate's CUDA-graph cache, or None."""
        return self.cand.graphs() if self.trusted and self.cand is not None else None

    def states(self, cand_state=(None, None)):
        """The module state of reference and candidate after a call: each one's
        `state_dict()` and its plain tensor attributes (`self.hidden`), which `state_dict`
        leaves out; `cand_state` is the candidate's (state_dict, attributes) as its call
        reported them. A reference attribute is compared when the candidate has it too, or
        when the reference's forward changed it since it was built (assigned a new tensor
        or updated in place): then a candidate without it fails as missing."""
        if self.kind != "kernelbench":
            return None, None
        ref = dict(self.ref_model.state_dict())
        cand_sd, cand_attrs = cand_state
        cand = dict(cand_sd or {})
        cand_attrs = cand_attrs or {}
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
        if self.cand is not None:
            self.cand.close()
        unload(self.ref_mod)
        self.ref_model = None
        self.ref_mod = self.cand = None
