# Close to relu(x + b) * 3 but off by 3e-4 relative: fails allclose(1e-4), so only the
# float64 truth can judge it (and rejects it: it is less accurate than the reference).
import torch


def triton_fused_operator(x, b):
    return [torch.relu(x + b) * 3.0 * (1.0 + 3e-4)]
