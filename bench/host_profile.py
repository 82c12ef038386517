"""Host-side cost of a drtc-generated KernelBench module's forward on a GPU: cProfile of calls
with a device sync after each (reference and drtc), and the cost of the torch calls the guards
make. `python3 bench/host_profile.py gen.py [highest|high]` (the float32 matmul precision)."""
import cProfile, importlib.util, pstats, sys, time, torch
path = sys.argv[1]
spec = importlib.util.spec_from_file_location("gen", path); m = importlib.util.module_from_spec(spec)
sys.modules["gen"] = m; spec.loader.exec_module(m)
torch.manual_seed(0)
ins = [x.cuda() if isinstance(x, torch.Tensor) else x for x in m.get_inputs()]
torch.set_float32_matmul_precision(sys.argv[2] if len(sys.argv) > 2 else "highest")
ref = m.Model(*m.get_init_inputs()).cuda(); new = m.ModelNew(*m.get_init_inputs()).cuda()
def loop(f, n):
    for _ in range(n):
        f(); torch.cuda.synchronize()
def per_call(f, n=20000):
    t0 = time.perf_counter()
    for _ in range(n): f()
    return (time.perf_counter() - t0) / n * 1e6
with torch.no_grad():
    for name, mod in (("reference", ref), ("drtc", new)):
        loop(lambda: mod(*ins), 20)
        t0 = time.perf_counter(); loop(lambda: mod(*ins), 200); print(name, "wall per call us", (time.perf_counter() - t0) / 200 * 1e6)
        pr = cProfile.Profile(); pr.enable(); loop(lambda: mod(*ins), 200); pr.disable()
        print("==", name); pstats.Stats(pr).sort_stats("tottime").print_stats(12)
    print("get_float32_matmul_precision us", per_call(torch.get_float32_matmul_precision))
    print("current_device us", per_call(torch.cuda.current_device))
    a = ins[0]
    print("get_device us", per_call(a.get_device), "device us", per_call(lambda: a.device), "is_contiguous us", per_call(a.is_contiguous))
    print("_drtc_matches us", per_call(lambda: m._drtc_matches(ins)))
    print("empty us", per_call(lambda: torch.empty(4, device="cuda")))
