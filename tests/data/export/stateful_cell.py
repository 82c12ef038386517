# A recurrent cell whose state is plain tensor attributes of the module (made in __init__,
# neither parameters nor buffers, so not in state_dict): forward reads them, assigns a new
# `self.hidden` and counts its calls in place in `self.steps`. Each call depends on the one
# before, so a module that did not carry the state over would give other outputs from the
# second call on (and other state after the first).
import torch
import torch.nn as nn

batch_size = 4
input_size = 6
hidden_size = 8
output_size = 5


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.hidden = torch.randn((batch_size, hidden_size))
        self.steps = torch.zeros(())
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        self.hidden = self.hidden.to(x.device)
        combined = torch.cat((x, self.hidden), dim=1)
        self.hidden = torch.tanh(self.i2h(combined))
        self.steps.add_(1.0)
        return self.h2o(self.hidden) * self.steps


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
