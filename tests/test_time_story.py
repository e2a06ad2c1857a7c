"""What notebook 6 says about where the time goes holds in the committed H200 counters, and the analysis
sits where the series teaches what it needs (after notebook 5's warps, banks and wavefronts)."""
import json
import pathlib

import pytest

from tiledlab import data
from tiledlab.experiments import profile

ROOT = pathlib.Path(__file__).resolve().parents[1]
N = 4096


def markdown(name):
    cells = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


@pytest.fixture(scope="module")
def prof():
    return data.load("h200/profile.csv")


def row(prof, kernel, tile=16, n=N):
    return data.row(prof, kernel=kernel, N=n, tile=tile)


def test_the_analysis_comes_after_notebook_5_in_the_order_it_teaches():
    assert "## Where the time goes" not in markdown("04_whole_matrix") and "roofline" not in markdown("04_whole_matrix")
    text = markdown("06_caches")
    order = ["## Where the time goes", "### One roof", "### The layered roofline", "co-limits", "### What the warps wait for"]
    assert all(h in text for h in order)
    assert [text.index(h) for h in order] == sorted(text.index(h) for h in order)


def test_the_fair_naive_kernel_and_t8_are_bound_by_latency(prof):
    naive, t8 = row(prof, "naive_unsigned"), row(prof, "tiled_unsigned", 8)
    assert profile.what_binds(naive).startswith("latency") and profile.what_binds(t8).startswith("latency")
    assert naive["top_stalls"].startswith("long_scoreboard") and t8["top_stalls"].startswith("long_scoreboard")
    assert naive["issue_active_pct"] < 60  # "idle almost half the time"
    assert abs(naive["time_ms"] / t8["time_ms"] - 1) < 0.05  # "no faster than the fair naive kernel"


@pytest.mark.parametrize("tile", [16, 32])
def test_t16_and_t32_are_bound_by_shared_memory_and_the_load_store_unit(prof, tile):
    binds = profile.what_binds(row(prof, "tiled_unsigned", tile))
    assert "shared-memory wavefronts" in binds and "load/store unit" in binds


def test_every_tile_width_needs_the_same_wavefronts_per_fma_and_shared_memory_is_its_lowest_roof(prof):
    waves = [row(prof, "tiled_unsigned", t)["shared_ld_wavefronts_per_warp_fma"] for t in (8, 16, 32)]
    assert max(waves) / min(waves) < 1.01
    assert abs(row(prof, "tiled_unsigned", 16)["time_ms"] / row(prof, "tiled_unsigned", 32)["time_ms"] - 1) < 0.1


def test_the_lesson_naive_kernel_is_issue_bound_and_cublas_fma_and_issue_bound(prof):
    assert profile.what_binds(row(prof, "naive")) == "issue"
    binds = profile.what_binds(row(prof, "cublas", 0))
    assert "issue" in binds and "FP32 FMA pipe" in binds


def test_beyond_l2_the_fair_naive_kernel_reads_less_dram_than_every_tiled_kernel(prof):
    naive = row(prof, "naive_unsigned")["dram_read_bytes"]
    assert all(naive < row(prof, "tiled_unsigned", t)["dram_read_bytes"] for t in (8, 16, 32))
    small = row(prof, "naive_unsigned", n=1024)["dram_read_bytes"]
    assert all(abs(small / row(prof, "tiled_unsigned", t, 1024)["dram_read_bytes"] - 1) < 0.05 for t in (8, 16, 32))


def test_with_one_roof_our_kernels_are_far_below_it_and_cublas_is_not(prof):
    peaks = data.load("h200/peaks.csv")
    fp32 = peaks.query("unit == 'TFLOP/s'")["value"].max()
    dram = peaks[peaks["roof"].str.startswith("DRAM read")]["value"].max()

    def share(r):
        return 2 * r["ffma"] / (r["time_ns"] * 1e-9) / 1e12 / min(fp32, dram * r["flop_per_dram_byte"])
    assert all(share(row(prof, k, t)) < 0.3 for k, t in [("naive_unsigned", 16), ("tiled_unsigned", 8),
                                                        ("tiled_unsigned", 16), ("tiled_unsigned", 32)])
    assert share(row(prof, "cublas", 0)) > 0.7


# --- notebook 7's asynchronous copies: what its prose says holds in async.csv and async_sass.csv -----------

@pytest.fixture(scope="module")
def asy():
    return data.load("h200/async.csv")


def fastest(table, n, prefix):
    return table[(table["N"] == n) & table["kernel"].str.startswith(prefix)]["tflops"].max()


# Which rung is fastest at each N, and that none reaches cuBLAS: tests/test_best.py (notebook 7's account).


def fastest_at(table, n, family, tile):
    rows = table[(table["N"] == n) & table["kernel"].str.startswith(f"{family}_{tile}x")]
    return rows["tflops"].max()


def test_which_family_copies_faster_depends_on_the_block_tile(asy):
    for n in asy["N"].unique():
        assert fastest_at(asy, n, "a", "64x128") > fastest_at(asy, n, "h", "64x128"), n
        assert fastest_at(asy, n, "a", "128x128") > fastest_at(asy, n, "h", "128x128"), n
        assert fastest_at(asy, n, "h", "128x256") > fastest_at(asy, n, "a", "128x256"), n
        copies = asy[(asy["N"] == n) & asy["kernel"].str.match(r"^[ah]_")].sort_values("tflops")
        assert copies["kernel"].iloc[-1].startswith("h_128x256" if n >= 2048 else "a_64x128"), n


def test_every_asynchronous_loop_copies_with_ldgsts_behind_one_barrier():
    sass_rows = data.load("h200/async_sass.csv")
    copies = sass_rows[sass_rows["kernel"].str.match(r"^[ah]_")]
    assert len(copies) and (copies["loop_ldgsts"] > 0).all() and (copies["loop_bar"] == 1).all()
    plain = data.row(sass_rows, kernel="s_128x256x8_8x16_warp")
    assert (plain["loop_ldgsts"] == 0) and plain["loop_ffma_share"] > data.row(sass_rows, kernel="h_128x256x8_8x16_warp_s2")["loop_ffma_share"]


# --- notebook 6's DRAM, model checks and stalls; notebook 4's signed tiled loops ----------------------------

def test_tiled_dram_bytes_fall_as_one_over_t_beyond_l2(prof):
    for t in (8, 16, 32):
        dram = row(prof, "tiled_unsigned", t)["dram_read_bytes"]
        assert abs(dram / (4 * N**3 / t) - 1) < 0.05, t
    assert row(prof, "naive_unsigned")["dram_read_bytes"] < 0.6 * 4 * N**3 / 32


def test_the_wavefront_bound_agrees_with_ncu_and_the_load_store_model_is_above_it(prof):
    for t in (16, 32):
        r = row(prof, "tiled_unsigned", t)
        assert abs(r["shared_pipe_pct"] - 100 * r["bound_shared_ms"] / r["time_ms"]) < 3, t
        assert r["pipe_lsu_pct"] < 0.5 * 100 * r["bound_lsu_ms"] / r["time_ms"], t


def test_mio_throttle_leads_the_stalls_at_t32_only(prof):
    assert row(prof, "tiled_unsigned", 32)["top_stalls"].startswith("mio_throttle")
    assert not row(prof, "tiled_unsigned", 16)["top_stalls"].startswith("mio_throttle")


def test_t8_reads_more_from_l2_than_the_fair_naive_kernel_at_every_n(prof):
    for n in (1024, N):
        assert row(prof, "tiled_unsigned", 8, n)["l2_read_sectors"] > row(prof, "naive_unsigned", n=n)["l2_read_sectors"]


def test_signed_tiled_loops_carry_fix_ups_that_barely_cost_time():
    from tiledlab.notebook import claims
    sass_rows, bench = data.load("h200/bench_sass.csv"), claims.points(data.load("h200/bench.csv"))
    for t in (8, 16, 32):
        signed, unsigned = data.row(sass_rows, kernel="tiled", tile=t), data.row(sass_rows, kernel="tiled_unsigned", tile=t)
        assert signed["loop_total"] / signed["loop_ffma"] > 1.2 * unsigned["loop_total"] / unsigned["loop_ffma"], t
        ms = [data.value(bench, "median_ms", kernel=k, N=N, tile=t) for k in ("tiled", "tiled_unsigned")]
        assert ms[0] / ms[1] < 1.1, t
