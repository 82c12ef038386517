"""The timing loop's stopping rule (`drtc_worker/timing.py`): a contender's median is
settled once its 95% interval is within 1% of it (after 20 calls and 25 ms); the loop stops
when every contender is settled, or every one is past the fixed rule (50 calls, 100 ms).
Pure functions, no GPU.

    python check_timing_rule.py WORKER_DIR

Prints one JSON object of cases and their answers."""

import json
import random
import sys

sys.path.insert(0, sys.argv[1])
from drtc_worker import timing  # noqa: E402

rng = random.Random(0)
steady = [2.0 * (1 + rng.uniform(-0.002, 0.002)) for _ in range(20)]  # 0.2% jitter
noisy = [2.0 * (1 + rng.uniform(-0.2, 0.2)) for _ in range(20)]  # 20% jitter
few = steady[:19]
tiny = [0.01] * 40  # settled, but 0.4 ms of calls
outlier = steady[:18] + [9.0, 9.5]  # two slow calls do not move a settled median
print(json.dumps({
    "steady": timing.settled(steady),
    "noisy": timing.settled(noisy),
    "few": timing.settled(few),
    "tiny": timing.settled(tiny),
    "outlier": timing.settled(outlier),
    "interval_orders": list(timing.median_interval([5.0, 1.0, 3.0, 2.0, 4.0])),
    "stop_all_settled": timing.enough_calls({"reference": steady, "candidate": steady}),
    "stop_one_noisy": timing.enough_calls({"reference": steady, "candidate": noisy}),
    "stop_fixed_rule": timing.enough_calls({"reference": noisy * 3, "candidate": noisy * 3}),
}))
