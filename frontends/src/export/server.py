"""drtc export server: runs the export helper (`helper.py`) for drtc commands without
paying Python's and torch's start-up, and torch.export's first-use initialization, on
every program.

    python server.py --socket PATH --helper HELPER.py [--idle SECONDS]

It imports torch and the helper, exports a tiny model once on the meta device (torch.export's
lazy imports and caches), then listens on the Unix socket `PATH`. Each connection carries
one JSON line, `{"op": "export", "program": P, "out": O, "input_types": T, "timeout_s": S}`
(also `{"op": "status"}` and `{"op": "stop"}`), and gets one JSON line back. An export runs
in forked processes, so nothing the program does (its module code, patches of torch)
outlives it: a child supervises a grandchild that runs the helper's `main` on `P`, which
writes the graph or the failure to `O` as a standalone helper process would, its stderr to
`O + ".stderr"`; the child kills it after `S` seconds and answers how it ended (`exit`,
`signal` or `timed_out`), or `{"reply": "refused"}` where a forked process could not use
CUDA (a check at start; the client then runs the helper itself). The parent never runs a
tensor computation (the warm-up is on the meta device), so the children may use torch's
thread pools.

It exits after `--idle` seconds without a connection (default 600), on `stop`, or when its
socket file is removed."""

import json
import os
import signal
import socket
import sys
import time
import importlib.util


def arg(flag, default=None):
    args = sys.argv[1:]
    if flag in args:
        return args[args.index(flag) + 1]
    return default


def load_helper(path):
    spec = importlib.util.spec_from_file_location("drtc_export_helper", path)
    helper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helper)
    return helper


def warm_up(torch):
    """torch.export's imports, and where no GPU is visible one export of a small module on
    the meta device (its caches), ready before the first fork. Where a GPU is visible the
    export is left out: even with `torch.cuda.is_available` patched off it initialized
    CUDA in this process on an H100 machine (a forked child's `torch.cuda.init()` failed
    with "initialization error" after it, not after the imports), and every export would
    be refused; each fork pays torch.export's first use instead."""
    import torch._dynamo  # noqa: F401
    import torch.export  # noqa: F401

    if torch.cuda.device_count() > 0:  # through NVML: does not initialize CUDA
        return

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            return torch.softmax(self.lin(x).relu(), dim=-1).sum(0)

    with torch.device("meta"):
        model = Tiny()
        x = torch.empty(2, 4)
    # torch.export saves and restores CUDA's random state where CUDA is available, which
    # initializes CUDA; a process forked from one that has initialized CUDA cannot use it
    # ("Cannot re-initialize CUDA in forked subprocess"), so the warm-up sees no CUDA
    available = torch.cuda.is_available
    torch.cuda.is_available = lambda: False
    try:
        torch.export.export(model, (x,)).run_decompositions()
    except Exception:
        pass  # only a warm-up: the real exports report their own failures
    finally:
        torch.cuda.is_available = available


def fork_safe(torch):
    """None when a process forked from this one can use CUDA, else why not: a child tries
    (it initializes CUDA where a GPU is visible, and exits)."""
    pid = os.fork()
    if pid == 0:
        status = 0
        try:
            if torch.cuda.is_available():
                torch.cuda.init()
        except BaseException as e:  # noqa: BLE001 - the answer is the exit status
            print(f"export server: a forked process cannot use CUDA: {e}", file=sys.stderr)
            status = 1
        sys.stderr.flush()
        os._exit(status)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        return "a process forked from the export server cannot use CUDA (see its log)"
    return None


def worker(helper, req):
    """In the grandchild: the helper's main on the request's program; exits with its
    status."""
    out = req["out"]
    err = os.open(out + ".stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(err, 2)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    argv = ["helper", req["program"], out]
    if req.get("input_types") is not None:
        argv += ["--input-types", json.dumps(req["input_types"])]
    sys.argv = argv
    status = 0
    try:
        helper.main()
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else 1
    except BaseException:  # noqa: BLE001 - reported through stderr and the status
        import traceback

        traceback.print_exc()
        status = 1
    sys.stderr.flush()
    os._exit(status)


def supervise(helper, req, conn):
    """In the child: runs the export in a grandchild, ends it after the request's
    `timeout_s`, answers with how it ended, and exits."""
    reply = {"reply": "exported"}
    try:
        pid = os.fork()
        if pid == 0:
            conn.close()
            worker(helper, req)
        deadline = time.time() + float(req.get("timeout_s", 600))
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.time() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                reply["timed_out"] = True
                status = None
                break
            time.sleep(0.02)
        if status is not None:
            if os.WIFEXITED(status):
                reply["exit"] = os.WEXITSTATUS(status)
            elif os.WIFSIGNALED(status):
                reply["signal"] = os.WTERMSIG(status)
        conn.sendall((json.dumps(reply) + "\n").encode())
    finally:
        os._exit(0)


def read_line(conn):
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.decode()


def main():
    path = arg("--socket")
    helper_path = arg("--helper")
    idle = float(arg("--idle", "600"))
    if not path or not helper_path:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    # torch.cuda.is_available() asks the CUDA runtime for the device count, which leaves
    # every process forked afterwards unable to use CUDA; asking NVML does not
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    import torch

    helper = load_helper(helper_path)
    warm_up(torch)
    refused = fork_safe(torch)
    if refused:
        print(f"export server: refusing exports: {refused}", file=sys.stderr)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    os.chmod(path, 0o600)
    sock.listen(64)
    sock.settimeout(0.5)
    started = last = time.time()
    exports = 0
    children = set()
    while True:
        for pid in list(children):
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                children.discard(pid)
        if children:
            last = time.time()
        if not os.path.exists(path) or (time.time() - last > idle and not children):
            break
        try:
            conn, _ = sock.accept()
        except socket.timeout:
            continue
        last = time.time()
        conn.settimeout(None)
        try:
            req = json.loads(read_line(conn) or "{}")
        except ValueError:
            conn.close()
            continue
        op = req.get("op")
        if op == "export" and refused:
            # the client runs the helper in a process of its own
            conn.sendall((json.dumps({"reply": "refused", "message": refused}) + "\n").encode())
            conn.close()
            continue
        if op == "export":
            pid = os.fork()
            if pid == 0:
                sock.close()
                supervise(helper, req, conn)
            children.add(pid)
            exports += 1
            conn.close()
            continue
        if op == "status":
            reply = {
                "reply": "status",
                "pid": os.getpid(),
                "exports": exports,
                "running": len(children),
                "uptime_s": time.time() - started,
                "idle_s": time.time() - last,
                "idle_limit_s": idle,
                "refusing": refused,
            }
        elif op == "stop":
            reply = {"reply": "stopping"}
        else:
            reply = {"reply": "error", "message": f"unknown op {op!r}"}
        conn.sendall((json.dumps(reply) + "\n").encode())
        conn.close()
        if op == "stop":
            break
    sock.close()
    for pid in children:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass
    try:
        os.unlink(path)
    except OSError:
        pass


if __name__ == "__main__":
    main()
