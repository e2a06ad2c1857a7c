"""What "best" means, in one place (core.best): the tuned choice for this card and shape class when the
cache has one, else the model of the card (waves of blocks per SM, padded tiles, each kernel's measured rate);
`show`, `specialize`, `matmul` and `count_loads` agree on it; the model reproduces the committed H200 runs'
winners, also at each shape left out of them, its two constants are the fit of those runs, and every card gets a
kernel it can run."""
import dataclasses
import json
import math
import sys
import time

import numpy as np
import pytest

import tiledlab

from tiledlab import data
from tiledlab.core import best, card
from tiledlab.core.launch import matmul, prepare, resolve, specialize
from tiledlab.core.registry import KERNELS, predicted
from tiledlab.counting.count import count_loads, count_on_simulator
from tiledlab.notebook import show

H200, H100, T4 = card.KNOWN["h200"], card.KNOWN["h100"], card.KNOWN["t4"]
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


def winners(table):
    """{(M, K, N): {kernel: median seconds}} of the CANDIDATES a same-run table (best._table) timed."""
    shapes = {shape for name in best.CANDIDATES for shape in table.get(name, {})}
    return {s: {name: table[name][s] for name in best.CANDIDATES if s in table.get(name, {})} for s in shapes}


def test_the_model_picks_within_3_percent_of_the_fastest_at_every_committed_h200_shape(monkeypatch):
    """Among the candidates the H200 run timed (the split-K rungs came after it)."""
    timed = winners(best._table("h200"))
    assert len(timed) == 12
    monkeypatch.setattr(best, "CANDIDATES", tuple(set().union(*timed.values())))
    monkeypatch.setattr(best, "SPLIT_K", ())
    for shape, ms in timed.items():
        chosen = best.by_model(*shape, H200, KERNELS)
        assert ms[chosen] <= 1.03 * min(ms.values()), (shape, chosen, ms)


def test_left_out_of_the_data_each_shape_is_still_chosen_within_3_percent(monkeypatch):
    """The model at shapes it has not seen: each committed shape removed from the table in turn, the rates
    taken from the others."""
    full = best._table("h200")
    monkeypatch.setattr(best, "CANDIDATES", tuple(set().union(*winners(full).values())))
    monkeypatch.setattr(best, "SPLIT_K", ())
    for shape, ms in winners(full).items():
        without = {k: {s: t for s, t in v.items() if s != shape} for k, v in full.items()}
        monkeypatch.setattr(best, "measured", lambda card: (H200, without))
        chosen = best.by_model(*shape, H200, KERNELS)
        assert ms[chosen] <= 1.03 * min(ms.values()), (shape, chosen, ms)


def test_the_model_s_two_constants_are_the_fit_of_the_committed_runs(monkeypatch):
    """WARPS_TO_FILL and K_OVERHEAD make a kernel's rate per unit of modelled work agree most across the twelve
    H200 shapes (the least mean spread of its logarithm) among the values around them."""
    table = best._table("h200")

    def spread(warps, overhead):
        monkeypatch.setattr(best, "WARPS_TO_FILL", warps)
        monkeypatch.setattr(best, "K_OVERHEAD", overhead)
        logs = [[math.log(best.work(KERNELS[k], H200, *s) / t) for s, t in table[k].items()] for k in best.CANDIDATES
                if k in table]
        return sum(float(np.std(v)) for v in logs) / len(logs)
    fitted = (best.WARPS_TO_FILL, best.K_OVERHEAD)
    grid = [(w, o) for w in (3, 4, 5, 6, 8) for o in (0, 32, 64, 128, 256)]
    assert min(grid, key=lambda wo: spread(*wo)) == fitted


def test_at_3000_cubed_the_third_round_of_the_large_tile_costs_it_the_choice(cache):
    """288 blocks of 128×256 for 132 SMs that hold one each: three rounds, the third on 24 SMs; the 64×128
    double-buffered tile, three to an SM, wastes less. A card of 144 SMs runs the 288 in two rounds."""
    large = KERNELS[LARGE]
    assert best.per_sm(large, H100) == 1 and best.blocks(large, 3000, 3000) == 288
    per_block = 128 * 256 * (3000 + best.K_OVERHEAD)  # K = 3000: 375 whole steps of 8
    assert best.work(large, H100, 3000, 3000, 3000) == 3 * per_block
    assert best.choose(3000, 3000, 3000, H100) == best.choose(3000, 3000, 3000, H200) == NO_CP_ASYNC
    assert best.choose(3000, 3000, 3000, dataclasses.replace(H100, sms=144)) == LARGE


@pytest.mark.parametrize("key", sorted(card.KNOWN))
def test_every_card_gets_a_kernel_it_can_run_at_every_shape(key, cache):
    on = card.KNOWN[key]
    for shape in [(64, 64, 64), (512, 512, 512), (1000, 1000, 1000), (64, 4096, 4096), (4096, 4096, 64),
                  (1024, 8192, 1024), (2500, 2500, 2500), (3000, 3000, 3000), (4097, 4097, 4097), (8192, 8192, 8192)]:
        chosen = KERNELS[best.choose(*shape, on)]
        assert chosen.name in best.CANDIDATES + best.SPLIT_K and chosen.refusal(on) is None, (key, shape)


@pytest.mark.parametrize("key, borrowed", [("h200", "h200"), ("h100", "h100"), ("t4", "h200"), ("rtx4090", "h200")])
def test_a_card_without_a_table_of_its_own_borrows_one(key, borrowed):
    assert best.measured(card.KNOWN[key])[0] == card.KNOWN[borrowed]


def test_a_card_without_cp_async_gets_only_what_it_can_run(cache):
    for n in (64, 1024, 2048, 3000, 8192):
        chosen = best.choose(n, n, n, T4)
        assert KERNELS[chosen].refusal(T4) is None and chosen != SMALL, n


def test_a_repeated_choice_costs_microseconds_and_a_new_tune_is_seen_at_once(cache):
    best.choose(3000, 3000, 3000)
    started = time.perf_counter()
    for _ in range(100):
        best.choose(3000, 3000, 3000)
    assert (time.perf_counter() - started) / 100 < 1e-3
    cache([entry(card.current(), (3000, 3000, 3000), "s_64x64x8_4x4")])
    assert best.choose(3000, 3000, 3000) == "s_64x64x8_4x4"


def test_registers_read_by_the_model_are_those_ptxas_recorded():
    sys.path.insert(0, str(best.DATA.parents[1] / "tests"))
    import arch_compile
    record = {n: v["archs"] for n, v in json.loads(arch_compile.RECORD.read_text()).items()}
    assert best.DATA / "compiled" / "registers.csv" == arch_compile.REGISTERS
    # the registers as recorded; the compiler column names the versions of the recording run, not of this machine
    # (a GPU machine without the nvcc wheel, or a newer ptxas, reads the same record)
    committed = [line.rsplit(",", 1) for line in arch_compile.REGISTERS.read_text().splitlines()[1:]]
    rows = [f"{name},{arch},{r['registers']}" for name, by_arch in record.items() for arch, r in by_arch.items()
            if r["assembles"]]
    assert [row for row, _ in committed] == rows and len({made_by for _, made_by in committed}) == 1
    for name in best.CANDIDATES + best.SPLIT_K:
        for key, on in card.KNOWN.items():
            assert (best.per_sm(KERNELS[name], on) is not None) == (KERNELS[name].refusal(on) is None), (name, key)


@simulator_only
def test_the_simulator_models_the_committed_h200_unless_told_otherwise(monkeypatch):
    device = data.load("h200/device.csv").iloc[0]
    assert card.current() == H200 and H200.name == device["device"]
    assert all(getattr(H200, f) == device[f] for f in card.DEVICE_ATTRIBUTES)
    assert "%d.%d" % H200.compute_capability == device["compute_capability"]
    monkeypatch.setenv(card.ENV, "t4")
    assert card.current() == T4 and "Tesla T4 (sm_75, 40 SMs)" in card.which()


def test_every_path_agrees_on_what_best_is(cache, rng_seed=3):
    rng = np.random.default_rng(rng_seed)
    A, B = rng.random((70, 37), dtype=np.float32), rng.random((37, 90), dtype=np.float32)
    chosen = best.choose(70, 37, 90)
    assert prepare("best", A, B).name == resolve("best", (70, 37, 90)).name == chosen
    if tiledlab.SIMULATOR:  # on a GPU an unrolled rung's counting build compiles for minutes (count_on_simulator)
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
    assert best.choose(2048, 2048, 2048, H200) == LARGE  # another shape class: the model
    assert best.choose(1024, 1024, 1024, H200) == best.by_model(1024, 1024, 1024, H200, KERNELS)  # another class
    other = dataclasses.replace(H200, sms=114)
    assert best.choose(1000, 1000, 1000, other) == best.by_model(1000, 1000, 1000, other, KERNELS)  # another card
    cache([entry(H200, (1000,) * 3, "s_64x64x8_4x4"), entry(H200, (1000,) * 3, "gen_warp")])
    assert best.choose(1000, 1000, 1000, H200) == "gen_warp"  # the later entry replaces the earlier


def test_a_tuned_choice_that_no_longer_holds_is_not_used(cache):
    cache([entry(H200, (64, 64, 64), "no_such_kernel"), entry(T4, (64, 64, 64), SMALL)])
    assert best.choose(64, 64, 64, H200) == best.by_model(64, 64, 64, H200, KERNELS)  # the registry lost it
    assert best.choose(64, 64, 64, T4) == best.by_model(64, 64, 64, T4, KERNELS)  # the card cannot run it


@pytest.mark.parametrize("text", ["{not json", json.dumps({"version": 1, "entries": []}), json.dumps([1])])
def test_a_cache_that_cannot_be_read_is_reported_once_and_ignored(cache, text):
    best.cache_path().write_text(text)
    modelled = best.by_model(64, 64, 64, H200, KERNELS)
    with pytest.warns(UserWarning, match="tune.json are ignored"):
        assert best.choose(64, 64, 64, H200) == modelled
    assert best.choose(64, 64, 64, H200) == modelled  # once: no second warning (pytest would fail on an error)


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
        c = count_on_simulator("a_64x128x16_8x8_s3", A, B)  # on a GPU its counting build compiles for minutes
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


def test_on_a_measured_card_best_runs_the_fastest_kernel_its_table_measured():
    """The H100's own table (tiledlab/data/h100, measured 2026-12-06): at each of its shapes the model, rated by that
    table, chooses the kernel measured fastest there (within 3 %)."""
    on, table = card.KNOWN["h100"], best._table("h100")
    for shape in table[best.CANDIDATES[0]]:
        ms = {k: table[k][shape] for k in best.CANDIDATES + best.SPLIT_K if shape in table.get(k, {})}
        assert ms[best.by_model(*shape, on, KERNELS)] <= 1.03 * min(ms.values()), shape


def test_a_card_of_an_architecture_never_compiled_for_still_gets_a_kernel():
    """No registers recorded for sm_100: no model, and the card rule answers rather than a false refusal."""
    newer = dataclasses.replace(card.KNOWN["h200"], compute_capability=(10, 0))
    assert best.by_model(4096, 4096, 4096, newer, KERNELS) == best.by_rule(4096, 4096, newer, KERNELS)
