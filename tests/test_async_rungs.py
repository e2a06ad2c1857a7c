"""The rungs with asynchronous copies (the registry's family "async": `a_` copies A and B, `h_` copies B and brings A
through registers): right on odd shapes, counted exactly like every rung, their pipeline checked by the
counting lab, refused where they cannot be built; and on a GPU, compiled to LDGSTS."""
import numpy as np
import pytest

import tiledlab
from tiledlab.core import unrolled
from tiledlab.core.generated import generated
from tiledlab.core.registry import predicted
from tiledlab.counting.count import count_loads

SMALL = dict(BM=64, BN=128, BK=8, TM=8, TN=8)  # small enough for the simulator, every piece whole


@pytest.fixture
def rng():
    return np.random.default_rng(16)


def operands(rng, M, K, N):
    return rng.random((M, K), dtype=np.float32), rng.random((K, N), dtype=np.float32)


@pytest.mark.parametrize("preset", ["ASYNC", "HYBRID"])  # unrolled's options for copying A and B, or B only
@pytest.mark.parametrize("stages", [2, 4])  # 3 stages: the pipeline test below
@pytest.mark.parametrize("shape", [(64, 24, 128), (66, 13, 130)], ids=["aligned", "odd"])
def test_counts_equal_the_block_tile_formulas(rng, preset, stages, shape):
    kernel = generated(f"t_{preset}_{stages}", **SMALL, stages=stages, **getattr(unrolled, preset))
    A, B = operands(rng, *shape)
    c = count_loads(kernel, A, B)
    want = predicted(kernel, *shape)
    np.testing.assert_allclose(c.C, A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)
    assert (int(c.maps["A"].sum()), int(c.maps["B"].sum())) == (want["A"], want["B"])
    assert int(c.shared_reads.sum()) == want["reads"]
    assert not any(c.hazards.values()), c.hazards


@pytest.mark.parametrize("preset", ["ASYNC", "HYBRID"])
def test_a_pipeline_that_waits_for_too_few_copies_is_caught(rng, monkeypatch, preset):
    original = unrolled.pipeline_loop

    def one_group_short(p):  # wait until stages-1 groups are left in flight, not stages-2: one too many
        return [line.replace(f"cp_async_wait({p.stages - 2})", f"cp_async_wait({p.stages - 1})") for line in original(p)]
    monkeypatch.setattr(unrolled, "pipeline_loop", one_group_short)
    kernel = generated(f"short_{preset}", **SMALL, stages=3, **getattr(unrolled, preset))
    A, B = operands(rng, 64, 24, 128)
    c = count_loads(kernel, A, B)
    assert c.hazards["copy_in_flight"] > 0 and c.hazards["read_after_write"] == 0, c.hazards


@pytest.mark.parametrize("options, why", [
    (dict(stages=6, **unrolled.HYBRID), "stages is 0"),
    (dict(stages=2, **{**unrolled.HYBRID, "buffers": 2}), "buffers=1"),
    (dict(stages=2, **{**unrolled.ASYNC, "prefetch": True}), "prefetch=transposed"),
])
def test_impossible_pipelines_are_refused_with_the_reason(options, why):
    with pytest.raises(ValueError, match=why):
        generated("bad", **SMALL, **options)


def test_stages_that_overflow_shared_memory_are_refused():
    with pytest.raises(ValueError, match="227 KiB"):
        generated("big", BM=128, BN=256, BK=32, TM=8, TN=16, warp=(4, 8), stages=5, **unrolled.HYBRID)


@pytest.mark.skipif(tiledlab.SIMULATOR, reason="reads the SASS numba compiled on a GPU")
@pytest.mark.parametrize("name", ["a_64x128x8_8x8_s3", "h_64x128x8_8x8_s3"])
def test_the_main_loop_copies_with_ldgsts(name):
    from tools.measure.sass import compiled, kernel_facts
    facts = kernel_facts(compiled(name))  # launched once, as sass.table does
    assert facts["loop_ldgsts"] > 0 and facts["loop_lds128"] > 0 and facts["local_bytes"] == 0, facts
