"""drtc's static checks of a model-written kernel module (run with the runtime's Python).

Reads one JSON request on stdin and prints one JSON answer:
  {"op": "check", "code": str, "entry": str, "strict": bool, "library_ops": [str]}
    -> {"ok": bool, "reason": str | null}
  {"op": "declared", "reference": str}
    -> {"library_ops": [str]}  (the library ops the reference program calls)
Only the standard library is used: nothing is imported or run from the checked code.
"""
import ast
import json
import sys

LIBRARY = {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "matmul", "mm", "bmm", "addmm", "baddbmm", "linear"}
MODULES = {"Conv1d": "conv1d", "Conv2d": "conv2d", "Conv3d": "conv3d",
           "ConvTranspose1d": "conv_transpose1d", "ConvTranspose2d": "conv_transpose2d",
           "ConvTranspose3d": "conv_transpose3d", "Linear": "linear"}
# torch-level names that allocate, describe or view, never compute (as the runtime's
# strict mode allows), plus module-level helpers with no tensor compute.
ALLOC = {"empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like",
         "full", "full_like", "new_empty", "new_zeros", "new_ones", "new_full",
         "new_empty_strided"}
META = {"size", "stride", "dim", "numel", "view", "view_as", "reshape", "unsqueeze",
        "squeeze", "flatten", "unflatten", "permute", "transpose", "t", "expand",
        "expand_as", "as_strided", "contiguous", "narrow", "movedim", "select", "detach",
        "is_floating_point", "is_complex", "is_tensor", "device", "dtype", "Size", "finfo",
        "iinfo", "no_grad", "inference_mode", "get_default_dtype", "manual_seed",
        "current_device", "device_count", "is_available", "get_device_name",
        "get_device_properties", "synchronize", "promote_types", "result_type"}
STREAMS = {"Stream", "stream", "set_stream", "ExternalStream", "StreamContext"}


def attr_chain(node):
    """`a.b.c` -> ["a", "b", "c"], or None when the root is not a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


def torch_names(tree):
    """Names bound to torch modules, and names imported from them."""
    modules, imported = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "torch" or a.name.startswith("torch."):
                    modules.add(a.asname or "torch")
        elif isinstance(node, ast.ImportFrom) and node.module and (
                node.module == "torch" or node.module.startswith("torch.")):
            for a in node.names:
                imported[a.asname or a.name] = a.name
    return modules, imported


def is_jit(dec):
    chain = attr_chain(dec.func if isinstance(dec, ast.Call) else dec)
    return bool(chain) and chain[-1] == "jit" and chain[0] in ("triton", "jit")


def kernels(tree):
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and any(is_jit(d) for d in n.decorator_list)]


def defines(tree, entry):
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and node.name == entry:
            return True
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == entry for t in node.targets):
            return True
    return False


def strict_reason(tree, library_ops):
    allowed = ALLOC | META | set(library_ops)
    modules, imported = torch_names(tree)
    # kernel bodies are Triton, and `__init__` builds parameters (torch.randn is fine there):
    # only the code that runs when the module is called is held to the rules
    inside_kernels, inside_init = set(), set()
    for k in kernels(tree):
        inside_kernels.update(id(n) for n in ast.walk(k) if n is not k)
    for f in ast.walk(tree):
        if isinstance(f, ast.FunctionDef) and f.name == "__init__":
            inside_init.update(id(n) for n in ast.walk(f))
    for node in ast.walk(tree):
        if id(node) in inside_kernels:
            continue
        line = getattr(node, "lineno", "?")
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            return f"line {line}: try/except is not allowed in strict mode"
        if isinstance(node, ast.Attribute) and node.attr in STREAMS:
            chain = attr_chain(node)
            if chain and ("cuda" in chain or chain[0] in modules):
                return f"line {line}: CUDA streams (`{'.'.join(chain)}`) are not allowed"
        if isinstance(node, ast.Call) and id(node) not in inside_init:
            chain = attr_chain(node.func)
            if not chain:
                continue
            if chain[0] in modules and len(chain) > 1:
                name = chain[-1]
            elif chain[0] in imported and len(chain) == 1:
                name = imported[chain[0]]
            else:
                continue
            if name in STREAMS:
                return f"line {line}: CUDA streams (`{'.'.join(chain)}`) are not allowed"
            if name[:1].isupper() or name in allowed:
                continue  # classes (nn.Parameter, nn.Conv2d), allocation, views
            return (f"line {line}: `{'.'.join(chain)}` computes with PyTorch outside the "
                    f"declared library ops ({', '.join(sorted(library_ops)) or 'none'})")
    return None


def check(req):
    code = req["code"]
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        return {"ok": False, "reason": f"syntax error at line {e.lineno}: {e.msg}"}
    except (ValueError, RecursionError) as e:
        return {"ok": False, "reason": f"syntax error: {e}"}
    entry = req["entry"]
    if not defines(tree, entry):
        return {"ok": False, "reason": f"missing entry point `{entry}` at module level"}
    if not kernels(tree):
        return {"ok": False, "reason": "no @triton.jit kernel"}
    if req.get("strict"):
        reason = strict_reason(tree, req.get("library_ops") or [])
        if reason:
            return {"ok": False, "reason": reason}
    return {"ok": True, "reason": None}


def declared(req):
    tree = ast.parse(req["reference"])
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            found.update({"matmul", "__matmul__", "__rmatmul__"})
        if isinstance(node, ast.Call):
            chain = attr_chain(node.func) or []
            if chain and chain[-1] in LIBRARY:
                found.add(chain[-1])
            if chain and chain[-1] in MODULES:
                found.add(MODULES[chain[-1]])
    return {"library_ops": sorted(found)}


def main():
    req = json.loads(sys.stdin.read())
    answer = check(req) if req.get("op", "check") == "check" else declared(req)
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    main()
