"""Shared verification actors on a running Ray cluster (one this test starts, as verl's
job would have): the reward with ``ray=ADDRESS`` starts named, detached actors in the
``drtc`` namespace, a second client (another pool, as another reward worker) finds the same
actors instead of starting its own, both score while sharing them, and
``stop_shared_actors`` ends them."""

import threading

import ray

import drtc
from drtc import reward
from programs import CORRECT, REFERENCE, WRONG, answer


def _ours():
    return sorted(a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
                  if a["namespace"] == "drtc" and a["name"].startswith("drtc-verifier-cpu-"))


def test_reward_workers_share_the_named_actors():
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=100 * 1024 * 1024,
             log_to_driver=False)
    try:
        address = ray.get_runtime_context().gcs_address
        first = reward.compute_score(
            data_sources=["drtc"] * 2, solution_strs=[answer(CORRECT), answer(WRONG)],
            ground_truths=[REFERENCE] * 2, device="cpu", workers=2, ray=address)
        assert [r["correct"] for r in first] == [True, False]
        names = _ours()
        assert len(names) == 2, names
        other = drtc.Verifier(device="cpu", workers=2, ray=address, ray_shared=True)
        out = {}

        def score():
            out["reward"] = reward.compute_score(
                data_sources=["drtc"] * 2, solution_strs=[answer(WRONG), answer(CORRECT)],
                ground_truths=[REFERENCE] * 2, device="cpu", workers=2, ray=address)

        t = threading.Thread(target=score)
        t.start()
        mine = other.verify_many([(REFERENCE, CORRECT)] * 2)
        t.join()
        assert [r["correct"] for r in out["reward"]] == [False, True]
        assert [r["verified"] for r in mine] == [True, True]
        assert _ours() == names  # found, not started again
        summary = other.ray_summary()
        assert summary["cluster"] == f"cluster at {address}", summary
        assert sum(a["requests"] for a in summary["actors"]) == 2
        reward.close()
        del other
        assert reward.stop_shared_actors(address=address) == 2
    finally:
        ray.shutdown()
