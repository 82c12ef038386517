"""Which step of the export server's start (`frontends/src/export/server.py`) leaves the
processes it forks unable to use CUDA: the steps replayed in one process, a forked child
initializing CUDA after each. Run from the repository root on a GPU machine:

    python3 bench/export_fork_probe.py

Prints `STEP: ok` or `STEP: BROKEN` (with the child's error) per step."""
import os, sys, importlib.util
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")

def probe(label):
    pid = os.fork()
    if pid == 0:
        st = 0
        try:
            import torch
            torch.cuda.init()
            torch.empty(1, device="cuda")
        except BaseException as e:
            print(f"  child after {label}: FAIL {type(e).__name__}: {str(e)[:200]}", flush=True)
            st = 1
        os._exit(st)
    _, s = os.waitpid(pid, 0)
    print(f"{label}: {'ok' if s == 0 else 'BROKEN'}", flush=True)

probe("nothing imported")
import torch
probe("import torch")
sys.path.insert(0, "frontends/src/export")
import server
probe("import server")
spec = importlib.util.spec_from_file_location("drtc_export_helper", "frontends/src/export/helper.py")
helper = importlib.util.module_from_spec(spec); spec.loader.exec_module(helper)
probe("load helper")
import torch._dynamo
probe("import torch._dynamo")
import torch.export
probe("import torch.export")
import triton
probe("import triton")
server.warm_up(torch)
probe("warm_up")
print("is_available:", torch.cuda.is_available(), "initialized:", torch.cuda.is_initialized())
