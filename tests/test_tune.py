"""`tune` on the simulator: it chooses the fastest correct candidate, caches the choice per card and shape class
where core.best reads it, and a choice made on one card is never used on another."""
import dataclasses
import json

import pytest
from conftest import simulator_only

from tiledlab.core import best, card
from tiledlab.core.registry import KERNELS, family
from tiledlab.experiments import tune
from tiledlab.experiments.timing import Timing

SMALL = ["s_64x64x8_4x4", "a_64x128x8_8x8_s3"]  # two candidates, quick on the simulator


def timer_of(ms):
    """A timer that says each kernel takes ms[name] (the simulator's own times say nothing of a GPU's)."""
    return lambda launch: Timing(ms[launch.name], ms[launch.name], ms[launch.name], 1, "fake")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(best.CACHE_ENV, str(tmp_path))
    best._reported.clear()
    return tmp_path / "tune.json"


def chosen(M, K, N, on=None):
    """The kernel `tune` chose for this shape's class on card `on` (the card in hand by default), or None."""
    return best.tuned(M, K, N, on or tune.card(), KERNELS)


def test_the_fastest_candidate_is_chosen_and_cached_per_shape_class(cache):
    rows = tune.run([(40, 24, 70)], SMALL, timer_of({SMALL[0]: 2.0, SMALL[1]: 1.0}), blas=None)
    assert best.cache_path() == cache and [r["chosen"] for r in rows] == [False, True]
    saved = json.loads(cache.read_text())
    assert saved["version"] == best.VERSION and len(saved["entries"]) == 1
    entry = saved["entries"][0]
    assert entry["card"] == json.loads(json.dumps(dataclasses.asdict(card.current())))
    assert entry["shape_class"] == ["≤64", "≤32", "≤128"] and entry["kernel"] == SMALL[1]
    assert all(r["rel_err"] < 1e-5 for r in rows)
    assert chosen(33, 17, 100) == SMALL[1] and chosen(40, 24, 129) is None  # another class
    assert best.choose(33, 17, 100) == SMALL[1]  # what `best` runs there now


def test_a_choice_is_used_only_on_the_card_it_was_measured_on(cache, monkeypatch):
    tune.run([(40, 24, 70)], SMALL, timer_of({SMALL[0]: 2.0, SMALL[1]: 1.0}), blas=None)
    first, other = card.current(), card.KNOWN["rtx4090"]
    monkeypatch.setattr(tune, "card", lambda: other)
    assert chosen(40, 24, 70) is None  # the device changed: tune again
    tune.run([(40, 24, 70)], SMALL, timer_of({SMALL[0]: 1.0, SMALL[1]: 2.0}), blas=None)
    assert chosen(40, 24, 70) == SMALL[0] and chosen(40, 24, 70, on=first) == SMALL[1]
    assert len(json.loads(cache.read_text())["entries"]) == 2


def test_shapes_of_one_class_share_the_choice_with_the_least_relative_time():
    rows = [{"M": m, "K": 64, "N": 64, "kernel": k, "ms": ms, "tflops": 1.0, "pct_cublas": None, "rel_err": 0.0}
            for m, k, ms in [(60, "a", 1.0), (60, "b", 1.1), (64, "a", 3.0), (64, "b", 1.0)]]
    entry = tune.choice(rows, card.KNOWN["a100"])
    assert entry["kernel"] == "b" and entry["shape_class"] == ["≤64", "64", "≤64"]  # a: 1 + 3 = 4, b: 1.1 + 1 = 2.1
    assert card.Card.of(entry["card"]) == card.KNOWN["a100"]
    rows[3]["rel_err"] = 1.0  # b wrong at one shape of the class: never chosen
    assert tune.choice(rows, card.KNOWN["a100"])["kernel"] == "a"


def test_a_wrong_candidate_is_never_chosen(cache, monkeypatch):
    real = tune.rel_err
    monkeypatch.setattr(tune, "rel_err", lambda C, ref: real(C * 1.01, ref))  # every result off by 1 %
    with pytest.raises(ValueError, match="no candidate computed"):
        tune.run([(40, 24, 70)], SMALL, timer_of({SMALL[0]: 2.0, SMALL[1]: 1.0}), blas=None)


def test_candidates_the_card_cannot_run_are_not_measured():
    t4, rtx = card.KNOWN["t4"], card.KNOWN["rtx4090"]
    assert KERNELS["a_64x128x16_8x8_s3"].refusal(t4) and KERNELS["w_128x256x8_8x16_warp16x2"].refusal(t4) is None
    small = dataclasses.replace(rtx, shared_per_block_optin_bytes=48 * 1024)  # no more than 48 KiB for a block
    dynamic = family("dynamic")
    assert dynamic and all(KERNELS[name].refusal(rtx) is None for name in dynamic)  # 99 KiB hold their tiles
    assert all(KERNELS[name].refusal(small) for name in dynamic) and KERNELS["a_64x128x16_8x8_s3"].refusal(small) is None
    rows = tune.timed_at(40, 24, 70, t4, SMALL, timer_of({SMALL[0]: 2.0, SMALL[1]: 1.0}), blas=None)
    assert [r["kernel"] for r in rows] == [SMALL[0]]  # a_...: cp.async, which the T4 has not


def test_a_cache_that_is_not_json_is_reported_with_what_to_do_and_replaced(cache):
    cache.write_text("not json")
    with pytest.warns(UserWarning, match="run `python -m tiledlab tune` again"):
        assert chosen(64, 64, 64) is None
    tune.run([(40, 24, 70)], SMALL, timer_of({SMALL[0]: 2.0, SMALL[1]: 1.0}), blas=None)
    assert chosen(40, 24, 70) == SMALL[1] and len(json.loads(cache.read_text())["entries"]) == 1


def test_rows_are_handed_on_after_every_shape_class(cache):
    seen = []
    rows = tune.run([(40, 24, 70), (100, 24, 70)], SMALL, timer_of({SMALL[0]: 2.0, SMALL[1]: 1.0}), blas=None,
                    saved=lambda rows: seen.append(len(rows)))
    assert seen == [2, 4] and len(rows) == 4  # two classes of two candidates: a tune stopped later keeps the first


@simulator_only  # a tune here records the simulator as its backend
def test_a_choice_is_used_only_where_it_was_timed_gpu_or_simulator(cache, monkeypatch):
    """The simulator models an H200's card but times Python: its choice must never steer a real H200's "best"."""
    tune.run([(40, 24, 70)], SMALL, timer_of({SMALL[0]: 2.0, SMALL[1]: 1.0}), blas=None)
    saved = json.loads(cache.read_text())
    assert saved["entries"][0]["measured"]["backend"] == "simulator" and best.choose(33, 17, 100) == SMALL[1]
    monkeypatch.setattr(best, "SIMULATOR", False)  # the same card, on a GPU
    assert best.choose(33, 17, 100) != SMALL[1] and best.measured_on({"measured": "free form"}) == "gpu"
    saved["entries"][0]["measured"]["backend"] = "gpu"
    cache.write_text(json.dumps(saved))
    assert best.choose(33, 17, 100) == SMALL[1]


@simulator_only  # a tune here records the simulator as its backend
def test_a_simulator_tune_keeps_the_gpu_s_choice_for_the_same_card_and_class(cache, monkeypatch):
    tune.run([(40, 24, 70)], SMALL, timer_of({SMALL[0]: 2.0, SMALL[1]: 1.0}), blas=None)
    saved = json.loads(cache.read_text())
    saved["entries"][0]["measured"]["backend"] = "gpu"  # as a GPU's tune of this card wrote it
    cache.write_text(json.dumps(saved))
    tune.run([(40, 24, 70)], SMALL, timer_of({SMALL[0]: 1.0, SMALL[1]: 2.0}), blas=None)  # the simulator's, again
    entries = json.loads(cache.read_text())["entries"]
    assert [(e["measured"]["backend"], e["kernel"]) for e in entries] == [("gpu", SMALL[1]), ("simulator", SMALL[0])]
    monkeypatch.setattr(best, "SIMULATOR", False)
    assert best.choose(33, 17, 100) == SMALL[1]  # the GPU still runs what the GPU chose


@simulator_only  # a tune here records the simulator as its backend
def test_the_command_says_on_the_simulator_that_its_choices_stay_there(cache, tmp_path, tiledlab_cli):
    result = tiledlab_cli("tune", "--shape", "10x10x10", "--kernels", SMALL[0], "--out", tmp_path / "out")
    assert result.returncode == 0 and (tmp_path / "out" / "tune.csv").is_file()
    assert "its choices steer `best` on the simulator only" in result.stderr
