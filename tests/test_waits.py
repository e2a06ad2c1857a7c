"""The rungs against the wait for shared data (the registry's family "waits"): register fragments one k ahead
(`fragments=2`) and a 16×2 warp patch. Right on odd shapes, counted exactly, their one barrier per tile
checked by the counting lab, refused where they cannot be built; on a GPU, compiled to 128-bit shared reads;
and what notebook 7 says of them, against the committed H200 run (waits.csv, waits_profile.csv)."""
import numpy as np
import pytest

import tiledlab
from tiledlab import data
from tiledlab.core import unrolled
from tiledlab.core.generated import generated
from tiledlab.core.launch import matmul
from tiledlab.core.registry import KERNELS, family, predicted
from tiledlab.counting.count import count_loads

SMALL = dict(BM=64, BN=32, BK=8, TM=4, TN=4)  # 128 threads; 16×8 thread tiles hold a 4×8 and a 16×2 warp patch
FRAGMENTS = dict(fragments=2, **unrolled.FRAGMENTS)


@pytest.fixture
def rng():
    return np.random.default_rng(19)


def operands(rng, M, K, N):
    return rng.random((M, K), dtype=np.float32), rng.random((K, N), dtype=np.float32)


@pytest.mark.parametrize("options", [dict(warp=(4, 8), **FRAGMENTS), dict(warp=(16, 2)), dict(warp=(16, 2), **FRAGMENTS)],
                         ids=["fragments", "warp16x2", "both"])
@pytest.mark.parametrize("shape", [(64, 16, 32), (70, 13, 45), (66, 24, 33), (5, 3, 7)],
                         ids=["whole", "odd", "odd-trips", "tiny"])
def test_counts_equal_the_block_tile_formulas(rng, options, shape):
    kernel = generated("t_waits", **SMALL, **options)
    A, B = operands(rng, *shape)
    c = count_loads(kernel, A, B)
    want = predicted(kernel, *shape)
    np.testing.assert_allclose(c.C, A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)
    assert (int(c.maps["A"].sum()), int(c.maps["B"].sum())) == (want["A"], want["B"])
    assert (int(c.shared_reads.sum()), int(c.shared_stores.sum())) == (want["reads"], want["stores"])
    assert not any(c.hazards.values()), c.hazards


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # it reads shared memory not yet stored
def test_fragments_without_their_barrier_are_caught(rng, monkeypatch):
    original = unrolled.fragment_step

    def no_barrier(p, ind, h, kx):  # the next tile's first k read before every thread has stored it
        return [line for line in original(p, ind, h, kx) if "cuda.syncthreads()" not in line]
    monkeypatch.setattr(unrolled, "fragment_step", no_barrier)
    kernel = generated("t_no_barrier", **SMALL, warp=(4, 8), **FRAGMENTS)
    c = count_loads(kernel, *operands(rng, 64, 24, 32))
    assert c.hazards["read_after_write"] > 0, c.hazards


def test_the_fragments_loop_reads_each_k_one_ahead_and_waits_once_per_tile():
    text = unrolled.generate_source(**SMALL, warp=(4, 8), **FRAGMENTS)
    loop = text[text.index("    for t in range"):text.index("# Store the TM")]
    assert loop.count("cuda.syncthreads()") == 2  # two tiles per trip, one barrier each
    first = loop.index("a1 = (sA[1,")  # k = 1's reads come before k = 0's multiply-adds
    assert first < loop.index("row_fma(acc0, a0[0], b0)")


@pytest.mark.parametrize("options, why", [
    (dict(fragments=2, warp=(4, 8)), "buffers=2"),
    (dict(fragments=2, warp=(4, 8), **{**unrolled.FRAGMENTS, "stages": 2}), "stages=0"),
    (dict(fragments=3, **unrolled.FRAGMENTS), "fragments is 1 or 2"),
    (dict(warp=(32, 1)), "WY·WX = 32"),
])
def test_impossible_options_are_refused_with_the_reason(options, why):
    with pytest.raises(ValueError, match=why):
        generated("bad", **SMALL, **options)


def test_an_odd_bk_is_refused_for_fragments():
    with pytest.raises(ValueError, match="BK is even"):
        generated("bad", BM=32, BN=32, BK=3, TM=8, TN=4, **FRAGMENTS)  # one warp: any BK else


@pytest.mark.skipif(tiledlab.SIMULATOR, reason="reads the SASS numba compiled on a GPU")
@pytest.mark.parametrize("name", family("waits"))
def test_the_main_loop_reads_shared_memory_128_bits_at_a_time(name):
    from tools.measure.sass import compiled, kernel_facts
    facts = kernel_facts(compiled(name))
    assert facts["loop_lds128"] > 0 and facts["loop_lds32"] == 0 and facts["local_bytes"] == 0, facts


# --- notebook 7's account of the two rungs, against the committed H200 run ------------------------------------

@pytest.fixture(scope="module")
def waits():
    return data.load("h200/waits.csv")


@pytest.fixture(scope="module")
def wprof():
    return data.load("h200/waits_profile.csv").set_index("kernel")


def test_the_run_has_every_kernel_at_every_n(waits):
    kernels = {"cublas", "triton", "s_128x256x8_8x16_warp", "a_64x128x16_8x8_s3", *family("waits")}
    for n, g in waits.groupby("N"):
        assert set(g["kernel"]) == kernels, n
    assert sorted(waits["N"].unique()) == [1024, 2048, 4096, 8192]


def test_fragments_wait_less_for_shared_data_and_still_lose(waits, wprof):
    plain, frag = wprof.loc["s_128x256x8_8x16_warp"], wprof.loc["f_128x256x8_8x16_warp"]
    assert frag["stall_short_scoreboard_pct"] < 0.75 * plain["stall_short_scoreboard_pct"]
    assert frag["inst_issued"] > 1.02 * plain["inst_issued"]  # "more instructions"
    assert frag["issue_active_pct"] < plain["issue_active_pct"] - 3  # "issue active falls"
    assert frag["registers_per_thread"] == 255 > plain["registers_per_thread"]
    for n, g in waits.groupby("N"):
        t = g.set_index("kernel")["tflops"]
        assert t["f_128x256x8_8x16_warp"] < 0.95 * t["s_128x256x8_8x16_warp"], n


def test_the_16x2_patch_cuts_wavefronts_not_instructions(waits, wprof):
    plain, w = wprof.loc["s_128x256x8_8x16_warp"], wprof.loc["w_128x256x8_8x16_warp16x2"]
    per_read = lambda r: r["shared_ld_wavefronts_per_warp_fma"] / r["shared_ld_inst_per_warp_fma"]
    assert per_read(plain) == pytest.approx(10 / 3, rel=0.01) and per_read(w) == pytest.approx(2, rel=0.01)
    assert abs(w["inst_issued"] / plain["inst_issued"] - 1) < 0.001  # the same loop, other lanes
    assert w["stall_short_scoreboard_pct"] < 0.7 * plain["stall_short_scoreboard_pct"]
    assert w["time_ns"] < plain["time_ns"]
    t = waits.set_index(["kernel", "N"])["tflops"]
    assert t["w_128x256x8_8x16_warp16x2", 8192] > t["s_128x256x8_8x16_warp", 8192]


def test_cublas_reads_shared_memory_no_more_cheaply(wprof):
    """"cuBLAS's wavefronts per warp-FMA equal the 4×8 patch's, yet it waits less": its schedule, not its reads."""
    plain, blas = wprof.loc["s_128x256x8_8x16_warp"], wprof.loc["cublas"]
    assert blas["shared_ld_wavefronts_per_warp_fma"] == pytest.approx(plain["shared_ld_wavefronts_per_warp_fma"], rel=0.01)
    assert blas["stall_short_scoreboard_pct"] < 0.6 * plain["stall_short_scoreboard_pct"]
    assert blas["issue_active_pct"] > plain["issue_active_pct"] + 10


def test_the_sentences_on_sizes_and_peers_hold(waits, wprof):
    t = waits.set_index(["kernel", "N"])["tflops"]
    pct = waits.set_index(["kernel", "N"])["pct_cublas"]
    for n in (2048, 4096):  # "at 2048 and 4096 the two patches are within 1.5 % of each other"
        assert abs(t["w_128x256x8_8x16_warp16x2", n] / t["s_128x256x8_8x16_warp", n] - 1) < 0.015, n
    for n in (2048, 4096, 8192):  # "Triton ... is within a few points of our best kernel from N = 2048 up"
        best = waits[(waits["N"] == n) & ~waits["kernel"].isin(["cublas", "triton"])]["pct_cublas"].max()
        assert abs(pct["triton", n] - best) < 4, n
    plain, w, blas = (wprof.loc[k] for k in ("s_128x256x8_8x16_warp", "w_128x256x8_8x16_warp16x2", "cublas"))
    # "falls by about a third"; cuBLAS's warps wait "about half as often"
    assert 0.6 < w["stall_short_scoreboard_pct"] / plain["stall_short_scoreboard_pct"] < 0.7
    assert 0.4 < blas["stall_short_scoreboard_pct"] / plain["stall_short_scoreboard_pct"] < 0.6


def test_a_refusal_names_the_option_that_breaks_the_rule():
    """Rules on options are bound to the kernel's options (functools.partial): the message shows them too."""
    with pytest.raises(ValueError, match=r"fragments is 1 or 2; fragments=True breaks it"):
        generated("bad", **SMALL, fragments=True, **unrolled.FRAGMENTS)
    with pytest.raises(ValueError, match=r"BM=32, BN=32, TM=4, TN=4, warp=\(16, 2\) breaks it"):
        matmul(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32), "w_128x256x8_8x16_warp16x2",
               BM=32, BN=32, TM=4, TN=4)
    with pytest.raises(ValueError, match="with fragments=2, .*stages=0"):  # before the stages rules' advice
        generated("bad", **SMALL, fragments=2, stages=2, **unrolled.HYBRID)
    with pytest.raises(ValueError, match="smaller BK"):
        matmul(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32), "f_128x256x8_8x16_warp", BK=128)
