import torch
import torch.nn as nn


class Model(nn.Module):
    """One batch norm applied twice in a forward (its running statistics updated twice, in
    order) and a second one applied once."""

    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)
        self.other = nn.BatchNorm2d(channels, momentum=0.3)

    def forward(self, x):
        y = torch.relu(self.bn(x))
        z = self.other(y * 2.0)
        return self.bn(z + x)


batch_size = 4
channels = 8


def get_inputs():
    return [torch.randn(batch_size, channels, 6, 6)]


def get_init_inputs():
    return [channels]
