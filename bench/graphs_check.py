"""CUDA graphs of generated modules on a GPU, task by task: the cases where a replay would be
wrong if the key missed something, checked against the reference, and what a call costs
with and without graphs.

usage: python3 bench/graphs_check.py DRTC TASK.py [TASK.py ...] [--out FILE.jsonl]

For each task: `drtc compile TASK.py --device cuda --no-verify --cuda-graphs on`, then, with
the reference `Model` holding the same parameters:
  same_buffers  six calls refilling the same input buffers (capture, then replays): the
                largest relative error against the reference, what each call did, and
                whether earlier results stayed intact (outputs are fresh copies);
  state         the largest relative difference of the module's state (BatchNorm running
                statistics) from the reference's after those calls;
  new_buffers   a call on new input tensors (must capture again);
  moved_state   parameters and buffers moved to new storage, the old filled with NaN
                (must capture again; a replay on the old storage would read NaN);
  other_stream  a call on another stream (must capture again);
  user_capture  the module called inside the caller's own torch.cuda.graph capture (runs
                eagerly into it), then that graph replayed;
  grad_mode     a call with autograd on (parameters require grad);
  cost          microseconds per call of the module compiled with --cuda-graphs off and of
                the graphed one, back to back (one synchronize per 200 calls; 50 to 2000 calls, about half a second) and one call
                at a time, with the module's launch count and the cost rule's prediction.
One JSON line per task (stdout, and --out). A task whose module has no graphs says why.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

import torch


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def cuda_task(path):
    """A KernelBench task file's module and its reference `Model` on the GPU in eval mode
    (seed 0, as the verifier builds it)."""
    m = load(path, "task")
    torch.manual_seed(0)
    return m, m.Model(*m.get_init_inputs()).cuda().eval()


def rel(a, b):
    a, b = a.double(), b.double()
    return float((a - b).norm() / (b.norm() + 1e-6))


def first(out):
    return out[0] if isinstance(out, (list, tuple)) else out


def state_err(new, ref):
    worst = 0.0
    rs = ref.state_dict()
    for k, v in new.state_dict().items():
        if v.is_floating_point():
            worst = max(worst, rel(v, rs[k]))
        elif not torch.equal(v, rs[k]):
            worst = float("inf")
    return worst


def per_call_us(fn, calls, sync_each):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(calls):
        fn()
        if sync_each or (i + 1) % 200 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


def check(drtc, task, work):
    name = os.path.splitext(os.path.basename(task))[0]
    facts = {"task": name}
    out = os.path.join(work, f"{name}_graphs.py")
    report = os.path.join(work, f"{name}_graphs.json")
    p = subprocess.run([drtc, "compile", task, "-o", out, "--device", "cuda", "--no-verify",
                        "--cuda-graphs", "on", "--report", report],
                       capture_output=True, text=True)
    if p.returncode != 0:
        facts["error"] = "compile failed: " + " | ".join(p.stderr.strip().splitlines()[-3:])
        return facts
    with open(report) as f:
        facts["decision"] = json.load(f).get("cuda_graphs")
    m = load(out, f"graphs_check_{name}")
    G = getattr(m, "_DRTC_GRAPHS", None)
    if G is None:
        facts["error"] = "the module has no graphs: " + str((facts["decision"] or {}).get("reason"))
        return facts
    torch.manual_seed(0)
    init = list(m.get_init_inputs()) if hasattr(m, "get_init_inputs") else []
    ref = m.Model(*init).cuda()
    new = m.ModelNew(*init).cuda()
    new.load_state_dict(ref.state_dict())

    def fresh():
        return [x.cuda() if isinstance(x, torch.Tensor) else x for x in m.get_inputs()]

    inputs = fresh()
    with torch.no_grad():
        errs, lasts, kept = [], [], []
        for _ in range(6):
            for b, v in zip(inputs, m.get_inputs()):
                if isinstance(b, torch.Tensor):
                    b.copy_(v)
            r, o = first(ref(*inputs)), first(new(*inputs))
            lasts.append(G.stats["last"])
            errs.append(rel(o, r))
            kept.append((o.clone(), o))
        intact = all(torch.equal(c, o) for c, o in kept)
        facts["same_buffers"] = {"calls": lasts, "max_rel_err": max(errs),
                                 "earlier_results_intact": intact}
        facts["state"] = {"max_rel_err": state_err(new, ref)}

        def one(label, run_inputs):
            r, o = first(ref(*run_inputs)), first(new(*run_inputs))
            facts[label] = {"call": G.stats["last"], "rel_err": rel(o, r),
                            "state_err": state_err(new, ref)}

        one("new_buffers", fresh())
        old = []
        for t in list(new.parameters()) + list(new.buffers()):
            prev = t.data
            t.data = prev.clone()
            if prev.is_floating_point():
                prev.fill_(float("nan"))
            old.append(prev)
        one("moved_state", inputs)
        del old
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            one("other_stream", inputs)
        torch.cuda.current_stream().wait_stream(side)
        try:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                static = first(new(*inputs))
            call = G.stats["last"]
            g.replay()
            r = first(ref(*inputs))
            facts["user_capture"] = {"call": call, "rel_err": rel(static, r),
                                     "state_err": state_err(new, ref)}
        except Exception as e:  # noqa: BLE001 - a fact for the report
            facts["user_capture"] = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
            new.load_state_dict(ref.state_dict())
    o = first(new(*inputs))
    r = first(ref(*inputs))
    facts["grad_mode"] = {"call": G.stats["last"], "requires_grad": bool(o.requires_grad),
                          "rel_err": rel(o.detach(), r.detach())}
    # the same program compiled with --cuda-graphs off, for the eager cost
    off_path = os.path.join(work, f"{name}_eager.py")
    subprocess.run([drtc, "compile", task, "-o", off_path, "--device", "cuda", "--no-verify",
                    "--cuda-graphs", "off"], capture_output=True, text=True, check=True)
    m_off = load(off_path, f"graphs_check_{name}_eager")
    eager = m_off.ModelNew(*init).cuda()
    eager.load_state_dict(new.state_dict())
    with torch.no_grad():
        graphed = lambda: new(*inputs)  # noqa: E731
        plain = lambda: eager(*inputs)  # noqa: E731
        graphed()
        plain()
        # about half a second per measurement, 50 to 2000 calls
        one_us = per_call_us(plain, 5, True)
        calls = int(max(50, min(2000, 0.5e6 / max(one_us, 1.0))))
        g_pipe = per_call_us(graphed, calls, False)
        e_pipe = per_call_us(plain, calls, False)
        g_sync = per_call_us(graphed, max(10, calls // 4), True)
        e_sync = per_call_us(plain, max(10, calls // 4), True)
    d = facts["decision"] or {}
    facts["cost"] = {"calls": calls, "eager_us": e_pipe, "graphed_us": g_pipe, "eager_synced_us": e_sync,
                     "graphed_synced_us": g_sync, "saved_us": e_pipe - g_pipe,
                     "launches": d.get("launches"), "rule_saved_us": d.get("saved_us"),
                     "rule_added_us": d.get("added_us"),
                     "saved_per_launch_us": (e_pipe - g_pipe) / d["launches"]
                     if d.get("launches") else None}
    facts["stats"] = dict(G.stats)
    return facts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("drtc")
    ap.add_argument("tasks", nargs="+")
    ap.add_argument("--out")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="drtc-graphs-check-")
    out = open(a.out, "a") if a.out else None
    for t in a.tasks:
        try:
            facts = check(a.drtc, t, work)
        except Exception as e:  # noqa: BLE001 - one task's failure is a row
            facts = {"task": os.path.basename(t), "error": f"{type(e).__name__}: {str(e)[:300]}"}
        line = json.dumps(facts)
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()


if __name__ == "__main__":
    main()
