"""drtc from Python: PyTorch programs to verified Triton kernels.

The compiler and runtime are drtc's own Rust code (the extension module ``drtc._native``,
built with pyo3 and maturin); this package re-exports them and adds ``drtc.reward``, a
reward function verl loads unchanged (``custom_reward_function.path``).

>>> import drtc
>>> p = drtc.parse(open("model.py").read())
>>> print(p.ir)
>>> module = drtc.compile(open("model.py").read(), device="cpu").source
>>> drtc.verify(open("model.py").read(), module, device="cpu")["verified"]
"""

from ._native import (
    CompileError,
    Compiled,
    DrtcError,
    FrontendError,
    Program,
    RuntimeEnvError,
    SynthError,
    Verifier,
    __version__,
    bench,
    compile,
    decompose,
    dataset,
    devices,
    extract_code,
    parse,
    render_prompt,
    synth,
    verify,
)

__all__ = [
    "CompileError",
    "Compiled",
    "DrtcError",
    "FrontendError",
    "Program",
    "RuntimeEnvError",
    "SynthError",
    "Verifier",
    "__version__",
    "bench",
    "compile",
    "decompose",
    "dataset",
    "devices",
    "extract_code",
    "parse",
    "render_prompt",
    "synth",
    "verify",
]
