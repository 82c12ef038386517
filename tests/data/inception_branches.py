"""Inception-like branches (tests/concat_in_place.rs): three convolutions with bias, one after
a max pool, and the input, concatenated along the channels."""
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.b1 = nn.Conv2d(8, 16, 1)
        self.b2 = nn.Conv2d(8, 12, 3, padding=1)
        self.pool = nn.MaxPool2d(3, stride=1, padding=1)
        self.b3 = nn.Conv2d(8, 8, 1)

    def forward(self, x):
        return torch.cat([self.b1(x), self.b2(x), self.b3(self.pool(x)), x], 1)

def get_inputs():
    return [torch.randn(2, 8, 9, 9)]

def get_init_inputs():
    return []
