"""Pictures for the lessons: read-count heat maps, tile grids, and timing plots."""
import matplotlib.pyplot as plt
import numpy as np


def style():
    """Figure defaults that stay readable when projected in a classroom."""
    plt.rcParams.update({"figure.dpi": 100, "font.size": 12, "axes.titlesize": 13, "axes.labelsize": 12,
                         "legend.fontsize": 10, "xtick.labelsize": 11, "ytick.labelsize": 11})


def series(rows, kernel, tile=None):
    """(N values, rows) of one kernel (and tile) from benchmark rows, sorted by N."""
    picked = sorted((r for r in rows if r["kernel"] == kernel and (tile is None or r["tile"] == tile)),
                    key=lambda r: r["N"])
    return np.array([r["N"] for r in picked]), picked


def bench_plot(rows, title, ax=None, metric="tflops"):
    """Log-log plot of benchmark rows: one line per kernel and tile width."""
    ax = ax or plt.subplots(figsize=(6.4, 4.2))[1]
    labels = {"tflops": "TFLOP/s", "median_ms": "median time (ms)"}
    for kernel in ("naive", "tiled", "cublas"):
        for tile in sorted({r["tile"] for r in rows if r["kernel"] == kernel}):
            ns, picked = series(rows, kernel, tile)
            label = "cuBLAS (CuPy)" if kernel == "cublas" else f"{kernel} T={tile}"
            style = {"naive": "--", "tiled": "-", "cublas": ":"}[kernel]
            ax.plot(ns, [r[metric] for r in picked], style, marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("N (square matrices N×N)")
    ax.set_ylabel(labels.get(metric, metric))
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def heatmap(counts, title, ax=None, cmap="viridis", annotate=None):
    """A matrix of counts drawn cell by cell, written in when small enough to read."""
    ax = ax or plt.subplots(figsize=(4, 4))[1]
    im = ax.imshow(counts, cmap=cmap)
    annotate = counts.size <= 256 if annotate is None else annotate
    if annotate:
        for (i, j), v in np.ndenumerate(counts):
            ax.text(j, i, str(v), ha="center", va="center", fontsize=8,
                    color="white" if v < counts.max() * 0.6 else "black")
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    plt.colorbar(im, ax=ax, fraction=0.046)
    return ax
