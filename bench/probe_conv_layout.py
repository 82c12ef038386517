# Probe (issue 10): does channels-last / bias-less cuDNN conv stay within allclose(1e-4) of the
# NCHW reference at PyTorch defaults, and what do layout and CUDA graphs buy on each conv task?
import importlib.util, json, os, sys, glob, time, torch
out = open(os.path.join(os.environ.get("OUT", "."), "probe.jsonl"), "w")
def load(p):
    s = importlib.util.spec_from_file_location("m", p); m = importlib.util.module_from_spec(s); s.loader.exec_module(m); return m
def t(fn, n=20):
    for _ in range(3): fn()
    torch.cuda.synchronize(); es=[]
    for _ in range(n):
        a=torch.cuda.Event(enable_timing=True); b=torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize(); es.append(a.elapsed_time(b))
    es.sort(); return es[len(es)//2]
for p in sorted(glob.glob(sys.argv[1] + "/*.py")):
    src = open(p).read()
    if "Conv" not in src: continue
    name = os.path.basename(p)[:-3]; r = {"task": name}
    try:
        m = load(p); torch.manual_seed(0)
        model = m.Model(*m.get_init_inputs()).cuda().eval()
        torch.manual_seed(1); xs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in m.get_inputs()]
        with torch.no_grad():
            ref = model(*xs)
            mcl = model.to(memory_format=torch.channels_last) if xs[0].dim()==4 else model.to(memory_format=torch.channels_last_3d)
            fmt = torch.channels_last if xs[0].dim()==4 else torch.channels_last_3d
            xcl = [x.contiguous(memory_format=fmt) if isinstance(x, torch.Tensor) and x.dim()==xs[0].dim() else x for x in xs]
            cl = mcl(*xcl)
            d = (cl - ref).abs(); r["cl_allclose_1e-4"] = bool(torch.allclose(cl, ref, atol=1e-4, rtol=1e-4))
            r["cl_max_abs"] = float(d.max()); r["ref_max"] = float(ref.abs().max())
            model = model.to(memory_format=torch.contiguous_format)
            r["eager_nchw_ms"] = t(lambda: model(*xs))
            mcl = model.to(memory_format=fmt)
            r["eager_cl_ms"] = t(lambda: mcl(*xcl))
            model = model.to(memory_format=torch.contiguous_format)
            # CUDA graph of the eager forward, replay + clone
            s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(2): model(*xs)
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g): y = model(*xs)
            g.replay(); torch.cuda.synchronize()
            r["graph_exact"] = bool(torch.equal(y, ref))
            r["graph_replay_clone_ms"] = t(lambda: (g.replay(), y.clone()))
            r["graph_replay_ms"] = t(lambda: g.replay())
    except Exception as e:
        r["error"] = repr(e)[:300]
    out.write(json.dumps(r) + "\n"); out.flush(); print(json.dumps(r), flush=True)
