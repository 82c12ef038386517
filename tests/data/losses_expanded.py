import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, p, t, c):
        return (
            F.smooth_l1_loss(a, b, beta=0.5, reduction="sum"),
            F.smooth_l1_loss(a, b, beta=0.0),
            F.mse_loss(a, b, reduction="none"),
            F.kl_div(p, t, reduction="batchmean", log_target=True),
            F.kl_div(p, torch.relu(t + 2.5), reduction="mean"),
            F.triplet_margin_loss(a, b, torch.tanh(a)),
            F.triplet_margin_loss(a, b, a * 0.5, margin=0.5, p=1.0, swap=True, reduction="sum"),
            F.triplet_margin_loss(p, t, p * t, reduction="none"),
            F.cross_entropy(a, c),
            F.cross_entropy(a * 2.0, c, reduction="sum"),
            F.cross_entropy(a, c, reduction="none"),
        )


def get_inputs():
    # class indices, three of them the ignored index (-100)
    c = torch.cat([torch.full((3,), -100, dtype=torch.int64), torch.randint(0, 33, (5,))])
    return [torch.randn(8, 33), torch.randn(8, 33), torch.randn(4, 16), torch.randn(4, 16), c]


def get_init_inputs():
    return []
