"""The isolated candidate's channel (`drtc_worker/wire.py`) moves tensors through its
shared-memory arena exactly as through the pipe: every dtype, empty, 0-dim and
non-contiguous tensors, a tensor that does not fit (it goes down the pipe), the pipe alone;
a received tensor is a copy (the sender's later writes to the arena never reach it); and a
frame that points outside the arena, or at an arena the receiver does not have, is refused.
Run by tests/verifier_suite.rs."""

import json
import os
import struct
import sys

import torch

sys.path.insert(0, sys.argv[1])  # src/verifier/worker
from drtc_worker import wire  # noqa: E402


def roundtrip(msg, arena):
    r, w = os.pipe()
    wire.widen_pipe(w)
    try:
        wire.send(w, msg, arena)
        return wire.recv(r, arena=arena)
    finally:
        os.close(r)
        os.close(w)


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)


def main():
    arena = wire.Arena.create("drtc-check", 1 << 14)
    assert arena is not None, "memfd_create is available on Linux"
    g = torch.Generator().manual_seed(0)
    tensors = [
        torch.randn(7, 5, generator=g),
        torch.randn(4, 6, generator=g).t(),  # not contiguous
        torch.randn(3, dtype=torch.float64, generator=g),
        torch.tensor(2.5),  # 0-dim
        torch.empty(0, 3),
        torch.randint(-9, 9, (11,), generator=g, dtype=torch.int64),
        torch.randint(0, 2, (9,), generator=g).bool(),
        torch.randn(5, generator=g).half(),
        torch.randn(5, generator=g).bfloat16(),
        torch.randn(3, dtype=torch.complex64, generator=g),
        torch.randn(70, 70, generator=g),  # 19.6 KB: more than the arena, down the pipe
    ]
    msg = {"op": "call", "inputs": tensors, "nested": [1, (2.0, None), {"x": tensors[0]}]}
    checked = 0
    for a in (arena, None):
        got = roundtrip(msg, a)
        assert got["op"] == "call" and got["nested"][:2] == [1, [2.0, None]]
        assert same(got["nested"][2]["x"], tensors[0])
        for want, t in zip(tensors, got["inputs"]):
            assert same(want, t), (want, t)
            checked += 1
    # what arrived through the arena is a copy: the sender's next writes do not reach it
    got = roundtrip({"t": torch.ones(8)}, arena)["t"]
    arena.bytes_at(0, 32).fill_(0)
    assert torch.equal(got, torch.ones(8))
    # frames pointing outside the arena, or at none, are refused
    refused = 0
    for at, use in ((arena.size - 16, arena), (-64, arena), ("0", arena), (0, None)):
        header = json.dumps({"msg": {"t": {"$t": 0}}, "tensors": [
            {"dtype": "float32", "shape": [8], "nbytes": 32, "at": at}]}).encode()
        r, w = os.pipe()
        os.write(w, struct.pack("<Q", len(header)) + header)
        try:
            wire.recv(r, arena=use)
        except wire.WireError:
            refused += 1
        finally:
            os.close(r)
            os.close(w)
    assert refused == 4, refused
    arena.close()
    print(f"{checked} tensors round-trip, {refused} bad frames refused")


if __name__ == "__main__":
    main()
