import torch
import torch.nn as nn


class Model(nn.Module):
    """Convolution, ReLU, a 2x2 max pool and an average pool between convolutions: the
    poolings continue the channels-last layout (VGG's blocks)."""

    def __init__(self, in_channels, mid_channels, out_channels):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, mid_channels, 3, padding=1)
        self.conv2 = nn.Conv2d(mid_channels, out_channels, 3, padding=1)
        self.pool = nn.MaxPool2d(2, 2)
        self.avg = nn.AvgPool2d(3, stride=1, padding=1)

    def forward(self, x):
        x = self.pool(torch.relu(self.conv1(x)))
        x = self.avg(torch.relu(self.conv2(x)))
        return torch.relu(x) * 2.0


batch_size = 2
in_channels = 3
mid_channels = 16
out_channels = 8
height, width = 10, 7


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, mid_channels, out_channels]
