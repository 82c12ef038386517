"""Type stubs of drtc's native module (re-exported by `drtc`)."""

from os import PathLike
from typing import Any, Literal, Mapping, Optional, Sequence

__version__: str

class DrtcError(Exception):
    """Base class of every error drtc raises."""

class FrontendError(DrtcError):
    """A program drtc cannot read or lower; the message has the source line and a caret."""

    span: tuple[int, int]
    """The (start, end) byte range of the offending code."""
    kind: Literal["syntax", "unsupported", "random", "lowering", "format"]
    detail: str
    """The one-line message, without the rendering."""

class CompileError(DrtcError): ...
class SynthError(DrtcError): ...

class RuntimeEnvError(DrtcError):
    """No Python environment, missing packages, no GPU where one is needed, a dead worker."""

Device = Literal["cpu", "cuda", "auto"]

class Program:
    """A lowered program."""

    ir: str
    """The typed IR in drtc's text format."""
    format: Literal["kernelbench", "seed"]
    ops: list[str]
    flops: int
    @property
    def signature(self) -> dict[str, Any]:
        """{"inputs": [{"shape", "dtype"}...], "params": {name: {...}}, "outputs": [...]}"""

class Compiled:
    """A generated module and its report."""

    source: str
    """The module (defines `ModelNew` or `triton_fused_operator`)."""
    ir: str
    @property
    def report(self) -> dict[str, Any]:
        """regions, kernels, fallback_ops, fusion_log, lowering (the lowering plan), compile_ms,
        overrides (what set= and shrink= set) (and verification)."""

Frontend = Literal["auto", "native", "export"]
# `set`: the CLI's --set NAME=VALUE (a str value is Python source, any other its repr);
# `shrink`: --shrink (size caps for CPU checking; a name in `set` wins over its cap)
Constants = Optional[Mapping[str, Any]]

def parse(
    src: str,
    *,
    name: str = "<program>",
    frontend: Frontend = "auto",
    set: Constants = None,
    shrink: bool = False,
) -> Program: ...
def compile(
    src: str,
    *,
    precision: Literal["fp32", "tf32", "ieee"] = "fp32",
    backend: Literal["triton"] = "triton",
    device: Optional[Device] = None,
    max_ops: int = 64,
    simplify: bool = True,
    verify: bool = False,
    name: str = "<program>",
    frontend: Frontend = "auto",
    set: Constants = None,
    shrink: bool = False,
) -> Compiled: ...
def decompose(
    src: str,
    max_ops: int = 8,
    *,
    passes: Optional[str] = None,
    name: str = "<program>",
    set: Constants = None,
    shrink: bool = False,
) -> list[dict[str, Any]]: ...
def synth(
    ops: Optional[int] = None,
    count: int = 1,
    seed: int = 0,
    *,
    level: Optional[int] = None,
    flops: str = "2^34..2^35",
    op_set: str = "a",
    validate: Optional[Literal["none", "auto", "meta", "cpu", "cuda"]] = None,
    trials: int = 5,
    retries: int = 5,
    selection: Literal["uniform", "coverage"] = "uniform",
    time_limit: float = 1.0,
    max_elements: Optional[int] = None,
) -> list[dict[str, Any]]: ...
def verify(
    reference_src: str,
    candidate_src: str,
    *,
    device: Optional[Device] = None,
    trials: int = 5,
    seed: int = 0,
    strict: bool = False,
    library_ops: Optional[Sequence[str]] = None,
    timeout: float = 300.0,
    set: Constants = None,
    shrink: bool = False,
) -> dict[str, Any]:
    """The runtime's report: verified, kind, device, failures, trials, reasons, ..."""

def bench(
    reference_src: str,
    candidate_src: str,
    *,
    trials: int = 5,
    seed: int = 0,
    strict: bool = False,
    compile_baseline: bool = False,
    timeout: float = 300.0,
    set: Constants = None,
    shrink: bool = False,
    compile_modes: Optional[list[Literal["default", "max-autotune", "max-autotune-no-cudagraphs", "reduce-overhead"]]] = None,
) -> dict[str, Any]:
    """{"verify": report, "timing": {...} | None, "timing_error": str | None, "speedup": float | None}"""

def devices() -> list[dict[str, Any]]: ...
def extract_code(answer: str, which: Literal["last", "first"] = "last") -> Optional[str]: ...
def render_prompt(
    program: str,
    mode: Literal["regions", "whole"] = "regions",
    *,
    gpu: str = "NVIDIA H200",
    dtype: str = "float32",
    template: Optional[str | PathLike[str]] = None,
) -> list[dict[str, str]]: ...
def dataset(
    input: str | PathLike[str],
    output: str | PathLike[str],
    *,
    mode: Literal["regions", "whole"] = "regions",
    max_ops: int = 8,
    gpu: str = "NVIDIA H200",
    dtype: Optional[str] = None,
    template: Optional[str | PathLike[str]] = None,
    data_source: str = "drtc",
    test_fraction: float = 0.0,
) -> dict[str, Any]: ...

class Verifier:
    """A long-lived pool of isolated verification workers."""

    def __init__(
        self,
        *,
        device: Optional[Device] = None,
        workers: Optional[int] = None,
        workers_per_gpu: int = 1,
        timeout: float = 300.0,
        bench_timeout: Optional[float] = None,
        ray: Optional[str] = None,
        ray_shared: bool = False,
    ) -> None: ...
    @property
    def device(self) -> Literal["cpu", "cuda"]: ...
    @property
    def size(self) -> int: ...
    @property
    def restarts(self) -> int: ...
    def warm_up(self) -> None: ...
    def ray_summary(self) -> Optional[dict[str, Any]]: ...
    def verify(
        self, reference_src: str, candidate_src: str, *, trials: int = 5, seed: int = 0,
        strict: bool = False,
    ) -> dict[str, Any]: ...
    def verify_many(
        self, pairs: Sequence[tuple[str, str]], *, trials: int = 5, seed: int = 0,
        strict: bool = False,
    ) -> list[dict[str, Any]]: ...
    def bench(
        self, reference_src: str, candidate_src: str, *, trials: int = 5, seed: int = 0,
        strict: bool = False,
    ) -> dict[str, Any]: ...
    def bench_many(
        self, pairs: Sequence[tuple[str, str]], *, trials: int = 5, seed: int = 0,
        strict: bool = False,
    ) -> list[dict[str, Any]]: ...
