# chunk, split (an int and a list of sizes), masked_fill (a number and a 0-dim tensor,
# masks that broadcast) and where with a Python number, as ordinary model code spells them.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        a, b, c = x.chunk(3, dim=1)  # 7 columns: 3, 3, 1
        p, q, r = torch.chunk(y, 4, -1)  # 5 columns: 2, 2, 1 (three chunks, not four)
        s1, s2 = torch.split(x, 4, dim=1)  # 4, 3
        t1, t2, t3 = x.split([2, 4, 1], 1)
        f1 = b.masked_fill(a > 0, -1.5)
        f2 = torch.masked_fill(c, p > 0, r.mean())  # [4, 1] input, [4, 2] mask
        f3 = t1.masked_fill(s1[0, :2] < 0, 3)  # a [2] mask over [4, 2]
        w = torch.where(s2 > 0.5, s2, 0.25)
        return f1, f2, f3 * q, w, t2 + s1, t3 - r


def get_inputs():
    return [torch.randn(4, 7), torch.randn(4, 5)]


def get_init_inputs():
    return []
