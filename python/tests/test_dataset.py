"""`drtc dataset` writes Parquet that pyarrow reads back with the columns verl uses."""

import json
import os
import pathlib
import subprocess

import pyarrow.parquet as pq
import pytest

import drtc
from drtc import reward

ROOT = pathlib.Path(__file__).resolve().parents[2]
SEEDS = ROOT / "data" / "seeds" / "list_a.jsonl"
EXAMPLES = ROOT / "data" / "examples"


def drtc_bin():
    exe = os.environ.get("DRTC_BIN")
    if not exe:
        pytest.fail("DRTC_BIN must name the drtc binary (tests/python_package.rs sets it)")
    return exe


def check_verl_columns(rows, mode):
    assert rows
    for r in rows:
        assert r["data_source"] == "drtc"
        assert r["ability"] == "triton_kernel"
        assert [m["role"] for m in r["prompt"]] == ["system", "user"]
        assert all(isinstance(m["content"], str) and m["content"] for m in r["prompt"])
        assert r["reward_model"]["style"] == "rule"
        truth = r["reward_model"]["ground_truth"]
        assert truth in r["prompt"][-1]["content"]
        info = r["extra_info"]
        assert {"split", "index", "ops", "level", "flops"} <= info.keys()
        assert info["mode"] == mode
        program = drtc.parse(truth)
        assert info["flops"] == program.flops
        assert info["ops"] == program.ops
    levels = [r["extra_info"]["level"] for r in rows]
    assert levels == sorted(levels), "rows are in curriculum order"
    assert [r["extra_info"]["index"] for r in rows] == list(range(len(rows)))


def test_cli_whole_mode_over_seed_programs(tmp_path):
    out = tmp_path / "train.parquet"
    run = subprocess.run(
        [drtc_bin(), "dataset", str(SEEDS), "-o", str(out), "--mode", "whole"],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr
    table = pq.read_table(out)
    assert table.column_names == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    rows = table.to_pylist()
    seeds = [json.loads(line)["pytorch"] for line in SEEDS.read_text().splitlines() if line.strip()]
    assert len(rows) == len(set(seeds))
    check_verl_columns(rows, "whole")
    assert all(r["extra_info"]["split"] == "train" for r in rows)
    # one file per level, together the whole set
    per_level = sorted(tmp_path.glob("train.level*.parquet"))
    assert per_level
    total = 0
    for f in per_level:
        level = int(f.name.split(".level")[1].split(".")[0])
        part = pq.read_table(f).to_pylist()
        assert {r["extra_info"]["level"] for r in part} == {level}
        total += len(part)
    assert total == len(rows)


def test_regions_mode_and_a_held_out_split(tmp_path):
    out = tmp_path / "regions.parquet"
    result = drtc.dataset(str(EXAMPLES), str(out), max_ops=2, test_fraction=0.5)
    assert not result["skipped"]
    rows = pq.read_table(out).to_pylist()
    test_file = tmp_path / "regions.test.parquet"
    held = pq.read_table(test_file).to_pylist() if test_file.exists() else []
    assert len(rows) + len(held) >= 2
    check_verl_columns(rows, "regions")
    for r in rows + held:
        assert r["extra_info"]["num_ops"] <= 2
        assert r["extra_info"]["entry_point"] == "triton_fused_operator"
        assert "#" in r["extra_info"]["source"]
    assert all(r["extra_info"]["split"] == "test" for r in held)


def test_a_dataset_row_is_scored_by_the_reward(tmp_path):
    out = tmp_path / "one.parquet"
    drtc.dataset(str(SEEDS), str(out), mode="whole")
    row = pq.read_table(out).slice(0, 1).to_pylist()[0]
    truth = row["reward_model"]["ground_truth"]
    module = drtc.compile(truth, device="cpu").source
    r = reward.compute_score(row["data_source"], f"```python\n{module}```", truth,
                             row["extra_info"], device="cpu", strict=False)
    assert r["correct"] is True, r


def test_cli_reports_bad_input(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"pytorch": "import torch\\n"}\n')
    run = subprocess.run([drtc_bin(), "dataset", str(bad), "-o", str(tmp_path / "x.parquet")],
                         capture_output=True, text=True)
    assert run.returncode != 0
    assert "no task could be made" in run.stderr and "skipped" in run.stderr
