"""drtc's torch.export helper: one Python program (KernelBench `Model` or seed format) in,
its exported ATen graph out, as JSON (read by `drtc_frontends::export`).

usage: python helper.py PROGRAM.py OUT.json [--device meta|cpu] [--input-types JSON]

`--input-types '[["float32", [2, 3]], ...]'` exports for those inputs instead of `get_inputs()`.

The program is executed as a module whose file name is its own path, so every node's
`stack_trace` names lines of that file. The model is built as `Model(*get_init_inputs())`
(or, for seed programs, `fused_operator` wrapped in a module) and exported with
`torch.export.export(..., strict=False)` on `get_inputs()`, then decomposed to the op set
of `KEEP` + PyTorch's core ATen decompositions. On the `meta` device (the default) no
weights or inputs are materialized: only shapes, dtypes and strides matter here.

The JSON: {"ok": true, "format", "inputs": [...], "nodes": [...], "outputs": [...],
"mutations": [...]} or {"ok": false, "error": {"kind", "message", "line"}}.
"""

import json
import re
import sys
import traceback
import types

# Ops kept whole (not decomposed) because drtc has an IR op, a template or a library call
# for them, or because PyTorch runs them best as one call (recurrent layers).
KEEP = [
    "aten.linear.default",
    "aten.scaled_dot_product_attention.default",
    "aten.lstm.input",
    "aten.lstm.data",
    "aten.gru.input",
    "aten.gru.data",
    "aten.rnn_tanh.input",
    "aten.rnn_relu.input",
    "aten.embedding.default",
    "aten.matmul.default",
    "aten.einsum.default",
    "aten.chunk.default",
    "aten.split.Tensor",
    "aten.masked_fill.Scalar",
    "aten.masked_fill.Tensor",
    "aten.softplus.default",
    "aten.mish.default",
    "aten.hardswish.default",
    "aten.hardsigmoid.default",
    "aten.silu.default",
    "aten.gelu.default",
    "aten.elu.default",
    "aten.leaky_relu.default",
    "aten.hardtanh.default",
    "aten.layer_norm.default",
    "aten.group_norm.default",
    "aten.adaptive_avg_pool1d.default",
    "aten.adaptive_avg_pool2d.default",
    "aten.adaptive_avg_pool3d.default",
    "aten.stack.default",
    "aten.flatten.using_ints",
    "aten.transpose.int",
    "aten.t.default",
    "aten.bmm.default",
    "aten.softmax.int",
    "aten.log_softmax.int",
    "aten.logsumexp.default",
    "aten.tril.default",
    "aten.triu.default",
]

# Ops decomposed even where a PyTorch version's default table leaves them whole, so that
# every supported version gives drtc the same graph: torch 2.11 keeps
# `linalg_vector_norm` (what `F.normalize` and `torch.norm` call), which drtc would then run
# as an opaque library call; torch 2.15 decomposes it into pow, sum and pow, which drtc
# compiles.
DECOMPOSE = [
    "aten.linalg_vector_norm.default",
]

MODEL_FILE_MARK = "drtc-export"


def user_line(tb_frames, path):
    """The last frame of the traceback that lies in the program's own file."""
    line = None
    for f in tb_frames:
        if f.filename == path:
            line = f.lineno
    return line


def trace_line(stack_trace, path):
    """The innermost line of `path` named by a node's `stack_trace`."""
    if not stack_trace:
        return None
    line = None
    pat = re.compile(r'File "(.*)", line (\d+)')
    for m in pat.finditer(stack_trace):
        if m.group(1) == path:
            line = int(m.group(2))
    return line


def fail(out, kind, message, line=None):
    with open(out, "w") as f:
        json.dump({"ok": False, "error": {"kind": kind, "message": message, "line": line}}, f)
    sys.exit(0)


def dtype_name(d):
    return str(d).replace("torch.", "")


def tensor_meta(v):
    import torch

    if isinstance(v, torch.Tensor):
        return {
            "shape": [int(s) for s in v.shape],
            "dtype": dtype_name(v.dtype),
            "stride": [int(s) for s in v.stride()],
        }
    if isinstance(v, (list, tuple)):
        return [tensor_meta(x) for x in v]
    if isinstance(v, (int, float, bool)) or v is None:
        return {"scalar": v}
    # symbolic ints and other values: only their text
    return {"other": str(v)}


def arg_json(a):
    import torch

    if isinstance(a, torch.fx.Node):
        return {"node": a.name}
    if isinstance(a, (list, tuple)):
        return [arg_json(x) for x in a]
    if isinstance(a, bool) or a is None or isinstance(a, (int, str)):
        return a
    if isinstance(a, float):
        if a != a or a in (float("inf"), float("-inf")):
            return {"float": str(a)}
        return a
    if isinstance(a, torch.dtype):
        return {"dtype": dtype_name(a)}
    if isinstance(a, torch.device):
        return {"device": str(a)}
    if isinstance(a, torch.layout):
        return {"layout": str(a).replace("torch.", "")}
    if isinstance(a, torch.memory_format):
        return {"memory_format": str(a).replace("torch.", "")}
    return {"unsupported": type(a).__name__, "text": str(a)}


def target_name(t):
    import torch

    if isinstance(t, torch._ops.OpOverload):
        ns, rest = t.name().split("::", 1)
        if "." not in rest:
            rest += ".default"
        return f"{ns}.{rest}"
    if getattr(t, "__module__", None) == "_operator":
        return f"operator.{t.__name__}"
    return f"{getattr(t, '__module__', '?')}.{getattr(t, '__name__', str(t))}"


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    path, out = args[0], args[1]
    device = "meta"
    if "--device" in args:
        device = args[args.index("--device") + 1]
    input_types = None
    if "--input-types" in args:
        input_types = json.loads(args[args.index("--input-types") + 1])
    src = open(path).read()
    import torch

    torch.manual_seed(0)
    mod = types.ModuleType("drtc_export_program")
    mod.__file__ = path
    sys.modules["drtc_export_program"] = mod
    try:
        code = compile(src, path, "exec")
        exec(code, mod.__dict__)
    except Exception as e:
        fail(out, "program", f"{type(e).__name__}: {e}", user_line(traceback.extract_tb(e.__traceback__), path))
    ns = mod.__dict__
    if "get_inputs" not in ns:
        fail(out, "program", "the program defines no `get_inputs()`")
    if "Model" in ns:
        fmt = "kernelbench"
    elif "fused_operator" in ns:
        fmt = "seed"
    else:
        fail(out, "program", "the program defines neither `class Model` nor `fused_operator`")
    try:
        ep, model = build_and_export(ns, fmt, device, input_types, path)
        if any(
            isinstance(c, torch.Tensor) and c.device.type == "meta" for c in ep.constants.values()
        ):
            # constants made in forward (`torch.tensor(0.5)`) have no value on meta
            raise Failure("export", "constants on the meta device", None)
    except Failure as f:
        if device != "meta":
            fail(out, f.kind, f.message, f.line)
        # some programs need real tensors while they are built (`.cuda()`, data-dependent
        # __init__): try again on the CPU and report that attempt's failure, if any
        try:
            ep, model = build_and_export(ns, fmt, "cpu", input_types, path)
        except Failure as g:
            fail(out, g.kind, g.message, g.line)
    write_graph(ep, fmt, path, out, model)


class Failure(Exception):
    def __init__(self, kind, message, line):
        super().__init__(message)
        self.kind, self.message, self.line = kind, message, line


def op_overload(torch, name):
    """The OpOverload `aten.NAME.OVERLOAD`, or None where this PyTorch has none."""
    opns, rest = name.split(".", 1)
    ovl_name, overload = rest.rsplit(".", 1)
    packet = getattr(getattr(torch.ops, opns), ovl_name, None)
    if packet is None or not hasattr(packet, overload):
        return None
    return getattr(packet, overload)


def decomposition_table(torch):
    """PyTorch's default decompositions, less the ops in KEEP, plus those in DECOMPOSE."""
    from torch._decomp import get_decompositions

    table = torch.export.default_decompositions()
    for name in KEEP:
        o = op_overload(torch, name)
        if o is not None and o in table:
            del table[o]
    for name in DECOMPOSE:
        o = op_overload(torch, name)
        if o is not None and o not in table:
            table.update({k: v for k, v in get_decompositions([o]).items() if k == o})
    return table


def build_and_export(ns, fmt, device, input_types, path):
    """Builds the model and its inputs on `device`, exports and decomposes it."""
    import torch

    try:
        with torch.device(device):
            if fmt == "kernelbench":
                init = ns["get_init_inputs"]() if "get_init_inputs" in ns else []
                model = ns["Model"](*init)
            else:
                op = ns["fused_operator"]

                class Seed(torch.nn.Module):
                    def forward(self, *xs):
                        return op(*xs)

                model = Seed()
            if input_types is None:
                inputs = ns["get_inputs"]()
            else:
                inputs = [torch.empty(shape, dtype=getattr(torch, dt)) for dt, shape in input_types]
    except Exception as e:
        raise Failure("program", f"{type(e).__name__}: {e}", user_line(traceback.extract_tb(e.__traceback__), path))
    inputs = list(inputs)
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor):
            raise Failure("program", f"get_inputs() item {i} is a {type(x).__name__}, not a tensor (export takes tensor inputs)", None)
    attributes = promote_tensor_attributes(model)
    watch = AssignmentWatch(model, path)
    try:
        with torch.no_grad(), watch:
            ep = torch.export.export(model, tuple(inputs), strict=False)
            table = decomposition_table(torch)
            ep = ep.run_decompositions(table)
    except Exception as e:
        # an assignment the watch refuses can also make export fail (a copy that cannot
        # broadcast): its reason is the one to give
        watch.check()
        full = f"{type(e).__name__}: {e}"
        line = user_line(traceback.extract_tb(e.__traceback__), path) or trace_line(full, path)
        # export's reason is its first paragraph (the rest: hints and graph dumps)
        msg = full.split("\n\n", 1)[0].strip()[:1500]
        raise Failure("export", msg, line)
    watch.check()
    model._drtc_attributes = attributes
    model._drtc_assigned = set(watch.assigned)
    return ep, model


def promote_tensor_attributes(model):
    """Registers every plain tensor attribute of the module tree (a tensor made in
    `__init__` that is neither a parameter nor a buffer, such as an RNN's `self.hidden`)
    as a non-persistent buffer of its module, so that torch.export lifts it as a graph
    input and records its mutations and assignments instead of baking it in as a
    constant. Non-persistent buffers are not in `state_dict`, so its keys are unchanged;
    the model is this helper's own instance. A tensor that is (a view of) another state
    tensor stays a plain attribute (export's own rules apply). Returns the dotted names of
    the promoted attributes, with each one's (shape, dtype)."""
    import torch

    def root(t):
        return t._base if t._base is not None else t

    state = {id(root(t)) for t in list(model.parameters()) + list(model.buffers())}
    plain = []
    for prefix, m in model.named_modules():
        for k, v in list(vars(m).items()):
            if isinstance(v, torch.Tensor) and not isinstance(v, torch.nn.Parameter):
                plain.append((prefix, m, k, v))
    seen = {}
    for _, _, _, v in plain:
        seen[id(root(v))] = seen.get(id(root(v)), 0) + 1
    promoted = {}
    for prefix, m, k, v in plain:
        if id(root(v)) in state or seen[id(root(v))] > 1:
            continue
        del m.__dict__[k]
        m.register_buffer(k, v, persistent=False)
        promoted[f"{prefix}.{k}" if prefix else k] = (tuple(v.shape), v.dtype)
    return promoted


class AssignmentWatch:
    """Records every assignment `module.x = tensor` to a buffer of the module tree while
    export traces the forward (a promoted attribute is a buffer then). torch.export turns
    an assignment to a buffer of the top-level module into a copy into that buffer, but it
    does not see assignments to a submodule's buffers: `check` refuses those, and any
    assignment that changes a tensor's shape or dtype (a copy would broadcast or cast
    it), rather than let an update be dropped or changed."""

    def __init__(self, model, path):
        self.path = path
        self.names = {id(m): p for p, m in model.named_modules()}
        self.root = id(model)
        self.assigned = {}
        self.problems = []
        self.before = {}
        for p, m in model.named_modules():
            for k, b in m._buffers.items():
                if b is not None:
                    self.before[f"{p}.{k}" if p else k] = (tuple(b.shape), b.dtype)
        self.handle = None

    def __enter__(self):
        import torch

        def hook(mod, name, value):
            prefix = self.names.get(id(mod))
            if prefix is None:
                return None
            qual = f"{prefix}.{name}" if prefix else name
            line = user_line(traceback.extract_stack(), self.path)
            if id(mod) != self.root:
                self.problems.append((
                    f"forward assigns `{qual}`, a tensor of the submodule `{prefix}` "
                    f"({type(mod).__name__}); torch.export records assignments only to "
                    "the top-level module's tensors, so this state update would be "
                    "dropped (update it in place, `.copy_(...)`, or assign it in the "
                    "top-level forward)",
                    line,
                ))
            elif isinstance(value, torch.Tensor) and qual in self.before:
                was = self.before[qual]
                now = (tuple(value.shape), value.dtype)
                if now != was:
                    self.problems.append((
                        f"forward assigns `{qual}` a {dtype_name(now[1])}{list(now[0])} "
                        f"tensor where it held {dtype_name(was[1])}{list(was[0])}; "
                        "torch.export would copy it into the old tensor (drtc "
                        "reproduces assignments that keep a tensor's shape and dtype)",
                        line,
                    ))
            self.assigned[qual] = line
            return None

        self.handle = torch.nn.modules.module.register_module_buffer_registration_hook(hook)
        return self

    def __exit__(self, *exc):
        if self.handle is not None:
            self.handle.remove()
            self.handle = None
        return False

    def check(self):
        if self.problems:
            msg, line = self.problems[0]
            raise Failure("export", msg, line)


def write_graph(ep, fmt, path, out, model):
    import torch
    from torch.export.graph_signature import InputKind, OutputKind

    sig = ep.graph_signature
    inputs = []
    user = 0
    persistent = set(model.state_dict().keys())
    for spec in sig.input_specs:
        name = spec.arg.name
        kind = {
            InputKind.USER_INPUT: "activation",
            InputKind.PARAMETER: "parameter",
            InputKind.BUFFER: "buffer",
            InputKind.CONSTANT_TENSOR: "constant",
        }.get(spec.kind, str(spec.kind))
        entry = {"placeholder": name, "kind": kind, "target": spec.target}
        if kind == "activation":
            entry["index"] = user
            user += 1
        if kind == "buffer":
            entry["persistent"] = spec.target in persistent
            # a plain tensor attribute of the model, promoted to a buffer for export
            entry["attribute"] = spec.target in getattr(model, "_drtc_attributes", {})
        if kind == "constant":
            c = ep.constants.get(spec.target)
            if isinstance(c, torch.Tensor) and c.numel() == 1 and c.device.type != "meta":
                entry["value"] = c.item()
        inputs.append(entry)
    nodes = []
    for n in ep.graph.nodes:
        meta = n.meta.get("val")
        entry = {
            "name": n.name,
            "op": n.op,
            "meta": tensor_meta(meta) if meta is not None else None,
            "line": trace_line(n.meta.get("stack_trace"), path),
        }
        if n.op == "call_function":
            entry["target"] = target_name(n.target)
            entry["args"] = [arg_json(a) for a in n.args]
            entry["kwargs"] = {k: arg_json(v) for k, v in n.kwargs.items()}
        elif n.op == "output":
            entry["args"] = [arg_json(a) for a in n.args[0]]
        nodes.append(entry)
    outputs = []
    for spec in sig.output_specs:
        kind = {
            OutputKind.USER_OUTPUT: "user",
            OutputKind.BUFFER_MUTATION: "buffer_mutation",
            OutputKind.USER_INPUT_MUTATION: "input_mutation",
        }.get(spec.kind, str(spec.kind))
        entry = {"kind": kind, "target": spec.target, "arg": getattr(spec.arg, "name", None)}
        if kind == "buffer_mutation":
            # assigned in forward (`self.x = ...`), not only updated in place
            entry["assigned"] = spec.target in getattr(model, "_drtc_assigned", set())
        outputs.append(entry)
    with open(out, "w") as f:
        json.dump(
            {
                "ok": True,
                "format": fmt,
                "torch": torch.__version__,
                "inputs": inputs,
                "nodes": nodes,
                "outputs": outputs,
            },
            f,
        )


if __name__ == "__main__":
    main()
