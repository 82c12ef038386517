"""Writes the variant files for `bench/kernel_variant_probe.py` behind
`bench/results/level1_store_bound_long_rows_probe_h100_c810396.txt`: launch configurations,
TMA stores and persistent grids of the store-bound products (level-1 9, 7), and persistent
rows and a backwards last pass of the long-row two-pass reduction (38). Run in a folder
holding the modules `g9.py`, `g7.py`, `g38.py` (`drtc compile <task> --device cuda
--search=off --no-verify -o gN.py`); the edits match those modules' text (a module of
another build may not contain them: the probe then reports the variant not applicable)."""
import json
import os
import re

def gemm(path, bk):
    src = open(path).read()
    launch = re.search(r"BLOCK_M=128, BLOCK_N=128, BLOCK_K=%d, GROUP_M=8, PERSISTENT=0, num_warps=8\)" % bk, src).group(0)
    store = re.search(r"        tl\.store\(out0 .*\n", src).group(0)
    out = []
    def cfg(name, bm, bn, w, extra=(), stages=None, progs=None):
        tiles = (32768 // bm) * (32768 // bn)
        p = progs or tiles
        st = f", num_stages={stages}" if stages else ""
        rep = [[launch, f"BLOCK_M={bm}, BLOCK_N={bn}, BLOCK_K={bk}, GROUP_M=8, PERSISTENT=0, num_warps={w}{st})"],
               ["[(65536,)]", f"[({p},)]"], ["NUM_PROGS=65536", f"NUM_PROGS={p}"]]
        out.append({"name": name, "replace": rep + list(extra)})
    tma = [store, "        o_desc = tl.make_tensor_descriptor(out0, shape=[32768, 32768], strides=[32768, 1], block_shape=[BLOCK_M, BLOCK_N])\n        o_desc.store([pm * BLOCK_M, pn * BLOCK_N], acc)\n"]
    ieee = ['input_precision="tf32x3"', 'input_precision="ieee"']
    cfg("128x128 w4", 128, 128, 4)
    cfg("64x128 w4", 64, 128, 4)
    cfg("128x64 w4", 128, 64, 4)
    cfg("64x64 w4", 64, 64, 4)
    cfg("64x256 w4", 64, 256, 4)
    cfg("128x256 w8", 128, 256, 8)
    cfg("128x128 w8 TMA store", 128, 128, 8, [tma])
    cfg("128x128 w4 TMA store", 128, 128, 4, [tma])
    cfg("64x128 w4 TMA store", 64, 128, 4, [tma])
    cfg("128x128 w8 TMA store persistent 264", 128, 128, 8, [tma], progs=264)
    cfg("128x128 w4 TMA store persistent 528", 128, 128, 4, [tma], progs=528)
    cfg("64x128 w4 TMA store persistent 528", 64, 128, 4, [tma], progs=528)
    cfg("128x128 w8 ieee", 128, 128, 8, [ieee])
    cfg("64x128 w4 ieee", 64, 128, 4, [ieee])
    return out

def rows(path):
    src = open(path).read()
    k0 = src.index("@triton.jit\ndef drtc_k0_reduction")
    k1 = src.index("\n\n\n", k0)
    kern = src[k0:k1]
    launch = re.search(r"drtc_k0_reduction\[\(16384,\)\]\(.*BLOCK_R=2, BLOCK_C=4096, num_warps=16\)", src).group(0)
    second = "    t3 = t2 / 65535.0\n    for cstart in range(0, 65535, BLOCK_C):\n"
    assert second in kern
    rev = "    t3 = t2 / 65535.0\n    for cstart0 in range(0, 65535, BLOCK_C):\n        cstart = (65535 - 1) // BLOCK_C * BLOCK_C - cstart0\n"
    def launch_with(grid, br, bc, w):
        return launch.replace("[(16384,)]", f"[({grid},)]").replace("BLOCK_R=2, BLOCK_C=4096, num_warps=16", f"BLOCK_R={br}, BLOCK_C={bc}, num_warps={w}")
    def persistent(k):
        lines = k.split("\n")
        head, body = lines[:4], lines[4:]  # decorator, def, two comments
        rowline = "    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]"
        assert body[0] == rowline, body[0]
        new = head + ["    for rb in range(tl.program_id(0), tl.cdiv(32768, BLOCK_R), tl.num_programs(0)):",
                      "        rows = rb * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]"] + ["    " + l if l else l for l in body[1:]]
        return "\n".join(new)
    out = []
    out.append({"name": "R1 C4096 w16", "replace": [[launch, launch_with(32768, 1, 4096, 16)]]})
    out.append({"name": "R1 C4096 w16 reversed", "replace": [[launch, launch_with(32768, 1, 4096, 16)], [second, rev]]})
    out.append({"name": "R2 reversed", "replace": [[second, rev]]})
    kr = kern.replace(second, rev)
    for grid, w, bc in [(132, 16, 4096), (264, 16, 4096), (264, 8, 2048), (396, 8, 2048), (528, 8, 2048), (528, 4, 1024), (132, 32, 4096)]:
        out.append({"name": f"persistent {grid} R1 C{bc} w{w} reversed", "replace": [[kern, persistent(kr)], [launch, launch_with(grid, 1, bc, w)]]})
    out.append({"name": "persistent 264 R1 C4096 w16 forward", "replace": [[kern, persistent(kern)], [launch, launch_with(264, 1, 4096, 16)]]})
    return out

def evictions(path):
    """Eviction policies and tiles on the module of the build with the backwards last pass
    (`g38n.py`): its two loads are the same text, told apart by the lines before them."""
    src = open(path).read()
    lines = src.split("\n")
    loads = [i for i, l in enumerate(lines) if "t0 = tl.load(in0" in l]
    store = next(l for l in lines if "tl.store(out0" in l)
    launch = next(l for l in lines if "drtc_k0_reduction[(16384,)]" in l)
    ctx = ["\n".join(lines[i - 5:i + 1]) for i in loads]
    ev = lambda c, p: c.replace("other=0)", f'other=0, eviction_policy="{p}")')
    a = [[ctx[0], ev(ctx[0], "evict_last")]]
    b = a + [[ctx[1], ev(ctx[1], "evict_first")]]
    c = b + [[store, store.replace("mask=mask)", 'mask=mask, eviction_policy="evict_first")')]]
    def cfg(br, bc, w, grid):
        return [launch, launch.replace("[(16384,)]", f"[({grid},)]").replace(
            "BLOCK_R=2, BLOCK_C=4096, num_warps=16", f"BLOCK_R={br}, BLOCK_C={bc}, num_warps={w}")]
    return [{"name": "first pass evict_last", "replace": a},
            {"name": "+ last pass loads evict_first", "replace": b},
            {"name": "+ stores evict_first", "replace": c},
            {"name": "R2 C2048 w8", "replace": [cfg(2, 2048, 8, 16384)]},
            {"name": "R1 C2048 w8", "replace": [cfg(1, 2048, 8, 32768)]},
            {"name": "R1 C2048 w8 + evictions", "replace": c + [cfg(1, 2048, 8, 32768)]},
            {"name": "R2 C2048 w8 + evictions", "replace": c + [cfg(2, 2048, 8, 16384)]}]


json.dump(gemm("g9.py", 32), open("v9.json", "w"), indent=1)
json.dump(gemm("g7.py", 64), open("v7.json", "w"), indent=1)
json.dump(rows("g38.py"), open("v38.json", "w"), indent=1)
if os.path.exists("g38n.py"):
    json.dump(evictions("g38n.py"), open("v38n.json", "w"), indent=1)
