"""Pictures for the lessons: count heat maps on shared colour scales, and timing plots with their spread."""
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

KERNEL_STYLE = {"naive": ("--", "o"), "tiled": ("-", "s"), "cublas": (":", "D"),
                "naive_unsigned": ("-.", "o"), "tiled_unsigned": ("-.", "s")}  # the fair pair: dash-dot
TILE_COLOR = {2: "C8", 4: "C5", 8: "C1", 16: "C2", 32: "C3"}  # one colour per tile width, in every figure


def color(kernel, tile):
    return {"naive": "C0", "naive_unsigned": "C9", "cublas": "C4"}.get(kernel) or TILE_COLOR.get(tile, "C7")


def style():
    """Figure defaults that stay readable when projected in a classroom."""
    plt.rcParams.update({"figure.dpi": 100, "font.size": 12, "axes.titlesize": 13, "axes.labelsize": 12,
                         "legend.fontsize": 10, "xtick.labelsize": 11, "ytick.labelsize": 11})


def integer_ticks(ax):
    """Ticks only at whole numbers: rows, columns and thread indices have no halves."""
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def label(kernel, tile):
    """A line's name: the lesson's kernels with their block shape, a kernel by name (no tile) as its name."""
    if kernel == "cublas":
        return "cuBLAS (CuPy)"
    if pd.isna(tile) or tile == "":
        return kernel
    if kernel in ("naive", "naive_unsigned"):
        return f"naive ({tile}×{tile} blocks)" + (", unsigned indices" if kernel != "naive" else "")
    return f"tiled T={tile}, unsigned indices" if kernel == "tiled_unsigned" else f"{kernel} T={tile}"


def lines(table):
    """((kernel, tile), rows sorted by N) per line of a benchmark plot: the lesson's kernels by tile
    width, then kernels by name (tile missing), then cuBLAS."""
    rank = {"naive": 0, "naive_unsigned": 0.5, "tiled": 1, "tiled_unsigned": 1.5, "cublas": 3}  # by name: 2
    tiles = pd.to_numeric(table["tile"], errors="coerce")  # "" or <NA>: a kernel at its own constants
    keyed = table.assign(rank=table["kernel"].map(lambda k: rank.get(k, 2)), tile_width=tiles)
    for (_, kernel, tile), picked in keyed.groupby(["rank", "kernel", "tile_width"], dropna=False):
        yield (kernel, None if pd.isna(tile) else int(tile)), picked.sort_values("N")


def bench_plot(rows, title, ax=None, metric="tflops", legend=True):
    """Benchmark rows (a DataFrame, or dicts) against N on log axes: one line per kernel and tile width,
    with the min–max spread of the repeats as error bars."""
    ax = ax or plt.subplots(figsize=(7.5, 4.5))[1]
    table = pd.DataFrame(rows)
    for (kernel, tile), picked in lines(table):
        line, marker = KERNEL_STYLE.get(kernel, ("-", "^"))
        y = picked[metric].to_numpy(float)
        if metric == "tflops":  # the fastest repeat gives the top of the bar, the slowest the bottom
            lo = y * (picked["median_ms"] / picked["max_ms"]).to_numpy(float)
            hi = y * (picked["median_ms"] / picked["min_ms"]).to_numpy(float)
        else:
            lo, hi = picked["min_ms"].to_numpy(float), picked["max_ms"].to_numpy(float)
        ax.errorbar(picked["N"].to_numpy(), y, yerr=[y - lo, hi - y], fmt=line, marker=marker, capsize=3,
                    color=color(kernel, tile), label=label(kernel, tile))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ns = sorted(table["N"].unique())
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.minorticks_off()
    low, high = table[metric].min(), table[metric].max()
    ticks = [v * 10.0**e for e in range(-3, 6) for v in (1, 2, 5) if low / 2 <= v * 10.0**e <= high * 2]
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_xlabel("N (square matrices N×N)")
    ax.set_ylabel({"tflops": "TFLOP/s (median; bars: min–max)",
                   "median_ms": "time per launch, ms (median; bars: min–max)"}.get(metric, metric))
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    if legend:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
    return ax


def shared_legend(fig, axes):
    """One legend outside the panels, for every line drawn in any of them (each label once)."""
    seen = {}
    for ax in axes:
        for handle, text in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(text, handle)
    order = sorted(seen, key=lambda t: (not t.startswith("naive"), t.startswith("cuBLAS"), len(t), t))
    fig.legend([seen[t] for t in order], order, loc="outside right upper")


def heatmap(counts, title, ax=None, cmap="viridis", annotate=None, vmin=None, vmax=None, colorbar=True):
    """A matrix of counts drawn cell by cell, written in when small enough to read. Returns the image."""
    ax = ax or plt.subplots(figsize=(4.5, 4))[1]
    vmin = counts.min() if vmin is None else vmin
    vmax = counts.max() if vmax is None else vmax
    im = ax.imshow(counts, cmap=cmap, vmin=vmin, vmax=vmax)
    annotate = counts.size <= 256 if annotate is None else annotate
    if annotate:
        for (i, j), v in np.ndenumerate(counts):
            dark = (v - vmin) > 0.6 * (vmax - vmin) if vmax > vmin else False
            ax.text(j, i, str(v), ha="center", va="center", fontsize=0.85 * plt.rcParams["font.size"],
                    color="white" if dark else "black")
    ax.set_title(title)
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    integer_ticks(ax)
    if colorbar:
        plt.colorbar(im, ax=ax, fraction=0.046)
    return im


def heatmaps(maps, titles, cmap="viridis", suptitle=None, size=4.2):
    """Panels meant to be compared, side by side on ONE colour scale from 0 to the largest count."""
    vmax = max(int(m.max()) for m in maps)
    fig, axes = plt.subplots(1, len(maps), figsize=(size * len(maps) + 1, size), squeeze=False,
                             layout="constrained")
    for ax, m, title in zip(axes[0], maps, titles):
        im = heatmap(m, title, ax, cmap, vmin=0, vmax=vmax, colorbar=False)
    fig.colorbar(im, ax=list(axes[0]), fraction=0.03, pad=0.02, label="count (same scale in every panel)")
    if suptitle:
        fig.suptitle(suptitle)
    return fig, axes[0]


def roofline(ax, roofs, fp32, points, xlabel, title, x=(0.03, 1e3), extra_legend=()):
    """A log-log roofline: each roof (label, TB/s) rises as bandwidth × intensity until the FP32 rate
    (TFLOP/s) caps it; `points` are (label or None, FLOP per byte, TFLOP/s, style dict). The legend,
    outside the data, lists the roofs, the labelled points and any `extra_legend` handles."""
    xs = np.logspace(np.log10(x[0]), np.log10(x[1]), 300)
    for (name, tbs), color in zip(roofs, ("0.15", "0.45", "0.65", "0.8")):
        ax.loglog(xs, np.minimum(xs * tbs, fp32), "-", color=color, lw=2, label=f"{name}: {tbs:.2f} TB/s")
    ax.axhline(fp32, color="k", ls=":", lw=1.5, label=f"FP32 FMA rate: {fp32:.1f} TFLOP/s")
    for name, intensity, tflops, style in points:
        ax.loglog(intensity, tflops, ls="none", ms=9, label=name, **style)
    ax.set_xlim(*x)
    ax.set_ylim(0.1, 2 * fp32)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("TFLOP/s")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    handles = ax.get_legend_handles_labels()[0] + list(extra_legend)
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0, fontsize=10)
    return ax
