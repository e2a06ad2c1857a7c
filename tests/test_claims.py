"""Every comparative sentence of the English notebooks, pinned to the committed data it rests on.

Each Claim quotes its sentence as the page has it (whitespace aside: markdown wraps), names the data file
and rows behind it, and checks it on those rows; a timing claim on bench.csv holds only beyond the
run-to-run spread of at least notebook.claims.MIN_RUNS runs. An edited sentence is no longer found, and
changed data fails the check: either way the test fails and names the sentence. The claims table,
docs/claims.md, is generated from CLAIMS (`python tests/test_claims.py` rewrites it; a test keeps it current).
"""
import json
import pathlib
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import pytest

from tiledlab import data
from tiledlab.core import registry
from tiledlab.notebook import claims

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "claims.md"
SIZES = (1024, 2048, 4096, 8192)
N = 4096


@dataclass
class Claim:
    notebook: str
    quote: str  # the sentence's words as the page has them
    data: str  # the committed files behind it
    rows: str  # which of their rows, in words
    check: Callable  # raises AssertionError (or skips) when the data does not bear the sentence out


@lru_cache(maxsize=None)
def load(name):
    return data.load(f"h200/{name}")


def cells(notebook):
    return json.loads((ROOT / "notebooks" / f"{notebook}.ipynb").read_text())["cells"]


def flat(text):
    return re.sub(r"\s+", " ", text).strip()


def cell_of(claim):
    """The index of the one cell of the notebook that holds the claim's quote."""
    found = [i for i, c in enumerate(cells(claim.notebook)) if flat(claim.quote) in flat("".join(c["source"]))]
    assert len(found) == 1, f"{claim.notebook}: {claim.quote!r} found in cells {found}, expected in one"
    return found[0]


# --- checks on bench.csv's runs: the order of two points beyond their spread ------------------------

def point(kernel, n, tile):
    return dict(kernel=kernel, N=n, tile=tile)


def compared(a, b):
    """notebook.claims' comparison of a with b in bench.csv; skipped while it holds fewer runs than a claim needs."""
    c = claims.compare(load("bench.csv"), a, b)
    if isinstance(c, str) or c.runs < claims.MIN_RUNS:
        pytest.skip(f"bench.csv holds {'no such row' if isinstance(c, str) else f'{c.runs} run'}: {c}; "
                    "tools/bench_runs.py on the H200 measures every point in 3 runs")
    return c


def faster(a, b):
    c = compared(a, b)
    assert c.holds, str(c)


def close(a, b, pct):
    """a and b within pct per cent of each other, either way (the spread included)."""
    c = compared(a, b)
    assert abs(c.margin) + c.noise < pct, str(c)


def fair_factor_below(n, tile, naive_tile, limit):
    """naive_unsigned / tiled_unsigned, the slowest run of naive over the fastest of tiled, below limit."""
    c = compared(point("tiled_unsigned", n, tile), point("naive_unsigned", n, naive_tile))
    assert 1 + c.margin / 100 < limit / (1 + c.noise / 100), str(c)


def every(*checks):
    def run():
        for check in checks:
            check()
    return run


def naive_fastest_in_16(n):
    return every(*[lambda t=t: faster(point("naive_unsigned", n, 16), point("naive_unsigned", n, t)) for t in (8, 32)])


def matched(ns, tiles=(8, 16, 32)):
    return every(*[lambda n=n, t=t: faster(point("tiled_unsigned", n, t), point("naive_unsigned", n, t))
                   for n in ns for t in tiles])


def t8_against_16(ns, pct=6):  # "a few per cent": the margin and its spread under 6 %
    return every(*[lambda n=n: close(point("tiled_unsigned", n, 8), point("naive_unsigned", n, 16), pct) for n in ns])


def fastest_naive(n):
    return claims.fastest(load("bench.csv"), "naive_unsigned", n)


def naive_fastest_in_32_below_4096():
    for n in (1024, 2048):
        for t in (8, 16):
            faster(point("naive_unsigned", n, 32), point("naive_unsigned", n, t))


def t8_against_fastest(pct=6):
    """T = 8 loses to the fair naive kernel in its fastest blocks at the two smaller N, within a few per cent after."""
    def run():
        for n in SIZES[:2]:
            faster(point("naive_unsigned", n, fastest_naive(n)), point("tiled_unsigned", n, 8))
        for n in SIZES[2:]:
            close(point("tiled_unsigned", n, 8), point("naive_unsigned", n, fastest_naive(n)), pct)
    return run


def wider_beat_fastest(ns):
    return every(*[lambda n=n, t=t: faster(point("tiled_unsigned", n, t), point("naive_unsigned", n, fastest_naive(n)))
                   for n in ns for t in (16, 32)])


def far_below_t(ns, naive_tiles=(16,), share=0.25):
    return every(*[lambda n=n, t=t, b=b: fair_factor_below(n, t, b, share * t)
                   for n in ns for t in (8, 16, 32) for b in naive_tiles])


# --- checks on one-run files (profiles, effects, the ladders): counts, or margins far beyond any spread ---

def prof(kernel, tile=16, n=N, name="profile.csv"):
    """The profiled row of kernel (profile.csv: at a tile; ladder_profile.csv: its first row, tile None)."""
    if tile is None:
        return data.row(load(name).drop_duplicates("kernel"), kernel=kernel, N=n)
    return data.row(load(name), kernel=kernel, N=n, tile=tile)


def dram_rises():
    naive = prof("naive_unsigned")["dram_read_bytes"]
    assert all(naive < prof("tiled_unsigned", t)["dram_read_bytes"] for t in (8, 16, 32))


def requested_several_times_dram():
    c = compared(point("naive_unsigned", 8192, 16), point("naive", 8192, 16))
    slowest_s = c.a.value * (1 + c.a.spread / 100) / 1e3
    dram = load("peaks.csv").query("roof.str.startswith('DRAM read')", engine="python")["value"].iloc[0]
    assert 8 * 8192**3 / slowest_s / 1e12 > 3 * dram


def profiled_t8_no_faster():
    for n in (1024, N):
        assert abs(prof("tiled_unsigned", 8, n)["time_ms"] / prof("naive_unsigned", n=n)["time_ms"] - 1) < 0.05, n


def closest_to_shared_roof():
    def share(r):  # measured over the shared-memory roof at the kernel's wavefront intensity
        roof = load("peaks.csv").query("roof.str.startswith('shared')", engine="python")["value"].max()
        return 2 * r["ffma"] / (r["time_ns"] * 1e-9) / 1e12 / (roof * 2 * r["ffma"] / (
            128 * (r["shared_ld_wavefronts"] + r["shared_st_wavefronts"])))
    wide = [share(prof("tiled_unsigned", t)) for t in (16, 32)]
    assert min(wide) > share(prof("tiled_unsigned", 8)) + 0.15


def signed_naive_reads_more_dram():
    assert prof("naive")["dram_read_bytes"] > 2 * prof("naive_unsigned")["dram_read_bytes"]


def issue_falls_time_stays():
    signed, fair = prof("tiled", 8), prof("tiled_unsigned", 8)
    assert 0.2 < 1 - fair["bound_issue_ms"] / signed["bound_issue_ms"] < 0.3  # "by a quarter"
    assert abs(fair["time_ms"] / signed["time_ms"] - 1) < 0.03  # "hardly moves"


def effect(kernel, tile, n=N):
    return data.value(load("effects.csv"), "median_ms", kernel=kernel, N=n, tile=tile)


def swap_costs_more_at_32():
    for k in ("naive", "tiled"):
        assert effect(f"{k} swapped xy", 32) / effect(k, 32) > 1.3 * effect(f"{k} swapped xy", 16) / effect(k, 16), k


def swapped_warp_sectors():
    """The stored, nbval-checked table of notebook 5: a swapped warp's sectors of A are 16 at T = 16, 32 at T = 32."""
    (cell,) = [c for c in cells("05_line_by_line") if c["id"] == "8b623fd9"]  # the warps' sectors table
    out = "".join(cell["outputs"][0]["text"])
    rows = {(k, int(t)): int(a) for k, t, a in re.findall(r"(naive|tiled)\s+(16|32)\s+x → row \(swapped\)\s+(\d+)", out)}
    assert rows == {("naive", 16): 16, ("naive", 32): 32, ("tiled", 16): 16, ("tiled", 32): 32}, rows


def padding_within_few_percent():
    assert all(effect("tiled sB transposed padded", t) / effect("tiled", t) < 1.05 for t in (8, 16, 32))


def write_back_small():
    assert all(abs(1 - effect("tiled without write-back", t) / effect("tiled", t)) < 0.01 for t in (8, 16, 32))


def l2_matches_300():
    lat = load("latency.csv").query("index == 'uint32'")
    assert lat.loc[(lat["cycles"] - 300).abs().idxmin(), "level"].startswith("L2")


def tf(kernel, n, name="ladder.csv"):
    return data.value(load(name), "tflops", kernel=kernel, N=n)


def ladder(kernel, base, low, high):
    """kernel ÷ base in TFLOP/s at the two largest N, between low and high (one run)."""
    def run():
        for n in SIZES[-2:]:
            assert low < tf(kernel, n) / tf(base, n) < high, (kernel, base, n)
    return run


def regtile_1d_issue_bound():
    col, tiled = prof("regtile_1d", None, name="ladder_profile.csv"), prof("tiled", None, name="ladder_profile.csv")
    assert col["inst_issued_per_warp_fma"] > 1.5 * tiled["inst_issued_per_warp_fma"]
    assert col["bound_issue_ms"] > 0.7 * col["time_ms"] and col["bound_issue_ms"] > col["bound_shared_ms"]
    s = data.row(load("sass.csv"), kernel="regtile_1d")
    assert 1 <= s["loop_lds32"] / s["loop_ffma"] <= 1.2


def control_loses_occupancy():
    s = data.row(load("sass.csv"), kernel="gen_unrolled_sA_mk")
    assert s["loop_lds128"] > s["loop_lds32"] + s["loop_lds64"]
    p = load("ladder_profile.csv").drop_duplicates("kernel").set_index("kernel")
    assert p.loc["gen_unrolled_sA_mk", "blocks_per_sm"] == 1
    assert (p.loc[["regtile_vec", "gen_unrolled"], "blocks_per_sm"] == 2).all()
    waves = p["shared_ld_wavefronts_per_warp_fma"]
    assert waves["gen_unrolled_sA_mk"] / waves["gen_unrolled"] < 1.15


def two_fastest_hand_written():
    hand = ["regtile_1d", "regtile_2d", "regtile_vec", "gen_unrolled_sA_mk", "gen_unrolled", "gen_cheap_loads",
            "gen_prefetch", "gen_double", "gen_double_lb", "gen_warp"]
    for n in SIZES[-2:]:
        ranked = sorted(hand, key=lambda k: tf(k, n))
        assert set(ranked[-2:]) == {"gen_warp", "gen_prefetch"}, n
        assert tf("gen_warp", n) / tf("gen_prefetch", n) < 1.05, n


def async_faster_at_the_smallest_n():
    """In every committed run that timed them: the fastest asynchronous rung against the register-prefetch ones."""
    runs = [load(f) for f in ("async.csv", "waits.csv", "ladder.csv")]

    def values(kernel, n):
        return [v for t in runs for v in t.loc[(t["kernel"] == kernel) & (t["N"] == n), "pct_cublas"]]
    asy = load("async.csv")
    small = min(SIZES)
    plain = [k for k in asy["kernel"].unique() if k in registry.family("search")]
    assert min(values("a_64x128x16_8x8_s3", small)) > max(v for k in plain for v in values(k, small))
    assert registry_best_for(small) == "a_64x128x16_8x8_s3"
    for n in SIZES[1:]:
        copies = asy[(asy["N"] == n) & asy["kernel"].isin(registry.family("async"))]["pct_cublas"].max()
        assert min(values("s_128x256x8_8x16_warp", n)) > copies, n


def gen_warp_without_spills():
    p = load("ladder_profile.csv").drop_duplicates("kernel").set_index("kernel")
    assert p.loc["gen_warp", "registers_per_thread"] == 128 and p.loc["gen_warp", "blocks_per_sm"] == 2
    assert p.loc["gen_warp", "local_ld_inst"] + p.loc["gen_warp", "local_st_inst"] == 0
    assert p.loc["gen_double_lb", "local_ld_inst"] > 0


def same_tile_async_slower():
    asy = load("async.csv").query("N == 1024")
    plain = asy.loc[asy["kernel"] == "s_64x128x8_8x8_db", "pct_cublas"].iloc[0]
    same = asy.loc[asy["kernel"].str.match(r"^[ah]_64x128x8_"), "pct_cublas"]
    assert len(same) == 4 and (same < plain - 1).all()


def registry_best_for(n):
    from tiledlab.core import best, card
    return best.by_rule(n, n, card.KNOWN["h200"], registry.KERNELS)  # the card the committed data was measured on


def cublas_issues_more_often():
    ours, blas = (prof(k, None, name="ladder_profile.csv") for k in ("best", "cublas"))
    assert blas["issue_active_pct"] > ours["issue_active_pct"] + 5
    assert abs(blas["inst_issued_per_warp_fma"] / ours["inst_issued_per_warp_fma"] - 1) < 0.05


def tiled_signed_barely_slower():
    bench = claims.points(load("bench.csv"))
    for t in (8, 16, 32):
        ms = [data.value(bench, "median_ms", kernel=k, N=N, tile=t) for k in ("tiled", "tiled_unsigned")]
        assert ms[0] / ms[1] < 1.1, t


def distance_to_cublas_hardly_depends_on_indices():
    bench = claims.points(load("bench.csv"))
    for n in SIZES:
        cublas = data.value(bench, "median_ms", kernel="cublas", N=n)
        for t in (8, 16, 32):
            pct = [100 * cublas / data.value(bench, "median_ms", kernel=k, N=n, tile=t) for k in ("tiled", "tiled_unsigned")]
            assert abs(pct[0] - pct[1]) < 3, (n, t)


BENCH = "h200/bench.csv"
CLAIMS = [
    Claim("00_start_here", "DRAM bytes do not fall at all here: beyond L2 the fair naive kernel reads *less* from DRAM "
          "than the tiled one", "h200/profile.csv", "naive_unsigned (16×16) and tiled_unsigned T = 8, 16, 32, N = 4096",
          dram_rises),
    Claim("00_start_here", "The time falls by far less than T", BENCH,
          "naive_unsigned (16×16, 32×32) / tiled_unsigned T = 32, N = 4096", far_below_t([N], (16, 32))),
    Claim("00_start_here", 'print(claims.compare(runs, dict(kernel="tiled_unsigned", N=n, tile=t), '
          'dict(kernel="naive_unsigned", N=n, tile=t)))', BENCH, "tiled_unsigned T = 32 against naive_unsigned "
          "(32×32), N = 4096", lambda: faster(point("tiled_unsigned", N, 32), point("naive_unsigned", N, 32))),
    Claim("01_naive_reads", "The fair kernel requested several times what device memory delivers", f"{BENCH}, h200/peaks.csv",
          "naive_unsigned (16×16), N = 8192; the DRAM read roof", requested_several_times_dram),
    Claim("02_redundant_reads", "it is fastest in 16×16 blocks", BENCH, "naive_unsigned in 8×8, 16×16, 32×32, N = 8192",
          naive_fastest_in_16(8192)),
    Claim("02_redundant_reads", "at the two smaller N of notebook 4, in 32×32 blocks", BENCH,
          "naive_unsigned in 8×8, 16×16, 32×32, N = 1024 and 2048", naive_fastest_in_32_below_4096),
    Claim("02_redundant_reads", "Against the naive kernel in the same block shape, tiling is faster at every tile width",
          BENCH, "tiled_unsigned T and naive_unsigned (T×T), T = 8, 16, 32, N = 8192", matched([8192])),
    Claim("02_redundant_reads", "but far less than the T-fold cut in global loads", BENCH,
          "naive_unsigned (T×T, 16×16) / tiled_unsigned T, N = 8192", far_below_t([8192], (8, 16, 32), 0.5)),
    Claim("02_redundant_reads", "the narrowest tile, T = 8, buys little or nothing: with T times fewer global loads, "
          "it is within a few per cent of the fair naive kernel", BENCH,
          "tiled_unsigned T = 8 and naive_unsigned (16×16), N = 8192", t8_against_16([8192])),
    Claim("03_one_tile_step", "even the narrowest tile, T = 8, is faster than the naive kernel, at every N", BENCH,
          "tiled_unsigned T = 8 and naive_unsigned (8×8), N = 1024…8192", matched(SIZES, (8,))),
    Claim("03_one_tile_step", "T = 8 buys nothing at the two smaller N, where that naive kernel is faster, and little or "
          "nothing from N = 4096 on, within a few per cent either way", BENCH,
          "tiled_unsigned T = 8 and naive_unsigned in its fastest blocks at each N (32×32, 32×32, 16×16, 16×16)",
          t8_against_fastest()),
    Claim("03_one_tile_step", "Only the wider tiles are faster than that, and by far less than their T", BENCH,
          "tiled_unsigned T = 16, 32 and naive_unsigned in its fastest blocks, N = 1024…8192",
          every(wider_beat_fastest(SIZES), far_below_t(SIZES, (16, 32)))),
    Claim("04_whole_matrix", "Against the naive kernel in the same block shape every tile width is faster", BENCH,
          "tiled_unsigned T and naive_unsigned (T×T), every N and T", matched(SIZES)),
    Claim("04_whole_matrix", "T = 8 buys nothing at the two smaller N, where that naive kernel is faster, and little or "
          "nothing from N = 4096 on, within a few per cent either way: the lines printed", BENCH,
          "tiled_unsigned T = 8 and naive_unsigned in its fastest blocks at each N (32×32, 32×32, 16×16, 16×16)",
          t8_against_fastest()),
    Claim("04_whole_matrix", "How far the tiled kernel is from cuBLAS hardly depends on its indices", BENCH,
          "tiled and tiled_unsigned as % of cuBLAS, every N and T (within 3 points)",
          distance_to_cublas_hardly_depends_on_indices),
    Claim("04_whole_matrix", "their time hardly changes without them", f"{BENCH}, h200/bench_sass.csv",
          "tiled / tiled_unsigned, T = 8, 16, 32, N = 4096 (under 1.1×)", tiled_signed_barely_slower),
    Claim("05_line_by_line", "The swap costs more at T = 32 than at T = 16", "h200/effects.csv",
          "naive and tiled, swapped xy over plain, T = 16 and 32, N = 4096 (one run)", swap_costs_more_at_32),
    Claim("05_line_by_line", "so its loads touch 16 sectors of a matrix, at T = 32 it is 32 rows × 1 column, 32 sectors",
          "the page's own trace table (nbval-checked)", "sectors of A of a swapped warp, T = 16 and 32",
          swapped_warp_sectors),
    Claim("05_line_by_line", "the padded kernel is within a few per cent of the original at every T", "h200/effects.csv",
          "tiled sB transposed padded over tiled, T = 8, 16, 32, N = 4096 (one run)", padding_within_few_percent),
    Claim("05_line_by_line", "Writing C back is a small share of the time", "h200/effects.csv",
          "tiled without write-back over tiled, T = 8, 16, 32, N = 4096 (under 1 %)", write_back_small),
    Claim("05_line_by_line", "The second article's \"300 or more\" matches an L2 hit", "h200/latency.csv",
          "cycles per dependent load, unsigned index, every level", l2_matches_300),
    Claim("06_caches", "at T = 8 not at all against this naive kernel in 16×16 blocks", "h200/profile.csv",
          "time of tiled_unsigned T = 8 over naive_unsigned (16×16), N = 1024 and 4096 (within 5 %)",
          profiled_t8_no_faster),
    Claim("06_caches", "the lesson's signed naive kernel reads A and B in the same order and yet reads several "
          "times as much from DRAM", "h200/profile.csv", "naive and naive_unsigned (16×16), N = 4096 (more than 2×)",
          signed_naive_reads_more_dram),
    Claim("06_caches", "without its fix-ups its issue bound falls by a quarter and its time hardly moves",
          "h200/profile.csv", "tiled and tiled_unsigned T = 8, N = 4096 (issue bound 20–30 % lower, time within 3 %)",
          issue_falls_time_stays),
    Claim("06_caches", "in the same 8×8 blocks, the naive kernel is slower", BENCH,
          "tiled_unsigned T = 8 and naive_unsigned (8×8), N = 4096",
          lambda: faster(point("tiled_unsigned", N, 8), point("naive_unsigned", N, 8))),
    Claim("06_caches", "T = 16 and T = 32 run closest to that roof", "h200/profile.csv, h200/peaks.csv",
          "tiled_unsigned T = 8, 16, 32 against the shared-memory roof, N = 4096", closest_to_shared_roof),
    Claim("06_caches", "That is why doubling T from 16 to 32 barely moves the time", BENCH,
          "tiled_unsigned T = 16 and 32, N = 4096 (within 5 %)",
          lambda: close(point("tiled_unsigned", N, 32), point("tiled_unsigned", N, 16), 5)),
    Claim("07_register_tiling", "Yet it is no faster than tiling", "h200/ladder.csv",
          "regtile_1d ÷ tiled, N = 4096 and 8192 (one run, within 3 %)", ladder("regtile_1d", "tiled", 0.97, 1.03)),
    Claim("07_register_tiling", "many more instructions per FFMA than the tiled kernel, so that issuing them alone takes "
          "most of its time", "h200/ladder_profile.csv, h200/sass.csv", "regtile_1d and tiled, N = 4096",
          regtile_1d_issue_bound),
    Claim("07_register_tiling", "Most of its shared reads are still 128-bit and its shared wavefronts per FMA barely "
          "change; what it lost is occupancy", "h200/sass.csv, h200/ladder_profile.csv",
          "gen_unrolled_sA_mk beside regtile_vec and gen_unrolled", control_loses_occupancy),
    Claim("07_register_tiling", "Its factor is against `regtile_vec`, the rung it unrolls", "h200/ladder.csv",
          "gen_unrolled ÷ regtile_vec, N = 4096 and 8192 (one run, more than 3 %)",
          ladder("gen_unrolled", "regtile_vec", 1.03, 2)),
    Claim("07_register_tiling", "each is faster than the rung before", "h200/ladder.csv",
          "gen_cheap_loads ÷ gen_unrolled, gen_prefetch ÷ gen_cheap_loads (one run, more than 3 %)",
          every(ladder("gen_cheap_loads", "gen_unrolled", 1.03, 2), ladder("gen_prefetch", "gen_cheap_loads", 1.03, 2))),
    Claim("07_register_tiling", "**Two shared buffers** (`gen_double`) are *slower* than prefetching alone",
          "h200/ladder.csv", "gen_double ÷ gen_prefetch, N = 4096 and 8192 (one run)",
          ladder("gen_double", "gen_prefetch", 0, 0.97)),
    Claim("07_register_tiling", "within a few per cent of `gen_prefetch`: the two are the fastest rungs of the "
          "hand-written ladder", "h200/ladder.csv", "every hand-written rung, N = 4096 and 8192 (one run)",
          two_fastest_hand_written),
    Claim("07_register_tiling", "cuBLAS's schedulers issue an instruction in a larger share of cycles",
          "h200/ladder_profile.csv", "the profiled rung and cuBLAS, N = 4096", cublas_issues_more_often),
    Claim("07_register_tiling", "`gen_warp` fits two blocks with 128 registers and none", "h200/ladder_profile.csv",
          "gen_warp and gen_double_lb: registers, blocks per SM, local-memory instructions", gen_warp_without_spills),
    Claim("07_register_tiling", "the asynchronous rungs with the same 64×128×8 tile as the register-prefetch "
          "`s_64x128x8_8x8_db` are slower than it at that N", "h200/async.csv",
          "a_/h_64x128x8 rungs and s_64x128x8_8x8_db, N = 1024 (one run, more than 1 point)", same_tile_async_slower),
    Claim("07_register_tiling", "faster than every register-prefetch rung; from N = 2048 up the 128×256 register-prefetch "
          "rung is faster", "h200/async.csv, waits.csv, ladder.csv",
          "% of cuBLAS of a_64x128x16_8x8_s3, every s_ rung and every a_/h_ rung, in each run that timed them",
          async_faster_at_the_smallest_n),
]


def ident(claim):
    return f"{claim.notebook[:2]}-{flat(claim.quote)[:40]}"


@pytest.mark.parametrize("claim", CLAIMS, ids=ident)
def test_the_sentence_is_on_its_page(claim):
    cell_of(claim)


@pytest.mark.parametrize("claim", CLAIMS, ids=ident)
def test_the_committed_data_bears_it_out(claim):
    claim.check()


def stored_sentences(cell):
    return [line for o in cell.get("outputs", []) for line in "".join(o.get("text", "")).splitlines()
            if re.search(r"(run\(s\)|runs\)|committed data)\.?$", line)]


@pytest.mark.parametrize("notebook", sorted({c.notebook for c in CLAIMS}))
def test_stored_claim_sentences_are_those_of_the_committed_data(notebook):
    """A sentence notebook.claims printed into a stored output must be the one the committed data gives now:
    the lead re-executes a page on the GPU when its data changes."""
    stale = []
    for i, cell in enumerate(cells(notebook)):
        for line in stored_sentences(cell):
            m = re.match(r"\s*At N = (\d+), (\S+) (?:\((\d+)×\d+ blocks\)|T=(\d+))", line)
            if m and not any(line.strip() == fresh for fresh in fresh_sentences(int(m.group(1)))):
                stale.append((i, line.strip()))
    assert not stale, f"{notebook}: re-execute it on the GPU; stale: {stale}"


@lru_cache(maxsize=None)
def fresh_sentences(n):
    runs = load("bench.csv")
    ks = [(k, t) for k in ("naive", "tiled", "naive_unsigned", "tiled_unsigned") for t in (8, 16, 32)]
    return {str(claims.compare(runs, point(a, n, s), point(b, n, u))) for a, s in ks for b, u in ks}


def table():
    lines = ["---", "orphan: true", "---", "", "# The claims the notebooks make, and the data behind each", "",
             "Every comparative sentence of the English notebooks between two measured numbers, where it stands, the "
             "committed data it rests on (`tiledlab/data/`) and the rows. `tests/test_claims.py` checks each one on "
             "those rows: a timing claim on bench.csv only beyond the run-to-run spread of three runs or more, a claim "
             "on a file of one run only where its margin is far beyond any spread (the rows say which). Generated from "
             "that test (`python tests/test_claims.py`); a test keeps this page current.", ""]
    counts = {}
    for c in CLAIMS:
        counts[c.notebook] = counts.get(c.notebook, 0) + 1
    lines += ["| notebook | claims |", "| --- | --- |"] + [f"| {k} | {v} |" for k, v in counts.items()] + [""]
    lines += ["| notebook | cell | claim | data | rows |", "| --- | --- | --- | --- | --- |"]
    for c in CLAIMS:
        quote = flat(c.quote).replace("|", "\\|")
        lines.append(f"| {c.notebook} | {cell_of(c)} | {quote} | {c.data} | {c.rows} |")
    return "\n".join(lines) + "\n"


def test_the_claims_page_is_current():
    assert PAGE.read_text() == table(), "run python tests/test_claims.py"


if __name__ == "__main__":
    PAGE.write_text(table())
    print(f"wrote {PAGE}", file=sys.stderr)
