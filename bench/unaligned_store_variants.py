"""Writes the variant files for `bench/kernel_variant_probe.py` on the level-1 modules whose
stores are not 16-byte aligned: 1-D poolings whose output rows are not a multiple of four
(41 max, rows of 65523; 44 average, rows of 65537: flat blocks of 256, whose block sizes
and warps are varied, and whose leading dims are merged into one index over the
contiguous input's rows) and the exclusive scan (92, a cumsum written into columns 1.. of its
concatenation with a zero column: the variant tiles the output's columns, aligned, and
loads the input one column back, the zero column then being the scan of the padding).
Run in a folder holding `g41.py`, `g44.py`, `g92.py` (`drtc compile <task> --device cuda
--search=off --no-verify -o gN.py`); an edit a module does not contain makes the probe
report that variant not applicable."""
import json
import re


def pool(path):
    src = open(path).read()
    grid, block, warps = re.search(r"\[\((\d+),\)\]\(.*BLOCK=(\d+), num_warps=(\d+)\)", src).groups()
    numel = int(re.search(r"mask = offs < (\d+)", src).group(1))
    launch = f"BLOCK={block}, num_warps={warps})"
    # the leading dims merged: one division and the input's row stride (a contiguous input)
    w_out = int(re.search(r"o2 = offs_rem % (\d+)", src).group(1))
    c = int(re.search(r"o1 = offs_rem % (\d+)", src).group(1))
    w_in = int(re.search(r"\(h0 < (\d+)\)", src).group(1))
    merged = [[f"    o1 = offs_rem % {c}\n    offs_rem = offs_rem // {c}\n    o0 = offs_rem\n", ""],
              ["in0 + o0 * in0_s0 + o1 * in0_s1 + h0 * in0_s2", f"in0 + offs_rem * {w_in} + h0"]]
    out = [{"name": "leading dims merged", "replace": merged}]
    for b, w in ((512, 8), (1024, 8)):
        out.append({"name": f"leading dims merged, BLOCK={b} w{w}",
                    "replace": merged + [[f"[({grid},)]", f"[({-(-numel // b)},)]"],
                                         [launch, f"BLOCK={b}, num_warps={w})"]]})
    for b in (512, 1024, 2048):
        for w in (4, 8):
            out.append({
                "name": f"BLOCK={b} w{w}",
                "replace": [[f"[({grid},)]", f"[({-(-numel // b)},)]"],
                            [launch, f"BLOCK={b}, num_warps={w})"]],
            })
    return out


def scan(path):
    src = open(path).read()
    n = int(re.search(r"for cstart in range\(0, (\d+), BLOCK_C\)", src).group(1))
    rows = re.search(r"\.narrow\(1, 1, %d\)" % n, src)
    assert rows, "not an exclusive scan written into columns 1.."
    store = re.search(r"        tl\.store\(out0 \+ r0 \* (\d+) \+ c1, (.*), mask=mask\)\n", src)
    width = int(store.group(1))
    shifted = [
        [f"for cstart in range(0, {n}, BLOCK_C):", f"for cstart in range(0, {width}, BLOCK_C):"],
        ["        cols = cstart + tl.arange(0, BLOCK_C)[None, :]\n",
         "        ocols = cstart + tl.arange(0, BLOCK_C)[None, :]\n        cols = ocols - 1\n"],
        [f"        mask = rmask & (cols < {n})\n",
         f"        mask = rmask & (cols < {n}) & (cols >= 0)\n        omask = rmask & (ocols < {width})\n"],
        [store.group(0), f"        tl.store(out0 + r0 * {width} + ocols, {store.group(2)}, mask=omask)\n"],
    ]
    launch = re.search(r"    (v\d+) = (v\d+)\.narrow\(1, 1, %d\)\n" % n, src)
    slice_, whole = launch.group(1), launch.group(2)
    kernel_call = re.search(r"\]\((v\d+), \1\.stride\(0\), \1\.stride\(1\), %s," % slice_, src).group(0)
    shifted.append([kernel_call, kernel_call.replace(f", {slice_},", f", {whole},")])
    zero = re.search(r"    %s\.narrow\(1, 0, 1\)\.copy_\(v\d+\)\n" % whole, src).group(0)
    out = [
        {"name": "aligned output columns, input one back", "replace": shifted},
        {"name": "aligned, zero column not copied", "replace": shifted + [[zero, ""]]},
        {"name": "fp32 carry (precision probe only)", "replace": [["tl.float64", "tl.float32"]]},
    ]
    return out


for name, fn in (("41", pool), ("44", pool), ("92", scan)):
    with open(f"v{name}.json", "w") as f:
        json.dump(fn(f"g{name}.py"), f, indent=1)
    print(f"v{name}.json")
