import torch
import torch.nn as nn


class Model(nn.Module):
    """Convolutions whose bias moves past a pooling into its epilogue: a padded max pool
    with a sigmoid after it, and an unpadded average pool in ceil mode (its last windows
    are partial: the divisor counts only the summed elements)."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv_a = nn.Conv2d(in_channels, out_channels, 3)
        self.conv_b = nn.Conv2d(in_channels, out_channels, 3)
        self.max_pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.avg_pool = nn.AvgPool2d(2, ceil_mode=True)

    def forward(self, x):
        a = torch.sigmoid(self.max_pool(self.conv_a(x)))
        b = self.avg_pool(self.conv_b(x))
        return a * b


batch_size = 2
in_channels = 3
out_channels = 16
height, width = 9, 9


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
