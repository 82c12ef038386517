import torch
import torch.nn as nn


class Model(nn.Module):
    """A grouped, strided and dilated 1-D transposed convolution without a bias (2 groups of
    3 input and 4 output channels), then ReLU."""

    def __init__(self, in_channels, out_channels, groups):
        super().__init__()
        self.conv = nn.ConvTranspose1d(
            in_channels, out_channels, 3, stride=2, padding=1, dilation=2, groups=groups,
            bias=False,
        )

    def forward(self, x):
        return torch.relu(self.conv(x))


batch_size = 3
in_channels, out_channels, groups = 6, 8, 2
length = 11


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, groups]
