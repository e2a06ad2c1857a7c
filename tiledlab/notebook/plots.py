"""Pictures for the lessons: count heat maps on shared colour scales, and timing plots with their spread.
In the Chinese edition a figure's words are Chinese with a CJK font (`tr`), else English and a caption says why."""
import io
import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import BoundaryNorm, Normalize
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator, NullFormatter

from .. import i18n
from ..core import registry
from ..core.registry import label  # a line's name in a figure (and in the notebooks' tables)
from ..i18n import N_, _
from . import cells

# by kind: line, marker, colour (None: the tile width's), rank in a legend (the fair pair's: kind_style)
KIND_STYLE = {"naive": ("--", "o", "C0", 0), "tiled": ("-", "s", None, 1), "peer": (":", "D", "C4", 3)}
TILE_COLOR = {2: "C8", 4: "C5", 8: "C1", 16: "C2", 32: "C3"}  # one colour per tile width, in every figure
METRIC_LABEL = {"tflops": N_("TFLOP/s (median; bars: min–max)"),
                "median_ms": N_("time per launch, ms (median; bars: min–max)")}
NO_FONT_CAPTION = N_("(The figure's labels are in English: no font with Chinese characters was found. To see "
                     "them in Chinese, install one, e.g. `sudo apt-get install fonts-noto-cjk` on Debian/Ubuntu or "
                     "`!apt-get install -y fonts-noto-cjk` in Colab, then restart the kernel.)")
_caption = {"shown": False}  # the caption is printed once per notebook cell (once per process outside IPython)
FEW_COUNTS = 12  # up to this many whole numbers on a colour scale, each gets its own band of colour
SMALLEST_LABEL = 8  # points: no text written inside a cell is smaller
# The rungs of a ladder on one figure: a colour per group (a qualitative map), a hollow marker per rung.
RUNG_GROUPS = {"lesson": ("C1", "s", N_("the lesson's tiled kernel")),
               "ladder": ("C0", None, N_("register-tiled rungs")),
               "search": ("C2", "D", N_("search kernel")), "cublas": ("C3", "*", "cuBLAS")}
RUNG_MARKERS = "o^v<>phXPd"  # the register-tiled rungs', in their order
AROUND = [(1, 0), (-1, 0), (1, 1), (-1, 1), (1, -1), (-1, -1), (0, 1), (0, -1)]  # number_points: right, left, ...


def chinese_labels():
    """Whether figures are labelled in Chinese: the Chinese edition with a CJK font, put first in font.sans-serif."""
    if i18n.language() != "zh":
        return False
    font = cells.cjk_font()
    if font is None:
        _english_caption()
        return False
    families = plt.rcParams["font.sans-serif"]
    if families[:1] != [font]:
        plt.rcParams["font.sans-serif"] = [font] + [f for f in families if f != font]
    plt.rcParams["axes.unicode_minus"] = True
    return True


def tr(message):
    return i18n.gettext(message) if chinese_labels() else message


def data_label(value):
    """A value of the data drawn as a label (a level's name), Chinese where notebooks.po has it."""
    return i18n.shown(value) if chinese_labels() else value


def _english_caption():
    """Print NO_FONT_CAPTION once, after the cell's figures (in IPython), else at once."""
    if _caption["shown"]:
        return
    _caption["shown"] = True
    shell = __import__("IPython").get_ipython()  # IPython comes with JupyterLab (ipykernel)
    if shell is None:
        print(i18n.gettext(NO_FONT_CAPTION))
        return

    def after_cell(*_args):  # post_execute runs after the inline backend's own, which shows the figures
        shell.events.unregister("post_execute", after_cell)
        print(i18n.gettext(NO_FONT_CAPTION))
        _caption["shown"] = False
    shell.events.register("post_execute", after_cell)


def png(fig, dpi=None, **options):
    """The figure as PNG bytes (savefig's options passed on); the figure is closed."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, **options)
    plt.close(fig)
    return buffer.getvalue()


def kind_style(kernel, tile):
    """(line, marker, colour, rank) of `kernel`'s line in a benchmark plot, from its kind (registry.kind)."""
    line, marker, colour, rank = KIND_STYLE.get(registry.kind(kernel), ("-", "^", None, 2))
    if kernel in registry.family("fair"):
        line, colour, rank = "-.", colour and "C9", rank + 0.5
    return line, marker, colour or TILE_COLOR.get(tile, "C7"), rank


def style():
    """Figure defaults readable when projected (the Chinese edition's CJK font first, for the notebook's own)."""
    plt.rcParams.update({"figure.dpi": 100, "font.size": 12, "axes.titlesize": 13, "axes.labelsize": 12,
                         "legend.fontsize": 10, "xtick.labelsize": 11, "ytick.labelsize": 11})
    chinese_labels()


def bench_plot(rows, title, ax=None, metric="tflops", legend=True):
    """Benchmark rows against N on log axes: a line per kernel and tile, the repeats' min–max as error bars."""
    ax = ax or plt.subplots(figsize=(7.5, 4.5))[1]
    table = pd.DataFrame(rows)
    tiles = pd.to_numeric(table["tile"], errors="coerce")  # "" or <NA>: a kernel at its own constants
    keyed = table.assign(rank=table["kernel"].map(lambda k: kind_style(k, None)[3]), tile_width=tiles)
    for (_rank, kernel, tile), picked in keyed.groupby(["rank", "kernel", "tile_width"], dropna=False):  # legend order
        tile, picked = None if pd.isna(tile) else int(tile), picked.sort_values("N")
        line, marker, colour, _rank = kind_style(kernel, tile)
        y = picked[metric].to_numpy(float)
        if metric == "tflops":  # the fastest repeat gives the top of the bar, the slowest the bottom
            lo = y * (picked["median_ms"] / picked["max_ms"]).to_numpy(float)
            hi = y * (picked["median_ms"] / picked["min_ms"]).to_numpy(float)
        else:
            lo, hi = picked["min_ms"].to_numpy(float), picked["max_ms"].to_numpy(float)
        ax.errorbar(picked["N"].to_numpy(), y, yerr=[y - lo, hi - y], fmt=line, marker=marker, capsize=3,
                    color=colour, label=label(kernel, tile, tr))
    _log_axes(ax, sorted(table["N"].unique()), title, tr(N_("N (square matrices N×N)")),
              tr(METRIC_LABEL.get(metric, metric)))
    low, high = table[metric].min(), table[metric].max()
    ticks = [v * 10.0**e for e in range(-3, 6) for v in (1, 2, 5) if low / 2 <= v * 10.0**e <= high * 2]
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    if legend:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
    return ax


def cubic_guide(ax, table, through):
    """A dotted line ∝ N³ (as 2N³ loads grow) through the smallest-N time of kernel `through`."""
    first = table[table["kernel"] == through].sort_values("N").iloc[0]
    ns = np.array(sorted(table["N"].unique()), float)
    ax.plot(ns, first["median_ms"] * (ns / first["N"]) ** 3, ":", color="0.4", lw=2,
            label=tr(N_("∝ N³, as the 2N³ loads")))


def tile_plot(table, title, ax=None):
    """The fair pair at one N against T: tiled_unsigned's time, naive_unsigned's (no tiling) and its / T."""
    ax = ax or plt.subplots(figsize=(7.5, 4.5))[1]
    tiled = table[table["kernel"] == "tiled_unsigned"].sort_values("tile")
    naive = table[table["kernel"] == "naive_unsigned"].iloc[0]
    ts, y = tiled["tile"].to_numpy(int), tiled["median_ms"].to_numpy(float)
    ax.errorbar(ts, y, yerr=[y - tiled["min_ms"].to_numpy(float), tiled["max_ms"].to_numpy(float) - y], fmt="-s",
                capsize=3, ms=8, color="C2",
                label=tr(N_("tiled T = {first}…{last}, unsigned indices")).format(first=ts[0], last=ts[-1]))
    ax.axhline(naive["median_ms"], color=kind_style("naive_unsigned", None)[2], ls="-.", lw=2,
               label=label("naive_unsigned", naive["tile"], tr) + tr(N_(": no tiling")))
    ax.plot(ts, naive["median_ms"] / ts, ":o", color="0.4", ms=6,
            label=tr(N_("naive_unsigned / T: if time fell as loads do")))
    _log_axes(ax, ts, title, tr(N_("tile width T (N = {n})")).format(n=naive["N"]), tr(METRIC_LABEL["median_ms"]))
    return ax


def _log_axes(ax, xs, title, xlabel, ylabel):
    """Log axes (x base 2) ticked at `xs`, the title (translated here), labels and a light grid."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.minorticks_off()
    ax.set(title=tr(title), xlabel=xlabel, ylabel=ylabel)
    ax.grid(True, which="major", alpha=0.3)


def effect_factors(effects):
    """kernel, N, tile, base, factor: each variant of effects.csv's time over its plain kernel's (same N, T)."""
    base = effects["kernel"].str.split(" ").str[0]
    plain = effects.set_index(["kernel", "N", "tile"])["median_ms"]
    rows = effects.assign(base=base)[effects["kernel"] != base]
    factor = [r.median_ms / plain[(r.base, r.N, r.tile)] for r in rows.itertuples()]
    return rows.assign(factor=factor)[["kernel", "N", "tile", "base", "factor"]].reset_index(drop=True)


def effect_bars(effects, title, ax=None):
    """effect_factors as bars, one per block width T; 1 is the plain kernel."""
    ax = ax or plt.subplots(figsize=(7.5, 4.5))[1]
    factors = effect_factors(effects)
    variants = list(dict.fromkeys(factors["kernel"]))
    tiles = sorted(factors["tile"].unique())
    width = 0.8 / len(tiles)
    for k, t in enumerate(tiles):
        at = factors[factors["tile"] == t].set_index("kernel")["factor"]
        xs = np.arange(len(variants)) + (k - (len(tiles) - 1) / 2) * width
        ax.bar(xs, [at[v] for v in variants], width, color=TILE_COLOR.get(t, "C7"),
               label=tr(N_("T = {t} ({t}×{t} blocks)")).format(t=t))
    ax.axhline(1, color="k", lw=1)
    ax.set_xticks(range(len(variants)), [textwrap.fill(data_label(v), 10) for v in variants], fontsize=10)
    ax.set(title=tr(title), ylabel=tr(N_("time / the plain kernel's (same T)")))
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(loc="upper right", fontsize=9)
    return ax


def shared_legend(fig, axes):
    """One legend outside the panels, for every line drawn in any of them (each label once)."""
    seen = {}
    for ax in axes:
        for handle, text in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(text, handle)
    order = sorted(seen, key=lambda t: (not t.startswith("naive"), t.startswith("cuBLAS"), len(t), t))
    fig.legend([seen[t] for t in order], order, loc="outside right upper")


def count_scale(cmap, vmin, vmax):
    """(colormap, norm, ticks) for whole counts: a band and a tick per number when few, else continuous."""
    vmin, vmax = int(vmin), int(vmax)
    if (levels := vmax - vmin + 1) <= FEW_COUNTS:
        return (plt.get_cmap(cmap).resampled(levels), BoundaryNorm(np.arange(vmin - 0.5, vmax + 1), levels),
                list(range(vmin, vmax + 1)))
    return plt.get_cmap(cmap), Normalize(vmin, vmax), MaxNLocator(integer=True)


def _cell_for(size, chars):
    """(width, height) in points of a cell for `chars` digits of `size` points (0.62 em; 70 % wide, 60 % high)."""
    return 0.62 * max(chars, 1) * size / 0.7, size / 0.6


def _fitting_size(ax, shape, chars):
    """The largest font size (points) at which `chars` characters fit a cell of a grid over all of `ax`."""
    ax.figure.draw_without_rendering()  # the axes' final box, after the layout and the equal aspect
    box = ax.get_window_extent()
    rows, cols = shape
    cell_w, cell_h = (72 / ax.figure.dpi) * box.width / cols, (72 / ax.figure.dpi) * box.height / rows
    per_point_w, per_point_h = _cell_for(1, chars)
    return min(cell_w / per_point_w, cell_h / per_point_h)


def cell_fontsize(ax, shape, chars):
    """Font size for `chars`-character labels in a grid on `ax`: from SMALLEST_LABEL up to 85 % of font.size."""
    return max(SMALLEST_LABEL, min(0.85 * plt.rcParams["font.size"], _fitting_size(ax, shape, chars)))


def grid_figsize(rows, cols, chars, margin=(1.6, 1.4)):
    """A figure size (inches) whose rows×cols cells hold `chars` characters; `margin` for labels and title."""
    cell = max(_cell_for(0.85 * plt.rcParams["font.size"], chars)) / 72
    return max(4.5, cols * cell + margin[0]), max(4.0, rows * cell + margin[1])


def cell_text(ax, texts, colors=None, **style):
    """Write texts[i, j] (in colors[i, j]) in cell (i, j) of an image on `ax`, at one size that fits them all."""
    texts = np.asarray(texts, dtype=object)
    size = cell_fontsize(ax, texts.shape, max(len(str(t)) for t in texts.flat))
    for (i, j), text in np.ndenumerate(texts):
        ax.text(j, i, str(text), ha="center", va="center", fontsize=size,
                color="black" if colors is None else colors[i, j], **style)
    return size


def heatmap(counts, title, ax=None, cmap="viridis", annotate=None, vmin=None, vmax=None, colorbar=True):
    """Whole-number counts drawn cell by cell, written in when they fit; returns the image."""
    ax = ax or plt.subplots(figsize=(4.5, 4))[1]
    cmap, norm, ticks = count_scale(cmap, counts.min() if vmin is None else vmin, counts.max() if vmax is None else vmax)
    im = ax.imshow(counts, cmap=cmap, norm=norm)
    ax.set(title=tr(title), xlabel=tr(N_("column")), ylabel=tr(N_("row")))
    for axis in (ax.xaxis, ax.yaxis):  # rows and columns have no halves
        axis.set_major_locator(MaxNLocator(integer=True))
    if colorbar:
        plt.colorbar(im, ax=ax, fraction=0.046, ticks=ticks)
    annotate_counts(ax, im, counts, annotate)
    return im


def annotate_counts(ax, image, counts, annotate=None):
    """Each count written in its cell, white on dark colours, when asked or (None) when it can be read."""
    if annotate is None:
        chars = len(str(int(counts.max())))
        annotate = counts.size <= 256 and _fitting_size(ax, counts.shape, chars) >= SMALLEST_LABEL
    if annotate:
        dark = image.cmap(image.norm(counts))[..., :3] @ [0.299, 0.587, 0.114] < 0.5  # the cell's luminance
        cell_text(ax, counts.astype(int), np.where(dark, "white", "black"))


def heatmaps(maps, titles, cmap="viridis", suptitle=None, size=4.2, annotate=None, figsize=None):
    """Panels side by side on ONE colour scale from 0; counts written once the layout is final, so they fit."""
    if not len(maps) or len(maps) != len(titles):
        raise ValueError(_("heatmaps takes one or more maps and a title for each, got len(maps) = {maps} and "
                           "len(titles) = {titles}").format(maps=len(maps), titles=len(titles)))
    vmax = max(int(m.max()) for m in maps)
    fig, axes = plt.subplots(1, len(maps), figsize=figsize or (size * len(maps) + 1, size), squeeze=False,
                             layout="constrained")
    images = [heatmap(m, title, ax, cmap, annotate=False, vmin=0, vmax=vmax, colorbar=False)
              for ax, m, title in zip(axes[0], maps, titles)]
    fig.colorbar(images[0], ax=list(axes[0]), fraction=0.03, pad=0.02,
                 label=tr(N_("count (same scale in every panel)")), ticks=count_scale(cmap, 0, vmax)[2])
    if suptitle:
        fig.suptitle(tr(suptitle))
    for ax, image, m in zip(axes[0], images, maps):
        annotate_counts(ax, image, m, annotate)
    return fig, axes[0]


def roofline(ax, roofs, fp32, points, xlabel, title, x=(0.03, 1e3), extra_legend=(), legend=True):
    """A log-log roofline: roofs (label, TB/s) capped at `fp32` TFLOP/s; points (label, FLOP/byte, TFLOP/s, style)."""
    xs = np.logspace(np.log10(x[0]), np.log10(x[1]), 300)
    for (name, tbs), color in zip(roofs, ("0.15", "0.45", "0.65", "0.8")):
        ax.loglog(xs, np.minimum(xs * tbs, fp32), "-", color=color, lw=2, label=f"{tr(data_label(name))}: {tbs:.2f} TB/s")
    ax.axhline(fp32, color="k", ls=":", lw=1.5, label=tr(N_("FP32 FMA rate: {fp32:.1f} TFLOP/s")).format(fp32=fp32))
    for name, intensity, tflops, style in points:
        ax.loglog(intensity, tflops, ls="none", ms=9, label=name, **style)
    ax.set(xlim=x, ylim=(0.1, 2 * fp32), title=tr(title), xlabel=tr(xlabel), ylabel="TFLOP/s")
    ax.grid(True, which="major", alpha=0.3)
    if legend:
        handles = ax.get_legend_handles_labels()[0] + list(extra_legend)
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0, fontsize=10)
    return ax


def rung_points(rungs):
    """Roofline points of (name, group, FLOP/byte, TFLOP/s) rungs, "1  tiled T=32": hollow, so overlaps show."""
    points, k = [], 0
    for i, (name, group, intensity, tflops) in enumerate(rungs, 1):
        color, marker, _ = RUNG_GROUPS[group]
        if marker is None:
            marker, k = RUNG_MARKERS[k % len(RUNG_MARKERS)], k + 1
        style = dict(marker=marker, color=color, markerfacecolor="none", markeredgewidth=2, alpha=0.85)
        points.append((f"{i}  {name}", intensity, tflops, style))
    return points


def plain_log_ticks(ax, xs, ys):
    """Log axes ticked at these values as plain numbers (a zoom spans too little for powers of ten)."""
    for axis, values in ((ax.xaxis, xs), (ax.yaxis, ys)):
        axis.set_ticks(values, [f"{v:g}" for v in values])
        axis.set_minor_formatter(NullFormatter())


def group_legend(groups):
    return [Patch(color=RUNG_GROUPS[g][0], label=tr(N_("colour: {group}")).format(group=tr(RUNG_GROUPS[g][2])))
            for g in dict.fromkeys(groups)]


def number_points(ax, points, size=10, marker_pt=9, leave_out=None):
    """Write each point's number (its label's first word) at the first free place of eight around it, further
    out with a leader line if all are taken; none outside the axes or inside `leave_out` ((x0, x1), (y0, y1))."""
    ax.figure.draw_without_rendering()
    scale = ax.figure.dpi / 72  # pixels per point
    frame = ax.get_window_extent()
    xy = ax.transData.transform([(x, y) for _, x, y, _ in points])
    shown = [frame.x0 <= px <= frame.x1 and frame.y0 <= py <= frame.y1 for px, py in xy]
    r = (marker_pt / 2 + 1.5) * scale
    taken = [(px - r, py - r, px + r, py + r) for (px, py), seen in zip(xy, shown) if seen]  # every marker
    if leave_out:
        (x0, x1), (y0, y1) = leave_out
        shown = [seen and not (x0 <= x <= x1 and y0 <= y <= y1) for seen, (_, x, y, _) in zip(shown, points)]

    def free(box):
        x0, y0, x1, y1 = box
        return (frame.x0 <= x0 and x1 <= frame.x1 and frame.y0 <= y0 and y1 <= frame.y1 and
                not any(x0 < b[2] and b[0] < x1 and y0 < b[3] and b[1] < y1 for b in taken))

    crowd = [sum(np.hypot(*(xy[i] - xy[j])) < 4 * r for j in range(len(xy))) for i in range(len(xy))]
    for i in sorted((i for i in range(len(points)) if shown[i]), key=lambda i: -crowd[i]):
        text = points[i][0].split()[0]
        w, h = (0.62 * len(text) * size + 2) * scale, (size + 2) * scale
        spots = [(xy[i][0] + sx * (d + w / 2), xy[i][1] + sy * (d + h / 2), d > r + 2 * scale)
                 for d in (r + 2 * scale, 2.5 * r, 4 * r) for sx, sy in AROUND]
        cx, cy, far = next(((cx, cy, far) for cx, cy, far in spots
                            if free((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2))), spots[-1])
        taken.append((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2))
        ax.annotate(text, xy=points[i][1:3], xytext=((cx - xy[i][0]) / scale, (cy - xy[i][1]) / scale),
                    textcoords="offset points", ha="center", va="center", fontsize=size, color=points[i][3]["color"],
                    fontweight="bold", arrowprops=dict(arrowstyle="-", color="0.5", lw=0.8, shrinkA=0, shrinkB=4) if far else None)
    return ax
