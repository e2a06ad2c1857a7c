"""The split-K rungs (registry family "split", unrolled's splits=S): S blocks share each BM×BN tile of C, each
multiplying its part of K and adding it into C with cuda.atomic.add. Right on odd shapes (a last column of tiles
with fewer parts, parts with no step of K at all), counted as the formulas say with every add a load and a store
of C, refused where the generator cannot split, and chosen by `best` where M×N gives the card too few blocks."""
import numpy as np
import pytest
from kernel_cases import small

from tiledlab.core import best, card, formulas, unrolled
from tiledlab.core.generated import generated
from tiledlab.core.launch import matmul
from tiledlab.core.registry import KERNELS, family, predicted
from tiledlab.counting import count_loads

SPLIT = family("split")
# (M, K, N): edges everywhere; N = 130 leaves the last column of 128-wide tiles fewer parts than S; K = 3 gives
# some parts no step of K (they add zeros); K = 40 and N = 256 divide into whole tiles (tests/test_every_kernel.py
# runs each at 33×21×70 and counts it at 19×13×37)
SHAPES = [(5, 3, 7), (70, 200, 130), (64, 40, 256)]
COUNTED = [(5, 3, 7), (21, 40, 70), (32, 24, 64)]  # at small constants (the counting simulator is the slow part)


def operands(M, K, N, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((M, K), dtype=np.float32), rng.standard_normal((K, N), dtype=np.float32)


@pytest.mark.parametrize("name", SPLIT)
def test_each_split_rung_is_right_on_odd_shapes(name):
    for shape in SHAPES:
        A, B = operands(*shape)
        np.testing.assert_allclose(matmul(A, B, name), A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5,
                                   err_msg=f"{name} {shape}")


@pytest.mark.parametrize("name", SPLIT)
def test_counted_as_the_formulas_say_each_add_a_load_and_a_store_of_C(name):
    splits, constants = KERNELS[name].code.options["splits"], small(KERNELS[name])
    for M, K, N in COUNTED:
        c = count_loads(name, *operands(M, K, N), **constants)
        want = predicted(name, M, K, N, **constants)
        got = {"A": c.A, "B": c.B, "C": int(c.maps["C"].sum()), "reads": int(c.shared_reads.sum()),
               "stores": int(c.shared_stores.sum())}
        assert got == {k: want[k] for k in got}, (name, (M, K, N))
        assert int(c.C_stores.sum()) == want["C"] and c.C_races == []
        assert want["C"] <= splits * M * N  # a narrow last column of tiles has fewer parts
    assert formulas.split_k_adds(64, 256, 128, splits) == splits * 64 * 256  # BN divides N: S adds per element


def test_the_unsplit_twin_loads_as_much_of_A_and_B():
    for name in SPLIT:
        twin = best.twin(KERNELS[name], KERNELS)
        assert twin in best.CANDIDATES and name in best.SPLIT_K and KERNELS[twin].constants == KERNELS[name].constants
        for shape in SHAPES:
            split, whole = predicted(name, *shape), predicted(twin, *shape)
            assert {k: split[k] for k in ("A", "B", "fmas")} == {k: whole[k] for k in ("A", "B", "fmas")}
            assert whole["C"] == 0


def test_only_a_split_kernel_adds_into_C():
    for name, kernel in KERNELS.items():
        adds = "cuda.atomic.add(C" in kernel.source()
        assert adds == kernel.bind().accumulates == (name in SPLIT), name


@pytest.mark.parametrize("options, says", [
    (dict(splits=3), "splits is a whole number from 1 to 16 that divides BN"),
    (dict(splits=2, **unrolled.FRAGMENTS, fragments=2), "with splits, fragments=1"),
    (dict(splits=2, stages=3, **unrolled.HYBRID), "with stages transposed=False"),
])
def test_what_the_generator_cannot_split_is_refused_with_its_reason(options, says):
    with pytest.raises(ValueError, match=says):
        generated("k_bad", BM=64, BN=128, BK=8, TM=8, TN=8, **options)


@pytest.mark.parametrize("key", ["h200", "a100", "rtx4090"])  # the H100's own table measured 512³ unsplit fastest
@pytest.mark.parametrize("shape", [(1024, 8192, 1024), (64, 4096, 4096), (512, 512, 512), (32, 1024, 32)])
def test_best_splits_K_where_M_times_N_gives_the_card_too_few_blocks(key, shape, monkeypatch, tmp_path):
    monkeypatch.setenv(best.CACHE_ENV, str(tmp_path))  # no tuned choice: the model's
    on = card.KNOWN[key]
    chosen = best.choose(*shape, on)
    assert chosen in SPLIT and KERNELS[chosen].refusal(on) is None, (key, shape, chosen)
    unsplit = best.estimate(KERNELS[best.twin(KERNELS[chosen], KERNELS)], on, *shape)
    assert best.estimate(KERNELS[chosen], on, *shape) < unsplit


@pytest.mark.parametrize("key", ["h100", "h200", "t4", "a100", "rtx4090"])
def test_best_does_not_split_where_the_grid_fills_the_card(key, monkeypatch, tmp_path):
    monkeypatch.setenv(best.CACHE_ENV, str(tmp_path))
    for n in (4096, 8192):
        assert best.choose(n, n, n, card.KNOWN[key]) not in SPLIT, (key, n)
