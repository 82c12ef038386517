# class: strict — computes in a TorchScript function scripted at import; the TorchScript interpreter runs its ops without the Python torch-function layer
import torch


@torch.jit.script
def _compute(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.relu(x + b) * 2.0 - 0.5


def triton_fused_operator(x, b):
    return [_compute(x, b)]
