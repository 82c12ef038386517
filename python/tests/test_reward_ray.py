"""The reward's batch form through drtc's verification actors on a Ray cluster (a local one
of two CPUs, started for the test) scores every answer as the direct form does: the same
scores, verdicts and failed checks. (The trial seeds of a model's answer are drawn per
request, so the figures in a reason differ from run to run, locally as on Ray.)"""

import re

from drtc import reward
from programs import CORRECT, GARBAGE, REFERENCE, WRONG, answer


def _comparable(r):
    """The result without its report, the figures in its reason masked."""
    out = {k: v for k, v in r.items() if k != "report"}
    out["reason"] = re.sub(r"[-+]?\d[\d.e+-]*", "#", r["reason"])
    return out


def test_the_batch_form_through_ray_equals_the_direct_one():
    answers = [answer(CORRECT), GARBAGE, answer(WRONG), answer(CORRECT), answer(WRONG)]
    options = dict(data_sources=["drtc"] * 5, solution_strs=answers,
                   ground_truths=[REFERENCE] * 5, extra_infos=[{}] * 5, device="cpu",
                   workers=2, keep_report=True)
    direct = reward.compute_score(**options)
    through = reward.compute_score(**options, ray="local")
    assert [_comparable(r) for r in through] == [_comparable(r) for r in direct]
    assert [r["correct"] for r in through] == [True, False, False, True, False]
    assert "values" in through[2]["reason"]
    checks = [[f["check"] for f in (r.get("report") or {}).get("verify", {}).get("failures", [])]
              for r in through]
    assert checks == [[f["check"] for f in (r.get("report") or {}).get("verify", {}).get(
        "failures", [])] for r in direct]
    assert checks[2] and checks[4]
    summary = reward._pool("cpu", 60.0, 2, "local").ray_summary()
    assert summary["cluster"] == "local cluster" and len(summary["actors"]) == 2
    assert sum(a["requests"] for a in summary["actors"]) == 4  # the garbage never left
    assert summary["failures"] == {}
    reward.close()
