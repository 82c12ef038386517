"""drtc's reward and parquet inside verl's own classes (verl pinned in
python/tests/requirements-verl.txt; tests/verl_recipe.rs makes that environment and sets
DRTC_REQUIRE_VERL=1, so there a missing verl fails instead of skipping).

verl's trainer config is its own generated YAML with the README recipe's `reward.*`
overrides applied; the reward goes through verl's `load_reward_manager`, the reward loop's
`RewardLoopWorker` and its `naive` manager, on rows that verl's `RLHFDataset` read from
`drtc.dataset`'s parquet; the tokenizer is a byte-level BPE built here (no hub)."""

import json
import os
import pathlib
import re

import pytest

if os.environ.get("DRTC_REQUIRE_VERL") == "1":
    import verl  # noqa: F401 - fails loudly where verl must be present
else:
    pytest.importorskip("verl", reason="verl is not installed (tests/verl_recipe.rs installs it)")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402

import drtc  # noqa: E402
from drtc import reward  # noqa: E402
from programs import CORRECT, GARBAGE, REFERENCE, WRONG, answer  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def readme_reward_overrides():
    """The `reward.*` command-line overrides of the README's verl recipe."""
    text = (ROOT / "README.md").read_text()
    recipe = text[text.index("python3 -m verl.trainer.main_ppo"):]
    recipe = recipe[: recipe.index("```")]
    keys = re.findall(r"^\s*(\+?reward\.[^\s\\]+)", recipe, flags=re.M)
    assert keys, "the README's recipe sets no reward.* key"
    return keys


def verl_config(overrides, tokenizer_dir):
    """verl's generated PPO trainer config with `overrides` applied, as Hydra does for
    main_ppo's command line (`+key=value` adds a key, `key=value` must name one)."""
    import verl.trainer.config as config_pkg

    base = pathlib.Path(config_pkg.__file__).parent / "_generated_ppo_trainer.yaml"
    cfg = OmegaConf.load(base)
    OmegaConf.set_struct(cfg, True)
    for item in overrides:
        key, value = item.split("=", 1)
        if key.startswith("+"):
            with _open(cfg):
                OmegaConf.update(cfg, key[1:], yaml_value(value), force_add=True)
        else:
            # a key verl does not know is an error here, as it is for Hydra
            assert OmegaConf.select(cfg, key, default="<absent>") != "<absent>", (
                f"verl {verl_version()} has no config key {key}"
            )
            OmegaConf.update(cfg, key, yaml_value(value))
    with _open(cfg):
        cfg.actor_rollout_ref.model.path = str(tokenizer_dir)
    return cfg


def _open(cfg):
    from omegaconf import open_dict

    return open_dict(cfg)


def yaml_value(text):
    import yaml

    return yaml.safe_load(text)


def verl_version():
    from importlib.metadata import version

    return version("verl")


def resolve_shell(value):
    """The README's `$(python3 -c '...')` and `$HOME` are shell; the keys checked here are
    literal apart from those."""
    assert "$(" not in value, f"a reward key still needs the shell: {value}"
    return value


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory):
    """A byte-level BPE tokenizer trained on a few answers, saved as a transformers
    tokenizer directory (what `actor_rollout_ref.model.path` names)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=["<|pad|>", "<|eos|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator([answer(CORRECT), answer(WRONG), REFERENCE] * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<|pad|>",
        eos_token="<|eos|>",
        chat_template="{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                      "{% if add_generation_prompt %}assistant: {% endif %}",
    )
    out = tmp_path_factory.mktemp("tokenizer")
    fast.save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def train_parquet(tmp_path_factory):
    """`drtc.dataset` over one seed program (whole mode)."""
    d = tmp_path_factory.mktemp("data")
    seeds = d / "seeds.jsonl"
    seeds.write_text(json.dumps({"pytorch": REFERENCE}) + "\n")
    out = d / "train.parquet"
    written = drtc.dataset(str(seeds), str(out), mode="whole")
    assert written["written"][0][1] == 1, written
    return out


def test_the_readme_keys_are_those_verl_reads():
    overrides = readme_reward_overrides()
    keys = {o.split("=", 1)[0].lstrip("+") for o in overrides}
    assert "reward.custom_reward_function.path" in keys
    assert "reward.custom_reward_function.name" in keys
    assert "reward.reward_manager.name" in keys
    manager = dict(o.split("=", 1) for o in overrides)["reward.reward_manager.name"]
    from verl.experimental.reward_loop.reward_manager import get_reward_manager_cls

    assert get_reward_manager_cls(manager).__name__  # a name verl's reward loop registers


@pytest.mark.parametrize("how", ["pkg", "path"])
def test_verl_loads_the_reward_by_package_and_by_path(how):
    from verl.utils.import_utils import load_extern_object

    where = "pkg://drtc.reward" if how == "pkg" else reward.__file__
    fn = load_extern_object(module_path=where, object_name="compute_score")
    r = fn(data_source="drtc", solution_str=GARBAGE, ground_truth=REFERENCE, extra_info={})
    assert r["score"] == 0.0 and "no code block" in r["reason"]


def rows_from_verl_dataset(parquet, tokenizer):
    from verl.utils.dataset.rl_dataset import RLHFDataset

    data_cfg = OmegaConf.create({
        "prompt_key": "prompt",
        "max_prompt_length": 4096,
        "filter_overlong_prompts": False,
        "truncation": "error",
        "cache_dir": str(parquet.parent / "cache"),
    })
    ds = RLHFDataset(data_files=[str(parquet)], tokenizer=tokenizer, config=data_cfg)
    return [ds[i] for i in range(len(ds))]


def batch_of(rows, answers, tokenizer):
    """A DataProto as the rollout hands it to the reward loop: prompts, responses and the
    attention mask, with each row's non-tensor fields."""
    from verl import DataProto

    prompts = [tokenizer.apply_chat_template(r["raw_prompt"], add_generation_prompt=True,
                                             tokenize=False) for r in rows]
    p = tokenizer(prompts, return_tensors="pt", padding=True, padding_side="left")
    a = tokenizer(answers, return_tensors="pt", padding=True, padding_side="right")
    mask = torch.cat([p["attention_mask"], a["attention_mask"]], dim=1)
    tensors = {
        "prompts": p["input_ids"],
        "responses": a["input_ids"],
        "input_ids": torch.cat([p["input_ids"], a["input_ids"]], dim=1),
        "attention_mask": mask,
    }
    non_tensors = {
        key: np.array([r[key] for r in rows], dtype=object)
        for key in ("data_source", "reward_model", "extra_info", "raw_prompt")
    }
    return DataProto.from_dict(tensors=tensors, non_tensors=non_tensors)


def test_verls_reward_loop_scores_drtc_rows_with_drtcs_reward(tokenizer_dir, train_parquet):
    from transformers import AutoTokenizer

    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker

    overrides = [resolve_shell(o) for o in readme_reward_overrides()]
    # the recipe's options, plus the CPU and a short timeout for this test
    overrides += ["+reward.custom_reward_function.reward_kwargs.device=cpu",
                  "+reward.custom_reward_function.reward_kwargs.workers=1"]
    cfg = verl_config(overrides, tokenizer_dir)
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    rows = rows_from_verl_dataset(train_parquet, tokenizer)
    assert len(rows) == 1 and rows[0]["data_source"] == "drtc"
    assert rows[0]["reward_model"]["ground_truth"] == REFERENCE
    answers = [answer(CORRECT), answer(WRONG), GARBAGE]
    data = batch_of(rows * len(answers), answers, tokenizer)

    worker = RewardLoopWorker(cfg)
    assert type(worker.reward_manager).__name__ == "NaiveRewardManager"
    # the worker's event loop, as in its Ray actor
    outputs = worker.loop.run_until_complete(worker.compute_score_batch(data))
    scores = [o["reward_score"] for o in outputs]
    assert scores == [1.0, 0.0, 0.0], outputs
    info = [o["reward_extra_info"] for o in outputs]
    assert [i["correct"] for i in info] == [True, False, False]
    assert "relative norm error" in info[1]["reason"]
    assert "no code block" in info[2]["reason"]
    assert all(i.keys() == info[0].keys() for i in info)  # verl stacks each key per answer
    # the same answers through the direct call score the same
    direct = reward.compute_score(data_sources=["drtc"] * 3, solution_strs=answers,
                                  ground_truths=[REFERENCE] * 3, device="cpu", workers=1)
    assert [d["score"] for d in direct] == scores

