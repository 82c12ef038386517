# A causal mask as model code builds it: a bool `ones` (a `full` of True in the export),
# `tril`, `~mask` (`bitwise_not` of a bool tensor) and `masked_fill` with -inf, then a
# softmax; and a `triu` below the diagonal of a computed value.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        t = x.size(-1)
        mask = torch.tril(torch.ones(t, t, device=x.device, dtype=bool), diagonal=0)
        s = torch.softmax(x.masked_fill(~mask, -torch.inf), dim=-1)
        return s, torch.triu(torch.relu(y), diagonal=-1)


def get_inputs():
    return [torch.randn(2, 3, 6, 6), torch.randn(5, 7)]


def get_init_inputs():
    return []
