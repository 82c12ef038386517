"""A verl reward for kernel-writing models: DRTriton's decoupled reward, checked by drtc.

Point verl 0.9 at it by package or by file (it imports drtc absolutely, so importlib can
load the file with no parent package)::

    reward.custom_reward_function.path=pkg://drtc.reward   # or the path of this file
    reward.custom_reward_function.name=compute_score
    reward.reward_manager.name=naive       # the reward loop calls the single form

and pass options with ``+reward.custom_reward_function.reward_kwargs.speedup_cap=10`` and
so on. (verl's legacy ``BatchRewardManager`` calls the batch form.)

What one answer scores
----------------------
The code is the last fenced code block of the model's answer (``drtc.extract_code``, the
same parser drtc's LLM backend uses). It is verified against the reference program in
``ground_truth`` by drtc's runtime, in an isolated worker process (the checks of
``drtc verify``: fresh random inputs on several trials, unwritten outputs, aliasing,
mutated inputs, side streams; with ``strict=True``, the default here, the candidate may
call PyTorch only for allocation, views and library ops such as matmul and conv). On a
CUDA GPU it is then timed against the reference (CUDA events, L2 flushed), and::

    score = correctness_weight * correct + speedup_weight * speed
    correct = 1 if verified else 0
    speed   = clamp(log(speedup) / log(speedup_cap), -1, 1)   if verified and timed
            = 0                                                otherwise

so a verified kernel as fast as PyTorch scores ``correctness_weight``, one
``speedup_cap`` times faster (or more) ``correctness_weight + speedup_weight``, and a
slower one less than ``correctness_weight`` (but never less than
``correctness_weight - speedup_weight``). Wrong, crashing, hanging or unparsable answers
score 0. The two terms are also returned apart (``correctness_reward``,
``speedup_reward``), for trainers that weigh them per group as DRTriton's DRPO does.

Without a GPU the answer is verified on the CPU under Triton's interpreter and scores its
correctness term only; ``timed`` is False and ``reason`` says so.

A call never raises on model output: garbage scores 0 with a ``reason``. It raises
``drtc.RuntimeEnvError`` when drtc cannot score at all: at first use, when the
verification workers do not start (no environment, a Python without torch, no GPU when
``device="cuda"``), and when every answer of a call that reached verification failed on
drtc's machinery rather than on its code (some: those score 0 with
``infrastructure_error`` True, and a ``RuntimeWarning``). A candidate that
hangs is killed after ``timeout`` seconds with its worker, scores 0, and the worker is
replaced, so the pool keeps serving. The pools (one per device and timeout) live for the
life of the process; ``close()`` shuts them down.

On a Ray cluster (verl's own)
-----------------------------
With ``ray="auto"`` (or a cluster address) the answers are verified by drtc's
verification actors on the cluster instead of by workers each reward process starts:
named, detached actors in the ``drtc`` namespace (one per GPU, ``drtc-verifier-cuda-...``;
or CPU actors), found by every reward worker of the job, or started by the first one that
needs them. ``gpus`` says how many GPUs drtc may take beside the rollout engine (the
number of GPU actors; without Ray, the number of local GPUs used). An actor that dies is
replaced and its answer verified again on the replacement, once; the verdict is the one a
local worker gives. ``stop_shared_actors()`` ends the actors when the job is done.
"""

from __future__ import annotations

import math
import threading
import warnings
from typing import Any, Optional

# An absolute import, so that verl can load this file by path (importlib gives it no
# parent package) as well as by name (`pkg://drtc.reward`).
try:
    from drtc import _native
    from drtc import RuntimeEnvError
except ImportError as _e:  # pragma: no cover - depends on the installation
    raise ImportError(
        "drtc's reward needs the drtc package installed in the Python that loads it "
        f"(`pip install ./python` from drtc's repository): {_e}"
    ) from _e

__all__ = ["compute_score", "score_one", "score_batch", "close", "stop_shared_actors",
           "RuntimeEnvError"]

_POOLS: dict = {}
_POOLS_LOCK = threading.Lock()

# checks that mean the module did not import or build (as opposed to computing wrongly)
_NOT_COMPILED = {"import", "init", "state_dict"}


def _pool(device: Optional[str], timeout: float, workers: Optional[int],
          ray: Optional[str] = None, gpus: Optional[int] = None,
          workers_per_gpu: int = 1) -> "_native.Verifier":
    """The pool for these settings; a new one starts its workers at once, so that a
    runtime that cannot start (no Python environment, a Python without torch or triton, no
    GPU when one was asked for) raises here, at first use, instead of scoring every answer
    0."""
    if device is None:
        device = "cuda" if _native.devices() else "cpu"
    if gpus is not None and device == "cuda":
        workers = gpus
    key = (device, float(timeout), workers, ray, workers_per_gpu)
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            try:
                pool = _native.Verifier(device=device, workers=workers,
                                        workers_per_gpu=workers_per_gpu, timeout=float(timeout),
                                        ray=ray, ray_shared=ray is not None and ray != "local")
                pool.warm_up()
            except RuntimeEnvError as e:
                raise RuntimeEnvError(
                    f"drtc.reward cannot verify answers: its verification runtime on {device} "
                    f"did not start, so no answer can be scored: {e}"
                ) from e
            _POOLS[key] = pool
        return pool


def close() -> None:
    """Shuts down the worker pools this module started (shared Ray actors keep running)."""
    with _POOLS_LOCK:
        _POOLS.clear()


def stop_shared_actors(address: str = "auto", namespace: str = "drtc") -> int:
    """Kills drtc's shared verification actors on the Ray cluster at ``address`` (those
    ``ray="auto"`` rewards started); returns how many."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, namespace=namespace, log_to_driver=False)
    n = 0
    for a in ray.util.list_named_actors(all_namespaces=True):
        if a["namespace"] == namespace and a["name"].startswith("drtc-verifier-"):
            ray.kill(ray.get_actor(a["name"], namespace=namespace), no_restart=True)
            n += 1
    return n


def _reference(ground_truth: Any) -> Optional[str]:
    if isinstance(ground_truth, str):
        return ground_truth
    if isinstance(ground_truth, dict):
        for key in ("ground_truth", "pytorch", "reference"):
            if isinstance(ground_truth.get(key), str):
                return ground_truth[key]
    return None


def _result(score=0.0, correct=False, speedup=None, compiled=False, reason="", timed=False,
            correctness=0.0, speed=0.0, report=None, infrastructure_error=False) -> dict:
    out = {
        "score": float(score),
        "correct": bool(correct),
        "speedup": speedup,
        "compiled": bool(compiled),
        "reason": reason,
        "timed": bool(timed),
        "correctness_reward": float(correctness),
        "speedup_reward": float(speed),
        "infrastructure_error": bool(infrastructure_error),
    }
    if report is not None:
        out["report"] = report
    return out


def _speed_term(speedup: float, cap: float) -> float:
    if not (speedup > 0 and math.isfinite(speedup)):
        return 0.0
    return max(-1.0, min(1.0, math.log(speedup) / math.log(cap)))


def _prepare(solution_str: Any, ground_truth: Any, extract: str):
    """The reference and the candidate code, or a zero-score result saying why not."""
    reference = _reference(ground_truth)
    if reference is None:
        return None, None, _result(reason="the ground truth holds no reference program "
                                          f"(got {type(ground_truth).__name__})")
    if not isinstance(solution_str, str):
        return None, None, _result(reason="the answer is not a string "
                                          f"(got {type(solution_str).__name__})")
    code = _native.extract_code(solution_str, extract)
    if code is None or not code.strip():
        return None, None, _result(reason="no code block in the answer")
    try:
        compile(code, "<candidate>", "exec")
    except (SyntaxError, ValueError) as e:
        return None, None, _result(reason=f"the code does not parse as Python: {e}")
    return reference, code, None


def _score(verify: dict, bench: Optional[dict], timed_device: bool, w_c: float, w_s: float,
           cap: float, keep_report: bool) -> dict:
    failures = verify.get("failures") or []
    checks = [f.get("check") for f in failures]
    compiled = not any(c in _NOT_COMPILED for c in checks) and "runtime_error" not in verify
    report = {"verify": verify, "bench": bench} if keep_report else None
    if "runtime_error" in verify:
        # drtc's machinery failed (a worker that did not restart, the sources' files): not
        # the answer's fault, and not a score
        return _result(infrastructure_error=True, report=report,
                       reason=f"infrastructure error, answer not scored: {verify['runtime_error']}")
    if not verify.get("verified"):
        lines = verify.get("reasons") or [f"{f.get('check')}: {f.get('message')}" for f in failures]
        reason = "not verified: " + ("; ".join(lines[:3]) or "no reason given")
        return _result(compiled=compiled, reason=reason, report=report)
    correctness = 1.0
    if not timed_device:
        return _result(score=w_c, correct=True, compiled=True, correctness=correctness,
                       reason="verified on cpu (no GPU: correctness only, speedup not measured)",
                       report=report)
    speedup = bench.get("speedup") if bench else None
    timing = (bench or {}).get("timing") or {}
    if timing.get("timed_outputs_ok") is False:
        # wrong answers while being timed (cached or replayed results): not correct
        why = "; ".join(timing.get("timed_outputs_failures") or []) or "no detail"
        return _result(compiled=True, report=report,
                       reason=f"not verified: the timed calls' outputs failed the checks: {why}")
    if speedup is None:
        why = (bench or {}).get("timing_error") or "no timing"
        return _result(score=w_c, correct=True, compiled=True, correctness=correctness,
                       reason=f"verified; not timed: {why}", report=report)
    flags = timing.get("flags") or []
    if flags:
        # an implausible speedup, or a loop the checker's clock disagrees with: verified,
        # but no speed credit
        return _result(score=w_c, correct=True, speedup=float(speedup), compiled=True,
                       timed=True, correctness=correctness,
                       reason="verified; timing flagged, no speed credit: " + "; ".join(flags),
                       report=report)
    speed = _speed_term(float(speedup), cap)
    return _result(score=w_c * correctness + w_s * speed, correct=True, speedup=float(speedup),
                   compiled=True, timed=True, correctness=correctness, speed=speed,
                   reason=f"verified; {float(speedup):.3f}x vs PyTorch eager", report=report)


def _check_options(speedup_cap: float, extract: str) -> None:
    if not (speedup_cap > 1 and math.isfinite(speedup_cap)):
        raise ValueError(f"speedup_cap must be a finite number above 1, not {speedup_cap!r}")
    if extract not in ("last", "first"):
        raise ValueError(f'extract must be "last" or "first", not {extract!r}')


def score_batch(
    solution_strs,
    ground_truths,
    *,
    correctness_weight: float = 1.0,
    speedup_weight: float = 1.0,
    speedup_cap: float = 10.0,
    timeout: float = 60.0,
    device: Optional[str] = None,
    workers: Optional[int] = None,
    trials: int = 5,
    strict: bool = True,
    extract: str = "last",
    keep_report: bool = False,
    ray: Optional[str] = None,
    gpus: Optional[int] = None,
    workers_per_gpu: int = 1,
) -> list:
    """Scores many answers, spread over the worker pool (``workers_per_gpu`` workers per
    visible GPU, or ``workers`` CPU workers). Results are in order; see the module's
    docstring."""
    _check_options(speedup_cap, extract)
    n = len(solution_strs)
    if len(ground_truths) != n:
        raise ValueError(f"{n} answers but {len(ground_truths)} ground truths")
    results: list = [None] * n
    todo = []
    for i, (answer, truth) in enumerate(zip(solution_strs, ground_truths)):
        try:
            reference, code, early = _prepare(answer, truth, extract)
        except Exception as e:  # noqa: BLE001 - a reward never raises on model output
            reference, code, early = None, None, _result(reason=f"reward error: {e}")
        if early is not None:
            results[i] = early
        else:
            todo.append((i, reference, code))
    if todo:
        pool = _pool(device, timeout, workers, ray, gpus, workers_per_gpu)
        pairs = [(r, c) for _, r, c in todo]
        on_gpu = pool.device == "cuda"
        if on_gpu:
            benches = pool.bench_many(pairs, trials=trials, strict=strict)
            verifies = [b.get("verify") or {} for b in benches]
        else:
            benches = [None] * len(pairs)
            verifies = pool.verify_many(pairs, trials=trials, strict=strict)
        for (i, _, _), v, b in zip(todo, verifies, benches):
            try:
                results[i] = _score(v, b, on_gpu, correctness_weight, speedup_weight,
                                    speedup_cap, keep_report)
            except Exception as e:  # noqa: BLE001
                results[i] = _result(reason=f"reward error: {e}")
        _check_infrastructure([results[i] for i, _, _ in todo])
    return results


def _check_infrastructure(scored: list) -> None:
    """Raises when every answer that reached verification hit an infrastructure error (a
    batch of zeros that says nothing about the answers); warns when some did."""
    broken = [r for r in scored if r.get("infrastructure_error")]
    if not broken:
        return
    if len(broken) == len(scored):
        raise RuntimeEnvError(
            f"drtc.reward: all {len(scored)} answers sent to verification failed on drtc's "
            f"infrastructure, not on their code; refusing to return a batch of zeros. "
            f"First error: {broken[0]['reason']}"
        )
    warnings.warn(
        f"drtc.reward: {len(broken)} of {len(scored)} answers were not scored because of "
        f"infrastructure errors (their score is 0 and `infrastructure_error` is True); first: "
        f"{broken[0]['reason']}",
        RuntimeWarning,
        stacklevel=3,
    )


def score_one(solution_str, ground_truth, **options) -> dict:
    """Scores one answer; the options are those of :func:`score_batch`."""
    return score_batch([solution_str], [ground_truth], **options)[0]


# Keywords verl's reward managers may pass to any reward function; drtc has no use for them.
_VERL_KEYWORDS = frozenset({"sandbox_fusion_url", "concurrent_semaphore", "memory_limit_mb"})

_OPTION_NAMES = ("data_source", "solution_str", "ground_truth", "extra_info", "data_sources",
                 "solution_strs", "ground_truths", "extra_infos", "correctness_weight",
                 "speedup_weight", "speedup_cap", "timeout", "device", "workers", "trials",
                 "strict", "extract", "keep_report", "ray", "gpus", "workers_per_gpu")


def _unknown_keywords(function, unknown, known):
    """Python's own wording for unknown keywords, with the closest known name."""
    import difflib
    parts = []
    for name in unknown:
        close = difflib.get_close_matches(name, known, n=1)
        parts.append(f"'{name}'" + (f" (did you mean '{close[0]}'?)" if close else ""))
    noun = "argument" if len(unknown) == 1 else "arguments"
    return f"{function}() got unexpected keyword {noun}: {', '.join(parts)}"


def compute_score(
    data_source=None,
    solution_str=None,
    ground_truth=None,
    extra_info=None,
    *,
    data_sources=None,
    solution_strs=None,
    ground_truths=None,
    extra_infos=None,
    correctness_weight: float = 1.0,
    speedup_weight: float = 1.0,
    speedup_cap: float = 10.0,
    timeout: float = 60.0,
    device: Optional[str] = None,
    workers: Optional[int] = None,
    trials: int = 5,
    strict: bool = True,
    extract: str = "last",
    keep_report: bool = False,
    ray: Optional[str] = None,
    gpus: Optional[int] = None,
    workers_per_gpu: int = 1,
    **_ignored,
):
    """verl's reward entry point, in both of verl's forms.

    Single (verl 0.9's reward loop, ``reward.reward_manager.name=naive``): ``compute_score(data_source, solution_str,
    ground_truth, extra_info=None)`` returns a dict with ``score`` plus ``correct``,
    ``speedup`` (None unless timed on a GPU), ``compiled``, ``reason``, ``timed``,
    ``correctness_reward``, ``speedup_reward`` and ``infrastructure_error``.

    Batch (verl's legacy ``BatchRewardManager``): ``compute_score(data_sources=, solution_strs=,
    ground_truths=, extra_infos=)`` returns a list of those dicts, verified concurrently
    over the worker pool and the visible GPUs.

    Options (keyword arguments; in verl, ``custom_reward_function.reward_kwargs``):
    ``correctness_weight`` (1.0) and ``speedup_weight`` (1.0) weigh the two terms;
    ``speedup_cap`` (10.0) is the speedup that earns the full speed term; ``timeout``
    (60 s) kills a hanging candidate; ``device`` ("cuda", "cpu"; default: cuda when a GPU
    is visible); ``workers`` (CPU workers; default half the cores); ``trials`` (5, the
    least drtc allows); ``strict`` (True: the candidate must compute in its own kernels);
    ``extract`` ("last" or "first" code block); ``keep_report`` (False: attach the
    runtime's full reports under ``report``); ``ray`` (None: local workers; "auto",
    "local" or a cluster address: drtc's shared verification actors on that Ray cluster)
    and ``gpus`` (how many GPUs drtc may take; default all it sees); ``workers_per_gpu`` (1:
    answers verified at once per GPU, each still in its own sandboxed process, their timing
    one at a time per GPU). The keywords some verl reward managers pass
    to every reward function (``sandbox_fusion_url``, ``concurrent_semaphore``,
    ``memory_limit_mb``) are ignored; any other unknown keyword raises ``TypeError``, so a
    typo such as ``speed_cap=5`` is not silently dropped.
    """
    unknown = sorted(set(_ignored) - _VERL_KEYWORDS)
    if unknown:
        raise TypeError(_unknown_keywords("compute_score", unknown, _OPTION_NAMES))
    options = dict(correctness_weight=correctness_weight, speedup_weight=speedup_weight,
                   speedup_cap=speedup_cap, timeout=timeout, device=device, workers=workers,
                   trials=trials, strict=strict, extract=extract, keep_report=keep_report,
                   ray=ray, gpus=gpus, workers_per_gpu=workers_per_gpu)
    if solution_strs is not None or ground_truths is not None:
        if solution_strs is None or ground_truths is None:
            raise TypeError("the batch form needs both solution_strs= and ground_truths=")
        return score_batch(list(solution_strs), list(ground_truths), **options)
    return score_one(solution_str, ground_truth, **options)
