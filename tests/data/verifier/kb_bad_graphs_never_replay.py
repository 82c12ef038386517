# Declares CUDA graphs but never replays one: whatever its results, its graphs were not
# verified, and the verifier says so.
import torch
import torch.nn as nn
import torch.nn.functional as F


def compute(x, w, b, bn_w, bn_b, running_mean, running_var, num_batches):
    y = F.linear(x, w, b)
    y = F.batch_norm(y, running_mean, running_var, bn_w, bn_b, training=True, momentum=0.1,
                     eps=1e-5)
    num_batches.add_(1)
    return (torch.relu(y),)


class Graphs:
    """Stands in for a CUDA-graph cache on CPU: a "capture" runs the call and keeps the
    storage of every argument (detached aliases, as a graph keeps addresses); a "replay"
    recomputes from that storage, reading and writing where the capture's tensors were."""

    def __init__(self):
        self.graphs = {}
        self.stats = {"enabled": True, "reason": "test", "captures": 0, "replays": 0,
                      "eager": 0, "evictions": 0, "fallback": None, "eager_reason": None,
                      "last": None}

    def reset(self):
        self.graphs.clear()

    def call(self, args):
        k = key(args)
        if REPLAYS and k in self.graphs:
            self.stats["replays"] += 1
            self.stats["last"] = "replay"
            return self.graphs[k]()
        captured = [a.detach() for a in args]
        self.graphs[k] = lambda: compute(*captured)
        self.stats["captures"] += 1
        self.stats["last"] = "capture"
        return compute(*args)


_DRTC_GRAPHS = Graphs()


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features)

    def forward(self, x):
        bn = self.bn
        return _DRTC_GRAPHS.call([x, self.linear.weight, self.linear.bias, bn.weight, bn.bias,
                                  bn.running_mean, bn.running_var, bn.num_batches_tracked])[0]


REPLAYS = False


def key(args):
    return tuple((a.data_ptr(), tuple(a.shape), a.stride()) for a in args)
