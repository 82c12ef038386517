import torch
import torch.nn as nn


class Model(nn.Module):
    """A grouped convolution (3 groups of 4 input and 5 output channels: an asymmetric,
    dilated, strided kernel with padding and bias), then a pointwise epilogue."""

    def __init__(self, in_channels, out_channels, groups):
        super().__init__()
        self.conv = nn.Conv2d(
            in_channels, out_channels, (3, 2), stride=(2, 1), padding=(2, 1),
            dilation=(2, 1), groups=groups,
        )

    def forward(self, x):
        return torch.tanh(self.conv(x)) * 1.5


batch_size = 2
in_channels, out_channels, groups = 12, 15, 3
height, width = 9, 7


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, groups]
