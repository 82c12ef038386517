"""The verl reward on the CPU interpreter: correct, wrong, garbage and hanging answers."""

import pytest

import drtc
from drtc import reward
from programs import CORRECT, GARBAGE, HANGING, REFERENCE, WRONG, answer

KEYS = {"score", "correct", "speedup", "compiled", "reason"}


def test_a_correct_answer_scores_its_correctness_term_on_cpu():
    r = reward.compute_score("drtc", answer(CORRECT), REFERENCE, {"index": 0}, device="cpu")
    assert KEYS <= r.keys()
    assert r["correct"] is True and r["compiled"] is True
    assert r["score"] == 1.0
    assert r["speedup"] is None and r["timed"] is False
    assert "correctness only" in r["reason"]
    half = reward.compute_score("drtc", answer(CORRECT), REFERENCE, device="cpu",
                                correctness_weight=0.5)
    assert half["score"] == 0.5


def test_a_wrong_answer_scores_zero_with_the_failed_check():
    r = reward.compute_score("drtc", answer(WRONG), REFERENCE, device="cpu")
    assert r["score"] == 0.0 and r["correct"] is False
    assert r["compiled"] is True
    assert "values" in r["reason"] and "relative norm error" in r["reason"]


@pytest.mark.parametrize(
    "garbage, why",
    [
        (GARBAGE, "no code block"),
        ("```python\ndef triton_fused_operator(:\n```", "does not parse"),
        ("```python\nimport not_a_module_anywhere\n```", "import"),
        (None, "not a string"),
        (12345, "not a string"),
    ],
)
def test_garbage_scores_zero_and_never_raises(garbage, why):
    r = reward.compute_score("drtc", garbage, REFERENCE, device="cpu")
    assert r["score"] == 0.0 and r["correct"] is False
    assert why in r["reason"], r["reason"]


def test_the_batch_form_keeps_order():
    answers = [answer(CORRECT), GARBAGE, answer(WRONG), answer(CORRECT)]
    out = reward.compute_score(
        data_sources=["drtc"] * 4,
        solution_strs=answers,
        ground_truths=[REFERENCE] * 4,
        extra_infos=[{}] * 4,
        device="cpu",
    )
    assert [r["score"] for r in out] == [1.0, 0.0, 0.0, 1.0]
    assert [r["correct"] for r in out] == [True, False, False, True]


def test_a_hanging_candidate_is_killed_and_the_pool_keeps_serving():
    out = reward.compute_score(
        data_sources=["drtc"] * 3,
        solution_strs=[answer(HANGING), answer(CORRECT), answer(WRONG)],
        ground_truths=[REFERENCE] * 3,
        device="cpu",
        workers=1,
        timeout=12.0,
    )
    assert out[0]["score"] == 0.0 and "timeout" in out[0]["reason"], out[0]
    assert out[1]["score"] == 1.0, out[1]
    assert out[2]["score"] == 0.0 and "values" in out[2]["reason"]
    v = drtc.Verifier(device="cpu", workers=1, timeout=12.0)
    hung = v.verify(REFERENCE, HANGING)
    assert hung["verified"] is False and hung["failures"][0]["check"] == "timeout"
    # the checker kills the hanging answer's own process at its deadline and keeps serving
    # (no restart); on a loaded machine the pool's later deadline may expire first and
    # replace the worker once
    assert v.restarts <= 1
    assert v.verify(REFERENCE, CORRECT)["verified"] is True


def test_bad_options_are_errors_not_scores():
    with pytest.raises(ValueError, match="speedup_cap"):
        reward.compute_score("drtc", answer(CORRECT), REFERENCE, speedup_cap=1.0)
    with pytest.raises(ValueError, match="extract"):
        reward.compute_score("drtc", answer(CORRECT), REFERENCE, extract="middle")
    with pytest.raises(TypeError, match="ground_truths"):
        reward.compute_score(solution_strs=["x"])
    # a typo is an error, not a silently dropped option
    with pytest.raises(TypeError, match="did you mean 'speedup_cap'"):
        reward.compute_score("drtc", answer(CORRECT), REFERENCE, speed_cap=5)
    # what verl's managers pass to every reward function is accepted
    reward.compute_score("drtc", "no code here", REFERENCE, device="cpu",
                         sandbox_fusion_url=None, memory_limit_mb=1024)


def test_the_speed_term_is_capped_log_speedup():
    assert reward._speed_term(1.0, 10.0) == 0.0
    assert reward._speed_term(10.0, 10.0) == pytest.approx(1.0)
    assert reward._speed_term(100.0, 10.0) == 1.0
    assert reward._speed_term(0.5, 10.0) == pytest.approx(-0.30103, abs=1e-5)
    assert reward._speed_term(1e-9, 10.0) == -1.0


def test_gpu_reports_are_scored_with_the_decoupled_terms():
    # the scoring of a CUDA bench report, fed a report of the runtime's shape (this machine
    # has no GPU; the timing itself is the runtime's and is covered by its GPU checks)
    verified = {"verified": True, "failures": [], "reasons": []}
    timing = {"timed_outputs_ok": True, "timed_outputs_failures": []}
    fast = reward._score(verified, {"verify": verified, "timing": timing, "speedup": 2.0},
                         True, 1.0, 1.0, 10.0, False)
    assert fast["timed"] is True and fast["speedup"] == 2.0
    assert fast["score"] == pytest.approx(1.0 + 0.30103, abs=1e-5)
    assert fast["speedup_reward"] == pytest.approx(0.30103, abs=1e-5)
    slow = reward._score(verified, {"verify": verified, "timing": timing, "speedup": 0.5},
                         True, 1.0, 0.5, 10.0, False)
    assert slow["score"] == pytest.approx(1.0 - 0.5 * 0.30103, abs=1e-5)
    replayed = dict(timing, timed_outputs_ok=False, timed_outputs_failures=["values: output 0"])
    hack = reward._score(verified, {"verify": verified, "timing": replayed, "speedup": 50.0},
                         True, 1.0, 1.0, 10.0, False)
    assert hack["score"] == 0.0 and hack["correct"] is False
    assert "timed calls" in hack["reason"]
    untimed = reward._score(verified, {"verify": verified, "timing": None, "speedup": None,
                                       "timing_error": "CUDA error"}, True, 1.0, 1.0, 10.0, False)
    assert untimed["score"] == 1.0 and "not timed: CUDA error" in untimed["reason"]


def _python_without_torch(tmp_path):
    """A Python that lacks torch and triton: a bare venv of the interpreter running the
    tests (no site packages, no pip)."""
    import subprocess
    import sys

    env_dir = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import torch"], capture_output=True)
    assert probe.returncode != 0, "the bare venv sees torch"
    return python


def test_a_runtime_that_cannot_start_raises_at_first_use(tmp_path, monkeypatch):
    reward.close()
    monkeypatch.setenv("DRTC_PYTHON", str(_python_without_torch(tmp_path)))
    with pytest.raises(drtc.RuntimeEnvError) as e:
        reward.compute_score("drtc", answer(CORRECT), REFERENCE, device="cpu", workers=1,
                             timeout=33.0)
    message = str(e.value)
    assert "cannot verify answers" in message and "did not start" in message, message
    assert "torch" in message, message
    # the batch form too, and nothing was cached: the next call raises again
    with pytest.raises(drtc.RuntimeEnvError, match="did not start"):
        reward.compute_score(data_sources=["drtc"], solution_strs=[answer(CORRECT)],
                             ground_truths=[REFERENCE], device="cpu", workers=1, timeout=33.0)
    reward.close()


def test_a_batch_of_only_infrastructure_errors_raises(tmp_path, monkeypatch):
    import shutil
    import sys

    reward.close()
    monkeypatch.setenv("DRTC_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DRTC_PYTHON", sys.executable)
    options = dict(device="cpu", workers=1, timeout=34.0)
    # the pool starts fine and scores an answer ...
    assert reward.compute_score("drtc", answer(CORRECT), REFERENCE, **options)["score"] == 1.0
    # ... then the directory it writes the sources to becomes a file: every request fails
    # in drtc's machinery, before any answer runs
    sources = tmp_path / "home" / "python"
    shutil.rmtree(sources)
    sources.write_text("not a directory")
    with pytest.raises(drtc.RuntimeEnvError, match="all 2 answers .* infrastructure"):
        reward.compute_score(data_sources=["drtc"] * 2,
                             solution_strs=[answer(CORRECT), answer(WRONG)],
                             ground_truths=[REFERENCE] * 2, **options)
    with pytest.raises(drtc.RuntimeEnvError, match="all 1 answers"):
        reward.compute_score("drtc", answer(CORRECT), REFERENCE, **options)
    # garbage is still scored without the runtime, and never raises
    assert reward.compute_score("drtc", GARBAGE, REFERENCE, **options)["score"] == 0.0
    reward.close()


def test_some_infrastructure_errors_warn_and_are_marked():
    ok = {"verified": True, "failures": [], "reasons": []}
    broken = {"verified": False, "failures": [], "runtime_error": "cannot access `x`: gone"}
    scored = [reward._score(v, None, False, 1.0, 1.0, 10.0, False) for v in (ok, broken)]
    assert scored[0]["infrastructure_error"] is False and scored[0]["score"] == 1.0
    assert scored[1]["infrastructure_error"] is True and scored[1]["score"] == 0.0
    assert "infrastructure error" in scored[1]["reason"] and "gone" in scored[1]["reason"]
    assert scored[0].keys() == scored[1].keys()  # verl collects every key per answer
    with pytest.warns(RuntimeWarning, match="1 of 2 answers"):
        reward._check_infrastructure(scored)
    with pytest.raises(drtc.RuntimeEnvError, match="all 1 answers"):
        reward._check_infrastructure(scored[1:])
    reward._check_infrastructure(scored[:1])  # nothing to say


def test_the_reward_file_loads_by_path_without_its_package():
    # what verl does with `reward.custom_reward_function.path=<file>`: importlib, no parent
    # package, so no relative import may run
    import importlib.util

    spec = importlib.util.spec_from_file_location("custom_module_test", reward.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    r = module.compute_score("drtc", GARBAGE, REFERENCE)
    assert r["score"] == 0.0 and "no code block" in r["reason"]
