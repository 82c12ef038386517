"""Messages between the checker and an isolated candidate process: a JSON header and raw
tensor bytes, framed by lengths. Nothing received is unpickled or evaluated: the header is
parsed with `json`, tensors are rebuilt from their bytes with `torch.frombuffer` after
their dtype, shape and length are checked, so a hostile sender can only send wrong values
(which the checker then compares) or malformed frames (which raise `WireError`).

Frame: 8-byte little-endian header length, the header (UTF-8 JSON: `{"msg": {...},
"tensors": [{"dtype", "shape", "nbytes"}, ...]}`), then each tensor's bytes in order.
Values inside `msg` refer to tensors as `{"$t": index}`; tuples travel as lists."""

import json
import os
import select
import struct
import time

import torch

MAX_HEADER_BYTES = 16 << 20
# dtypes that may cross the wire (name -> torch dtype)
DTYPES = {str(d).removeprefix("torch."): d for d in (
    torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32,
    torch.int16, torch.int8, torch.uint8, torch.bool, torch.complex64, torch.complex128)}


class WireError(Exception):
    """A malformed or truncated frame, or a closed channel."""


class Deadline(Exception):
    """Nothing (or not all) arrived before the deadline."""


def _read_exact(fd, n, deadline=None):
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise Deadline()
        k = os.readv(fd, [view[got:]])
        if k == 0:
            raise WireError(f"channel closed after {got} of {n} bytes")
        got += k
    return buf


def _write_all(fd, data):
    view = memoryview(data).cast("B")
    while len(view):
        k = os.write(fd, view)
        view = view[k:]


def _encode(obj, tensors):
    if isinstance(obj, torch.Tensor):
        tensors.append(obj)
        return {"$t": len(tensors) - 1}
    if isinstance(obj, dict):
        return {str(k): _encode(v, tensors) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_encode(v, tensors) for v in obj]
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    return {"$repr": type(obj).__name__}


def _host_bytes(t):
    """A plain, contiguous CPU copy of `t`'s values as bytes (any subclass stripped)."""
    t = torch.Tensor.detach(t)
    if type(t) is not torch.Tensor:
        t = torch.Tensor.as_subclass(t, torch.Tensor)
    t = t.to("cpu").contiguous()
    if t.dtype not in DTYPES.values():
        raise WireError(f"dtype {t.dtype} cannot be sent")
    return t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""


def send(fd, msg):
    """Sends `msg` (JSON-like, tensors anywhere inside) on `fd`."""
    tensors = []
    body = _encode(msg, tensors)
    blobs = [_host_bytes(t) for t in tensors]
    meta = [{"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape),
             "nbytes": len(b)} for t, b in zip(tensors, blobs)]
    header = json.dumps({"msg": body, "tensors": meta}, allow_nan=True).encode()
    _write_all(fd, struct.pack("<Q", len(header)) + header)
    for b in blobs:
        if b:
            _write_all(fd, b)


def _decode(obj, tensors):
    if isinstance(obj, dict):
        if set(obj) == {"$t"}:
            i = obj["$t"]
            if not isinstance(i, int) or not 0 <= i < len(tensors):
                raise WireError(f"bad tensor reference {i!r}")
            return tensors[i]
        return {k: _decode(v, tensors) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_decode(v, tensors) for v in obj]
    return obj


def recv(fd, max_bytes=None, deadline=None):
    """Receives one message from `fd`; tensors come back as fresh CPU tensors owned by
    this process. `max_bytes` bounds the tensor bytes accepted; `deadline` (a
    `time.monotonic()` value) the wait (`Deadline` is raised past it)."""
    (n,) = struct.unpack("<Q", bytes(_read_exact(fd, 8, deadline)))
    if n > MAX_HEADER_BYTES:
        raise WireError(f"header of {n} bytes")
    try:
        header = json.loads(bytes(_read_exact(fd, n, deadline)).decode())
        meta = header["tensors"]
        body = header["msg"]
    except (ValueError, KeyError, TypeError) as e:
        raise WireError(f"unreadable header: {e}") from None
    if not isinstance(meta, list):
        raise WireError("unreadable header: tensors is not a list")
    total = 0
    tensors = []
    for m in meta:
        try:
            dtype = DTYPES[m["dtype"]]
            shape = [int(s) for s in m["shape"]]
            nbytes = int(m["nbytes"])
        except (KeyError, TypeError, ValueError):
            raise WireError(f"bad tensor description {m!r}") from None
        numel = 1
        for s in shape:
            if s < 0:
                raise WireError(f"negative size in {shape}")
            numel *= s
        size = torch.empty((), dtype=dtype).element_size()
        if numel * size != nbytes:
            raise WireError(f"tensor {shape} {dtype} announced {nbytes} bytes")
        total += nbytes
        if max_bytes is not None and total > max_bytes:
            raise WireError(f"more than {max_bytes} bytes of tensors")
        if nbytes == 0:
            tensors.append(torch.empty(shape, dtype=dtype))
            continue
        raw = _read_exact(fd, nbytes, deadline)
        tensors.append(torch.frombuffer(raw, dtype=torch.uint8).view(dtype).reshape(shape))
    return _decode(body, tensors)
