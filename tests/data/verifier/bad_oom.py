# Broken: asks for more memory than any machine has (a petabyte workspace), on the
# device of its inputs. The verifier reports `out_of_memory` and replaces the worker.
import torch


def triton_fused_operator(x, b):
    workspace = torch.empty(1 << 50, dtype=torch.uint8, device=x.device)
    out = torch.relu(x + b) * 3.0
    return [out + workspace[:1].float() * 0]
