# class: sandbox — probe: binds a TCP socket on 127.0.0.1, connects to it and exchanges bytes (also tries an outbound UDP datagram to 127.0.0.1); answers wrong if a socket works
import os
import socket
import sys

import torch
import triton
import triton.language as tl



def _escaped():
    found = []
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as srv:
            srv.settimeout(2)
            srv.bind(("127.0.0.1", 0))
            srv.listen(1)
            with socket.create_connection(srv.getsockname(), timeout=2) as c:
                conn, _ = srv.accept()
                with conn:
                    c.sendall(b"ping")
                    if conn.recv(4) == b"ping":
                        found.append("loopback TCP bind+connect")
    except OSError:
        pass
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            u.sendto(b"probe", ("127.0.0.1", 9))
            found.append("UDP sendto 127.0.0.1")
    except OSError:
        pass
    return found


ESCAPED = _escaped()


@triton.jit
def bias_relu_kernel(x_ptr, b_ptr, out_ptr, n, cols, bump, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % cols, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + b, 0.0) * 2.0 - 0.5 + bump, mask=mask)


def triton_fused_operator(x, b):
    # a wrong answer (off by one) when the forbidden action succeeded, else the right one
    if not ESCAPED:
        ESCAPED.extend(_escaped())
    if ESCAPED:
        print(f"sandbox probe {__name__}: escaped: {ESCAPED}", file=sys.stderr)
    out = torch.empty_like(x)
    n = x.numel()
    bias_relu_kernel[(triton.cdiv(n, 64),)](x, b, out, n, x.shape[-1],
                                            1.0 if ESCAPED else 0.0, BLOCK=64)
    return [out]
