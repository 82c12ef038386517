"""Checks a module drtc generated through the export frontend against its reference
model, in ways the verifier does not: ModelNew built after the same seed gets the same
weights (the KernelBench harness), its state_dict has the reference's names and loads the
reference's state_dict, a forward gives the reference's output, and training-mode
BatchNorm running statistics after a forward equal the reference's.

usage: python check_export_module.py REFERENCE.py MODULE.py   (prints one JSON object)
"""

import importlib.util
import json
import sys

import torch


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ref = load(sys.argv[1], "drtc_ref")
gen = load(sys.argv[2], "drtc_gen")
init = ref.get_init_inputs()
torch.manual_seed(42)
a = ref.Model(*init)
torch.manual_seed(42)
b = gen.ModelNew(*init)
sa, sb = a.state_dict(), b.state_dict()
facts = {
    "same_names": list(sa.keys()) == list(sb.keys()),
    "names": list(sb.keys()),
    "same_weights": all(torch.equal(sa[k], sb[k]) for k in sa),
}
c = gen.ModelNew(*init)
c.load_state_dict(a.state_dict())
facts["loads_state_dict"] = all(torch.equal(a.state_dict()[k], c.state_dict()[k]) for k in sa)
torch.manual_seed(7)
xs = ref.get_inputs()
with torch.no_grad():
    torch.manual_seed(1)
    ya = a(*[x.clone() for x in xs])
    torch.manual_seed(1)
    yb = b(*[x.clone() for x in xs])
ya = ya if isinstance(ya, (list, tuple)) else [ya]
yb = yb if isinstance(yb, (list, tuple)) else [yb]
facts["outputs_close"] = len(ya) == len(yb) and all(
    torch.allclose(p, q, rtol=1e-3, atol=1e-4) for p, q in zip(ya, yb)
)
stats = [k for k in sa if k.endswith(("running_mean", "running_var", "num_batches_tracked"))]
facts["stats"] = stats
facts["stats_equal"] = all(
    torch.allclose(a.state_dict()[k].double(), b.state_dict()[k].double(), rtol=1e-4, atol=1e-6)
    for k in stats
)
facts["stats_moved"] = all(
    not torch.equal(a.state_dict()[k], sa_k)
    for k, sa_k in ((k, torch.zeros_like(a.state_dict()[k])) for k in stats if k.endswith("running_mean"))
)
print(json.dumps(facts))
