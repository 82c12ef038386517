import torch
import torch.nn as nn


class Model(nn.Module):
    """A convolution whose result is reduced over its channels twice: a softmax (a
    domain-shaped output, written channels-last) and a min with keepdim (one channel)."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        s = torch.softmax(y, dim=1) * 2.0
        m = torch.tanh(torch.min(y, dim=1, keepdim=True)[0])
        return s + m


batch_size = 2
in_channels = 3
out_channels = 12
height, width = 6, 5


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
