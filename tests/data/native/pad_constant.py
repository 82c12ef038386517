# F.pad in constant mode as model code spells it: a shifted window's pad of a layer
# norm's result (the two middle dims), a pad with a value and a crop (negative amounts),
# and a pad read by its consumer's pointwise ops.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(8)

    def forward(self, x, y):
        h = F.pad(self.norm(x), [0, 0, 1, 2, 2, 1])
        c = F.pad(y, (-2, 3, 1, 0), mode="constant", value=-1.5)
        r = torch.relu(F.pad(y.exp(), (1, 1)) - 1.0)
        return h, c * c, r


def get_inputs():
    return [torch.randn(2, 5, 6, 8), torch.randn(3, 4, 7)]


def get_init_inputs():
    return []
