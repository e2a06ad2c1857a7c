"""What "best" means, in one place (core.best): the tuned choice for this card and shape class when the
cache has one, else the card rule (the largest block tile whose grid fills the card, among the kernels it can
run); `show`, `specialize`, `matmul` and `count_loads` agree on it; and the committed H200 data agree with
the rule."""
import dataclasses
import json

import numpy as np
import pytest

from tiledlab import data
from tiledlab.core import best, card
from tiledlab.core.launch import matmul, prepare, resolve, specialize
from tiledlab.core.registry import KERNELS, predicted
from tiledlab.counting.count import count_loads
from tiledlab.notebook import show

H200, T4 = card.KNOWN["h200"], card.KNOWN["t4"]
simulator_only = pytest.mark.skipif(not card.SIMULATOR, reason="TILEDLAB_CARD picks the simulator's card; a GPU's "
                                    "card is its own")
LARGE, SMALL, NO_CP_ASYNC = best.CANDIDATES


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty tune cache of this test's own; write(entries) fills it."""
    monkeypatch.setenv(best.CACHE_ENV, str(tmp_path))
    best._reported.clear()

    def write(entries, version=best.VERSION):
        best.cache_path().write_text(json.dumps({"version": version, "entries": entries}))
    return write


def entry(on, shape, kernel):
    return {"card": dataclasses.asdict(on), "shape_class": list(best.shape_class(*shape)), "kernel": kernel,
            "measured": {"ms": 1.0, "backend": "simulator" if card.SIMULATOR else "gpu"}}  # timed here


def test_a_shape_class_rounds_each_dimension_up_to_a_power_of_two_and_marks_an_edge():
    assert best._tiles() == (128, 16, 256)  # what every candidate's BM, BK, BN divide
    assert best.shape_class(1000, 1024, 1025) == ("≤1024", "1024", "≤2048")
    assert best.shape_class(1, 3, 4097) == ("≤1", "≤4", "≤8192")
    assert best.shape_class(3000, 3000, 3000) != best.shape_class(4096, 4096, 4096)  # another tile wins at each
    assert best.shape_class(3072, 2304, 4096) == best.shape_class(4096, 4096, 4096)


@pytest.mark.parametrize("n, name", [(64, SMALL), (1024, SMALL), (2048, LARGE), (8192, LARGE)])
def test_each_size_gets_the_largest_tile_that_fills_the_h200(n, name, cache):
    assert best.choose(n, n, n, H200) == name


@pytest.mark.parametrize("n, name", [(64, NO_CP_ASYNC), (1024, NO_CP_ASYNC), (2048, LARGE), (8192, LARGE)])
def test_a_card_without_cp_async_gets_only_what_it_can_run(n, name, cache):
    assert KERNELS[SMALL].refusal(T4) and best.choose(n, n, n, T4) == name
    assert KERNELS[name].refusal(T4) is None


def test_the_choice_follows_the_grid_and_the_card(cache):
    assert best.blocks(KERNELS[LARGE], 1024, 1024) == 32  # too few for 132 SMs; 4096×1024 makes 128
    assert best.choose(4096, 64, 1024, H200) == LARGE
    assert best.choose(4096, 64, 1024, dataclasses.replace(H200, sms=200)) == SMALL  # more SMs: smaller tiles
    for n in (512, 1024, 2048, 3000, 4096):
        chosen = KERNELS[best.choose(n, n, n, H200)]
        assert chosen.name == SMALL or best.blocks(chosen, n, n) >= best.FILL * H200.sms


@simulator_only
def test_the_simulator_models_the_committed_h200_unless_told_otherwise(monkeypatch):
    device = data.load("h200/device.csv").iloc[0]
    assert card.current() == H200 and H200.name == device["device"]
    assert all(getattr(H200, f) == device[f] for f in card.DEVICE_ATTRIBUTES)
    assert "%d.%d" % H200.compute_capability == device["compute_capability"]
    monkeypatch.setenv(card.ENV, "t4")
    assert card.current() == T4 and "Tesla T4 (sm_75, 40 SMs)" in card.describe()


def test_every_path_agrees_on_what_best_is(cache, rng_seed=3):
    rng = np.random.default_rng(rng_seed)
    A, B = rng.random((70, 37), dtype=np.float32), rng.random((37, 90), dtype=np.float32)
    chosen = best.choose(70, 37, 90)
    assert prepare("best", A, B).name == resolve("best", (70, 37, 90)).name == chosen
    assert count_loads("best", A, B).kernel == chosen
    assert specialize("best", shape=(70, 37, 90)) is KERNELS[chosen].build()
    assert show("best", shape=(70, 37, 90)).data == KERNELS[chosen].source()
    assert resolve("best").name == best.choose(*best.SHAPE)  # no shape: best.SHAPE
    np.testing.assert_allclose(matmul(A, B, "best"), A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)


@simulator_only
def test_a_kernel_the_card_cannot_run_is_refused_before_compiling_in_one_line(monkeypatch, cache):
    monkeypatch.setenv(card.ENV, "t4")
    A = np.ones((8, 8), np.float32)
    with pytest.raises(ValueError) as refused:
        matmul(A, A, "a_64x128x8_8x8_s3")
    assert str(refused.value) == ("a_64x128x8_8x8_s3: Tesla T4 (sm_75, 40 SMs) cannot run it: cp.async needs "
                                  "compute capability 8.0 or higher")
    with pytest.raises(ValueError, match="Tesla T4"):
        count_loads("h_64x128x8_8x8_s3", A, A)
    np.testing.assert_allclose(matmul(A, A, "best"), A @ A)


def test_a_tuned_choice_is_used_for_its_own_card_and_shape_class_only(cache):
    cache([entry(H200, (1000, 1000, 1000), "s_64x64x8_4x4")])
    assert best.choose(1000, 1000, 1000, H200) == best.choose(1000, 999, 1000, H200) == "s_64x64x8_4x4"
    assert best.choose(2048, 2048, 2048, H200) == LARGE  # another shape class: the rule
    assert best.choose(1024, 1024, 1024, H200) == SMALL  # no edge: another class
    assert best.choose(1000, 1000, 1000, dataclasses.replace(H200, sms=114)) == SMALL  # another card: the rule
    cache([entry(H200, (1000,) * 3, "s_64x64x8_4x4"), entry(H200, (1000,) * 3, "gen_warp")])
    assert best.choose(1000, 1000, 1000, H200) == "gen_warp"  # the later entry replaces the earlier


def test_a_tuned_choice_that_no_longer_holds_is_not_used(cache):
    cache([entry(H200, (64, 64, 64), "no_such_kernel"), entry(T4, (64, 64, 64), SMALL)])
    assert best.choose(64, 64, 64, H200) == SMALL  # the registry lost the kernel: the rule
    assert best.choose(64, 64, 64, T4) == NO_CP_ASYNC  # the card cannot run the cached kernel: the rule


@pytest.mark.parametrize("text", ["{not json", json.dumps({"version": 1, "entries": []}), json.dumps([1])])
def test_a_cache_that_cannot_be_read_is_reported_once_and_ignored(cache, text):
    best.cache_path().write_text(text)
    with pytest.warns(UserWarning, match="tune.json are ignored"):
        assert best.choose(64, 64, 64, H200) == SMALL
    assert best.choose(64, 64, 64, H200) == SMALL  # once: no second warning (pytest would fail on an error)


def test_bad_input_to_best_is_refused_before_launch():
    with pytest.raises(ValueError, match="float32"):
        matmul(np.ones((4, 4)), np.ones((4, 4), np.float32), "best")
    with pytest.raises(ValueError, match="A's columns"):
        matmul(np.ones((4, 5), np.float32), np.ones((4, 4), np.float32), "best")


def test_bk16_three_stages_counted_exactly():
    # K = 40: two whole tiles of 16 and a partial one; N = 130 and K odd elsewhere take the plain path
    rng = np.random.default_rng(5)
    for M, K, N in ((64, 40, 128), (66, 13, 130)):
        A, B = rng.random((M, K), dtype=np.float32), rng.random((K, N), dtype=np.float32)
        c = count_loads("a_64x128x16_8x8_s3", A, B)
        want = predicted("a_64x128x16_8x8_s3", M, K, N)
        np.testing.assert_allclose(c.C, A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)
        assert (int(c.maps["A"].sum()), int(c.maps["B"].sum())) == (want["A"], want["B"])
        assert int(c.shared_reads.sum()) == want["reads"]
        assert not any(c.hazards.values()), c.hazards


def test_the_committed_h200_run_agrees_with_the_choice():
    """At every N of waits.csv (the H200's two candidates, one run), the kernel the rule picks is the faster
    of the two, within 1 % of the fastest numba kernel of the run (notebook 7: "the rule and the stopwatch
    agree"), and at least 80 % of cuBLAS."""
    waits = data.load("h200/waits.csv")
    timed = [k for k in best.CANDIDATES if k in set(waits["kernel"])]
    assert len(timed) == 2
    for n, g in waits.groupby("N"):
        pct = g.set_index("kernel")["pct_cublas"]
        chosen = best.by_rule(int(n), int(n), H200, KERNELS)
        assert pct[chosen] == max(pct[k] for k in timed), (n, chosen)
        assert pct[chosen] >= 0.99 * pct.drop(["cublas", "triton"]).max(), (n, chosen)
        assert pct[chosen] >= 80, (n, chosen, pct[chosen])


def test_notebook_7s_account_of_the_async_run_holds():
    """The sentences of notebook 7's account, against the committed data they describe."""
    asy = data.load("h200/async.csv")
    mine = asy[asy["kernel"].str.match(r"^[sah]_")]
    for n, g in mine.groupby("N"):
        fastest = g.loc[g["tflops"].idxmax(), "kernel"]
        if n == asy["N"].min():  # "at the smallest N ... the BK = 16 rung is the fastest numba kernel"
            assert fastest == "a_64x128x16_8x8_s3"
        else:  # "from N = 2048 up ... the 128×256 register-prefetch rung is faster than every asynchronous one"
            assert fastest == "s_128x256x8_8x16_warp"
        assert g["pct_cublas"].max() < 100  # "no numba kernel reaches it at any N"
    prof = data.load("h200/async_profile.csv").set_index("kernel")
    ours, peer, blas = (prof.loc[k] for k in ("s_128x256x8_8x16_warp", "triton", "cublas"))
    # "almost the same number of instructions ... the same few warps per SM"
    assert abs(ours["inst_issued"] / blas["inst_issued"] - 1) < 0.03
    assert abs(peer["inst_issued"] / blas["inst_issued"] - 1) < 0.03
    assert ours["achieved_occupancy_pct"] == pytest.approx(blas["achieved_occupancy_pct"], abs=0.5)
    # "what differs is ... issue active", "short_scoreboard about twice as often", Triton's largest: dispatch_stall
    assert blas["issue_active_pct"] > ours["issue_active_pct"] + 5
    assert 1.5 < ours["stall_short_scoreboard_pct"] / blas["stall_short_scoreboard_pct"] < 2.5
    stalls = {c[6:-4]: peer[c] for c in prof.columns if c.startswith("stall_") and c.endswith("_pct")}
    assert max((v, k) for k, v in stalls.items() if k not in ("selected", "not_selected"))[1] == "dispatch_stall"
