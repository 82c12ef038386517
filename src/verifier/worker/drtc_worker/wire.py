"""Messages between the checker and an isolated candidate process: a JSON header and raw
tensor bytes, framed by lengths. Nothing received is unpickled or evaluated: the header is
parsed with `json`, tensors are rebuilt from their bytes with `torch.frombuffer` after
their dtype, shape and length are checked, so a hostile sender can only send wrong values
(which the checker then compares) or malformed frames (which raise `WireError`).

Frame: 8-byte little-endian header length, the header (UTF-8 JSON: `{"msg": {...},
"tensors": [{"dtype", "shape", "nbytes"}, ...]}`), then each tensor's bytes in order.
Values inside `msg` refer to tensors as `{"$t": index}`; tuples travel as lists.

A channel may also have an `Arena` per direction: a shared memory file (memfd) the sender
writes tensors into, the header giving each one's offset (`"at"`) instead of sending its
bytes down the pipe (level-2 1's five trials, a 537 MB input and a 1.04 GB output each,
took 23.2 s through the pipe and 6.1 s through the arena on an H100:
bench/results/reward_breakdown_h100_326ef60.md). The receiver checks the
offset and length against the arena's size and copies the bytes out at once, so what the
other side writes later never reaches a tensor already received. One message with
tensors is in flight per direction at a time (the protocol is request and reply);
tensors that do not fit travel in the pipe as before."""

import fcntl
import json
import mmap
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


# each direction's arena, unless DRTC_WIRE_ARENA_MB says otherwise (0: pipes only); pages
# cost memory only once written, and the arena goes with the candidate's process
ARENA_BYTES = int(float(os.environ.get("DRTC_WIRE_ARENA_MB", "2048")) * (1 << 20))
_ALIGN = 64
PIPE_BYTES = 1 << 20


class Arena:
    """One direction's shared memory: written by the sender, read by the receiver."""

    def __init__(self, fd, size):
        self.fd = fd
        self.size = size
        self.mm = mmap.mmap(fd, size) if size else None

    @classmethod
    def create(cls, name, size=None):
        """A new arena of `size` bytes (default `ARENA_BYTES`), its size sealed where the
        kernel allows; None when shared memory files are not available or the size is 0."""
        size = ARENA_BYTES if size is None else size
        if size <= 0 or not hasattr(os, "memfd_create"):
            return None
        try:
            fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        except OSError:
            return None
        try:
            os.ftruncate(fd, size)
            try:
                fcntl.fcntl(fd, fcntl.F_ADD_SEALS,
                            fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
            except (OSError, AttributeError):
                pass  # defense in depth only: the reader checks every offset anyway
            return cls(fd, size)
        except OSError:
            os.close(fd)
            return None

    @classmethod
    def attach(cls, fd):
        """The arena behind an inherited file descriptor."""
        return cls(fd, os.fstat(fd).st_size)

    def bytes_at(self, offset, nbytes):
        return torch.frombuffer(self.mm, dtype=torch.uint8, count=nbytes, offset=offset)

    def close(self):
        try:
            if self.mm is not None:
                self.mm.close()
        except BufferError:
            pass  # a view still alive: the mapping goes with the process
        try:
            os.close(self.fd)
        except OSError:
            pass


def widen_pipe(fd):
    """Asks for a 1 MiB pipe buffer (fewer system calls per tensor); harmless if refused."""
    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (OSError, AttributeError):
        pass


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


def _plain(t):
    """`t` detached, any subclass stripped, of a dtype that may be sent."""
    t = torch.Tensor.detach(t)
    if type(t) is not torch.Tensor:
        t = torch.Tensor.as_subclass(t, torch.Tensor)
    if t.dtype not in DTYPES.values():
        raise WireError(f"dtype {t.dtype} cannot be sent")
    return t


def _host_bytes(t):
    """`t`'s values as a contiguous CPU byte array (no copy when `t` already is one)."""
    t = t.to("cpu").contiguous()
    return t.reshape(-1).view(torch.uint8).numpy() if t.numel() else b""


def send(fd, msg, arena=None):
    """Sends `msg` (JSON-like, tensors anywhere inside) on `fd`, tensors into `arena` while
    they fit."""
    tensors = []
    body = _encode(msg, tensors)
    meta = []
    blobs = []
    at = 0
    for t in tensors:
        t = _plain(t)
        nbytes = t.numel() * t.element_size()
        m = {"dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape),
             "nbytes": nbytes}
        if arena is not None and nbytes and at + nbytes <= arena.size:
            arena.bytes_at(at, nbytes).view(t.dtype).reshape(t.shape).copy_(t)
            m["at"] = at
            at += -(-nbytes // _ALIGN) * _ALIGN
            blobs.append(b"")
        else:
            blobs.append(_host_bytes(t))
        meta.append(m)
    header = json.dumps({"msg": body, "tensors": meta}, allow_nan=True).encode()
    _write_all(fd, struct.pack("<Q", len(header)) + header)
    for b in blobs:
        if len(b):
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


def recv(fd, max_bytes=None, deadline=None, arena=None):
    """Receives one message from `fd` (tensors placed in `arena` copied out of it); tensors
    come back as fresh CPU tensors owned by this process. `max_bytes` bounds the tensor
    bytes accepted; `deadline` (a `time.monotonic()` value) the wait (`Deadline` is raised
    past it)."""
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
        if "at" in m:
            at = m["at"]
            if arena is None or type(at) is not int or at < 0 or at + nbytes > arena.size:
                raise WireError(f"tensor at {at!r} ({nbytes} bytes) outside the arena")
            raw = arena.bytes_at(at, nbytes).clone()
        else:
            raw = torch.frombuffer(_read_exact(fd, nbytes, deadline), dtype=torch.uint8)
        tensors.append(raw.view(dtype).reshape(shape))
    return _decode(body, tensors)
