import torch
import torch.nn as nn


class Model(nn.Module):
    """A transposed 3-D convolution, then a pointwise epilogue (channels-last 3-D)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride)

    def forward(self, x):
        x = self.conv_transpose(x)
        return torch.sigmoid(x) - 0.25


batch_size = 2
in_channels = 4
out_channels = 8
depth, height, width = 3, 4, 3
kernel_size = 2
stride = 2


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride]
