"""One slide-ready figure per notebook: the result each lesson proves, drawn from small live counts and
the committed H200 data. `python -m tiledlab takeaways --out DIR` writes them as PNG files (16:9,
fonts readable from the back of a room); notebook 00 shows them as the series' index."""
import pathlib

import matplotlib.pyplot as plt
import numpy as np

from .. import data
from ..core.operands import operands
from ..counting import count_loads
from ..i18n import N_
from . import claims, plots
from .plots import tr

SLIDE = (12.8, 7.2)  # inches: 16:9
FONT = {"font.size": 18, "axes.titlesize": 20, "axes.labelsize": 18, "legend.fontsize": 15,
        "xtick.labelsize": 16, "ytick.labelsize": 16}


def naive_reads():
    """01: the naive kernel's global loads grow like N³ while the data grows like N²."""
    ns = [4, 8, 12, 16]
    loads = [count_loads("naive", *operands(n, n, n), tile=4).total for n in ns]
    fig, ax = plt.subplots(figsize=SLIDE, layout="constrained")
    ax.loglog(ns, loads, "o", ms=14, color="C3", label=tr(N_("measured global loads")))
    ax.loglog(ns, [2 * n**3 for n in ns], "-", color="C3", alpha=0.5, lw=3, label="2N³")
    ax.loglog(ns, [2 * n**2 for n in ns], "--", color="0.4", lw=3, label=tr(N_("elements of A and B: 2N²")))
    ax.set_xticks(ns, [str(n) for n in ns]); ax.minorticks_off()
    ax.set_xlabel("N"); ax.set_ylabel(tr(N_("global loads"))); ax.legend()
    ax.set_title(tr(N_("1 · Naive: N² threads × 2N loads = 2N³, every element fetched N times")))
    return fig


def redundant_reads():
    """02: inside a 4×4 block, the naive kernel fetches each element 4 times; tiling fetches it once."""
    n = T = 4
    A, B = operands(n, n, n)
    maps = [count_loads(k, A, B, tile=T).maps["A"] for k in ("naive", "tiled")]
    titles = [tr(N_("naive kernel ({T}×{T} blocks)")).format(T=T), tr(N_("tiled kernel, T = {T}")).format(T=T)]
    suptitle = tr(N_("2 · Global fetches of each element of A, N = {n}, T = {T} (measured)")).format(n=n, T=T)
    return plots.heatmaps(maps, titles, cmap="Reds", figsize=SLIDE, suptitle=suptitle)[0]


def one_tile_step():
    """03: one tile step, measured: naive 2T³, tiled 2T², ratio T."""
    tiles = [1, 2, 4, 8]
    naive, tiled = ([count_loads(k, *operands(T, T, T), tile=T).total for T in tiles] for k in ("naive", "tiled"))
    fig, ax = plt.subplots(figsize=SLIDE, layout="constrained")
    ts = np.array(tiles)
    span = f"T = {tiles[0]}…{tiles[-1]}"
    ax.loglog(ts, naive, "o", ms=14, color="C3", label=tr(N_("naive (T×T blocks), {span}, measured")).format(span=span))
    ax.loglog(ts, 2 * ts**3, "-", color="C3", alpha=0.5, lw=3, label="2T³")
    ax.loglog(ts, tiled, "s", ms=14, color="C2", label=tr(N_("tiled {span}, measured")).format(span=span))
    ax.loglog(ts, 2 * ts**2, "-", color="C2", alpha=0.5, lw=3, label="2T²")
    ax.set_xticks(tiles, [str(t) for t in tiles]); ax.minorticks_off()
    ax.set_xlabel(tr(N_("tile width T"))); ax.set_ylabel(tr(N_("global loads in one tile step"))); ax.legend()
    ax.set_title(tr(N_("3 · One tile step: 2T³ loads become 2T², T times fewer")))
    return fig


def counters(n, kernels=("naive", "tiled")):
    """The committed Nsight Compute rows of `kernels` at N = n."""
    return data.load("h200/profile.csv").query("N == @n and kernel in @kernels")


def whole_matrix():
    """04: where the fair pair's time goes on the H200: measured time against the issue, shared-memory and
    load/store bounds (the lesson's signed kernels add numba's index cost, notebook 4)."""
    prof = counters(4096, ("naive_unsigned", "tiled_unsigned")).sort_values(["kernel", "tile"])
    fig, ax = plt.subplots(figsize=SLIDE, layout="constrained")
    xs, width = np.arange(len(prof)), 0.2
    for i, (column, colour, text) in enumerate((("time_ms", "0.3", N_("measured")), ("bound_issue_ms", "C0", N_("instruction-issue bound")),
                                                ("bound_shared_ms", "C2", N_("shared-memory bound")),
                                                ("bound_lsu_ms", "C1", N_("load/store unit bound")))):
        ax.bar(xs + (i - 1.5) * width, prof[column].fillna(0), width, color=colour, label=tr(text))
    ax.set_xticks(xs, [plots.label(r.kernel, r.tile, tr) for r in prof.itertuples()]); ax.set_yscale("log")
    ax.set_yticks([5, 10, 20, 50], ["5", "10", "20", "50"]); ax.minorticks_off()
    ax.set_ylabel("ms, N = 4096"); ax.legend(loc="upper right")
    ax.set_title(tr(N_("4 · H200, the fair pair: T-fold fewer global loads, far less time saved")))
    return fig


def line_by_line():
    """05: one dependent load per level on the H200, beside the article's 20 and 300 cycles."""
    lat = data.load("h200/latency.csv")
    lat = lat[lat["index"] == "uint32"]
    fig, ax = plt.subplots(figsize=SLIDE, layout="constrained")
    ax.barh(range(len(lat)), lat["cycles"], color=["C2", "C0", "C1", "C3", "C3"])
    for y, cycles in enumerate(lat["cycles"]):
        ax.text(cycles, y, f" {cycles:.0f}", va="center")
    for cycles in (20, 300):
        ax.axvline(cycles, color="k", ls="--", lw=2)
        ax.text(cycles, -0.85, " " + tr(N_("article: {cycles}")).format(cycles=cycles), va="center")
    ax.set_yticks(range(len(lat)), [plots.data_label(v) for v in lat["level"]])
    ax.set_ylim(len(lat) - 0.5, -1.3)
    ax.set_xlim(0, 1.15 * lat["cycles"].max()); ax.set_xlabel(tr(N_("cycles per dependent load (H200)")))
    ax.set_title(tr(N_("5 · Shared memory answers in tens of cycles, DRAM in hundreds\n"
                       "(dashed: the figures the article quotes)")))
    return fig


def caches():
    """06: the fair pair's naive / tiled at each memory level on the H200: exactly T-fold only for load
    instructions; DRAM bytes rise beyond L2."""
    prof = counters(4096, ("naive_unsigned", "tiled_unsigned"))
    naive = data.row(prof, kernel="naive_unsigned")
    tiled = prof.query("kernel == 'tiled_unsigned'").sort_values("tile")
    ts = tiled["tile"].tolist()
    fig, ax = plt.subplots(figsize=SLIDE, layout="constrained")
    for key, text in (("global_ld_inst", N_("load instructions")), ("l2_read_sectors", N_("L2 sectors")),
                      ("dram_read_bytes", N_("DRAM bytes"))):
        ax.plot(ts, naive[key] / tiled[key], "o-", ms=12, lw=3, label=tr(text))
    bench, naive_16 = data.load("h200/bench.csv"), dict(kernel="naive_unsigned", N=4096, tile=16)  # as profiled
    speedups = [claims.factor(bench, naive_16, dict(kernel="tiled_unsigned", N=4096, tile=t)) for t in ts]
    ax.plot(ts, speedups, "o-", ms=12, lw=3, label=tr(N_("time")))  # tiling's own factor, medians of the runs
    ax.plot(ts, ts, "k--", lw=2, label="T")
    ax.set_xscale("log", base=2); ax.set_yscale("log"); ax.set_xticks(ts, [str(t) for t in ts]); ax.minorticks_off()
    ax.set_xlabel(tr(N_("tile width T"))); ax.set_ylabel(tr(N_("naive_unsigned (16×16 blocks) / tiled_unsigned T, N = 4096")))
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))  # beside the axes: inside, it hid DRAM's point at T = 32
    ax.set_title(tr(N_("6 · Caches catch some reuse; only load instructions fall exactly T-fold")))
    return fig


def headline():
    """(N, [(label, TFLOP/s, % of cuBLAS in the same run, colour)]) at the largest N: the lesson's naive kernel (its
    signed indices cost numba's fix-ups), the fair pair (bench.csv), register tiling, the fastest and cuBLAS."""
    bench, ladder = claims.points(data.load("h200/bench.csv")), data.load("h200/ladder.csv")
    n = int(ladder["N"].max())
    at = ladder.query("N == @n").set_index("kernel")
    fastest, b = at.drop("cublas")["tflops"].idxmax(), claims.fastest(bench, "naive_unsigned", n)
    blas = data.value(bench, "tflops", kernel="cublas", N=n)
    fair = [(tr(N_("naive, signed indices: numba's index cost")), "naive", 16, "0.6"),
            (tr(N_("naive, a thread per element ({b}×{b} blocks)")).format(b=b), "naive_unsigned", b, "C3"),
            (tr(N_("tiled, T = 32: T×T tiles in shared memory")), "tiled_unsigned", 32, "C2")]
    bars = [(text, v, 100 * v / blas, colour) for text, k, tile, colour in fair
            for v in [data.value(bench, "tflops", kernel=k, N=n, tile=tile)]]
    return n, bars + [(text, at.loc[k, "tflops"], at.loc[k, "pct_cublas"], colour) for text, k, colour in (
        (tr(N_("register tiles, 8×8 per thread")), "regtile_2d", "C0"),
        (tr(N_("the fastest measured kernel: {kernel}")).format(kernel=fastest), fastest, "C0"), ("cuBLAS", "cublas", "C4"))]


def register_tiling():
    """07: the series on the H200, from the fair naive kernel to near cuBLAS (numba's index cost apart)."""
    n, bars = headline()
    fig, ax = plt.subplots(figsize=SLIDE, layout="constrained")
    ax.barh([b[0] for b in bars], [b[1] for b in bars], color=[b[3] for b in bars])
    for y, (_, tflops, pct, _) in enumerate(bars):
        ax.text(tflops, y, f" {pct:.0f}%", va="center")
    ax.invert_yaxis(); ax.set_xlabel(tr(N_("TFLOP/s on the H200, N = {n} (labels: % of cuBLAS)")).format(n=n))
    ax.set_title(tr(N_("7 · Register tiles and 128-bit shared loads: numba near cuBLAS")))
    return fig


FIGURES = {"01_naive_reads": naive_reads, "02_redundant_reads": redundant_reads, "03_one_tile_step": one_tile_step,
           "04_whole_matrix": whole_matrix, "05_line_by_line": line_by_line, "06_caches": caches,
           "07_register_tiling": register_tiling}


def figures():
    """{notebook: figure}, drawn with slide-sized fonts."""
    plots.chinese_labels()  # before rc_context, which would put the font list back before the figures are drawn
    with plt.rc_context(FONT):
        return {name: make() for name, make in FIGURES.items()}


def write(out):
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, fig in figures().items():
        fig.savefig(out / f"{name}.png", dpi=100)
        plt.close(fig)
    return [out / f"{name}.png" for name in FIGURES]
