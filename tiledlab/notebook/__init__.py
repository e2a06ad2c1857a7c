"""What the notebooks call, with the names a lesson needs from other wings, so one import line serves:

    from tiledlab.notebook import setup, show, table, timings, plots, formulas, data, count_loads
"""
import math
from collections.abc import Iterable

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .. import data, i18n
from ..backend import SIMULATOR, describe
from ..core import card, formulas, registry
from ..core.rules import is_whole, whole
from ..core.launch import resolve
from ..counting import count_loads
from ..experiments import bench
from ..experiments import device as device_properties
from ..i18n import N_, _
from . import claims, plots
from .cells import translate_cells

__all__ = ["setup", "show", "table", "timings", "device", "measured", "plots", "formulas", "data", "count_loads"]
VIEWS = {  # view: the kernels its panels draw (None: every one of the rows), and the step it belongs to
    "lesson": (("naive", "tiled", "cublas"), "the lesson's pair and cuBLAS against N"),
    "naive": (("naive", "naive_unsigned"), "the naive kernel and its fair twin against N, beside 2N³ loads"),
    "pair": (("naive", "tiled", "naive_unsigned", "tiled_unsigned"), "naive against tiled at one T, both pairs"),
    "tile": (("naive_unsigned", "tiled_unsigned"), "the fair pair's time against T at one N"),
    "effects": (None, "the layout variants of effects.csv as bars"),
}


def setup(seed=0):
    """Name the backend, set figure defaults (zh: translate later cells); return rand(*shape), float32 normals."""
    whole("seed", 0 if seed is None else seed, least=0)
    if SIMULATOR:  # which backend runs the lesson, and what that means for its numbers
        print(_("Backend: CUDA simulator (no GPU in use). Kernels run as Python threads: counts and results\n"
                "are exact, but times measure Python, not a GPU. GPU timings below are committed data,\n"
                "{provenance}.").format(provenance=data.provenance(data.load("h200/bench.csv"))) + "\n" + card.which())
    else:
        info = describe()
        print(_("Backend: GPU {device} (compute capability {cc}), numba {numba}, numba-cuda {numba_cuda}").format(
            device=info["device"], cc=info["compute_capability"], numba=info["numba"], numba_cuda=info["numba_cuda"]))
    plots.style()
    translate_cells()
    rng = np.random.default_rng(seed)

    def rand(*shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):  # rand((M, K)), as np.zeros takes it
            shape = tuple(shape[0])
        if not shape or not is_whole(*shape) or min(shape) < 0:
            raise ValueError(_("rand takes its shape as whole numbers of at least 0, e.g. rand(8, 8) or rand((8, 8)), "
                               "got rand{shape}").format(shape=shape if len(shape) != 1 else f"({shape[0]!r})"))
        return rng.standard_normal(shape, dtype=np.float32)
    return rand


def device():
    """The card's properties: live from the driver on a GPU, the committed H200 row on the simulator (`source`)."""
    if SIMULATOR:
        committed = data.load("h200/device.csv")
        return {**committed.iloc[0].to_dict(),
                "source": _("committed data, {provenance}").format(provenance=data.provenance(committed))}
    return {**device_properties.properties(), **describe(), "source": _("read live from the driver")}


def measured(table, kernels):
    """The `kernels` with rows in the committed `table`; each without is named as not measured yet."""
    have = set(table["kernel"])
    for name in kernels:
        if name not in have:
            print(_("{name}: counted on the simulator, not measured on a GPU yet").format(name=name))
    return [name for name in kernels if name in have]


def show(kernel, shape=None, **constants):
    """The source that is counted, timed and tested (for `constants`; "best": this card's choice at `shape`)."""
    from IPython.display import Code
    return Code(resolve(kernel, shape).source(constants), language="python")


def table(frame, rows=None, columns=None, formats=None):
    """A DataFrame, or a header and rows, printed aligned (nbval compares it); `columns` picks (a dict renames)."""
    if isinstance(frame, pd.DataFrame):
        chosen = list(frame.columns if columns is None else columns)
        if missing := [c for c in [*chosen, *(formats or ())] if c not in frame or c not in chosen]:
            raise ValueError(_("table: this table has no column {missing!r}; its columns are {names}").format(
                missing=missing[0], names=", ".join(map(str, chosen if missing[0] in frame else frame.columns))))
        frame = frame if columns is None else frame[chosen]
        for column, spec in (formats or {}).items():
            frame = frame.assign(**{column: frame[column].map(spec.format, na_action="ignore")})
        header = [columns[c] if isinstance(columns, dict) else c for c in frame.columns]
        rows = frame.itertuples(index=False)
    elif rows is None:
        raise ValueError(_("table takes a DataFrame, or a header and its rows: table(header, rows)"))
    else:
        header = frame
    cells = [[i18n.notebook_text(str(h)) for h in header]] + [_row(r, k, header) for k, r in enumerate(rows, 1)]
    widths = [max(i18n.width(row[i]) for row in cells) for i in range(len(header))]
    for k, row in enumerate(cells):
        print("  ".join(" " * (w - i18n.width(c)) + c for c, w in zip(row, widths)))
        if k == 0:
            print("  ".join("-" * w for w in widths))


def _row(values, number, header):
    """A row's cells; a row that is one value (not a list) is a row of one column."""
    values = list(values) if isinstance(values, Iterable) and not isinstance(values, str) else [values]
    if len(values) != len(header):
        raise ValueError(_("table: row {number} has {n} values for {m} columns ({names})").format(
            number=number, n=len(values), m=len(header), names=", ".join(map(str, header))))
    return [_cell(v) for v in values]


def _cell(value):
    if is_whole(value):
        return f"{value:,}"
    if value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return i18n.notebook_text(value) if isinstance(value, str) else str(value)


def timings(view="lesson", tile=16, n=None, gpu_ns=(1024, 2048, 4096), tiles=(8, 16, 32), sim_ns=(8, 16),
            sim_tiles=(4, 8)):
    """Time kernels live and plot them beside committed H200 data, as `view` (VIEWS) says; (live, committed) rows.
    `n`: the committed N of "tile" and "effects" (the largest by default); views but "lesson" print a reading."""
    if view not in VIEWS:
        raise ValueError(f"view must be one of {sorted(VIEWS)}, got {view!r}")
    ns, ts = (sim_ns, sim_tiles) if SIMULATOR else (gpu_ns, tiles)
    live = _live(view, ns, ts, min(tile, max(sim_tiles)) if SIMULATOR else tile)
    ref = _committed(view, tile, n)
    shared_y = view == "lesson" and not SIMULATOR
    fig, axes = plt.subplots(1, 2, figsize=(14, 4.8), sharey=shared_y, layout="constrained")
    _draw(view, live, axes[0], live=True)
    _draw(view, ref, axes[1], live=False)
    plots.shared_legend(fig, axes[:1] if view == "effects" else axes)
    plt.show()
    if view != "lesson":
        print(_reading(view, ref))
    return live, ref


def _live(view, ns, ts, tile):
    runs = {"naive": (ns, (), True), "pair": (ns, (tile,), True), "tile": (ns[-1:], ts, True)}
    sizes, widths, fair = runs.get(view, (ns, ts, False))
    rows = pd.DataFrame(bench.run(sizes, widths, warmup=0 if SIMULATOR else 1, repeats=2 if SIMULATOR else 10,
                                  progress=False, fair=fair))
    kernels = VIEWS[view][0] or VIEWS["lesson"][0]  # effects: the lesson's pair, live
    return rows[rows["kernel"].isin(kernels)].reset_index(drop=True)


def _committed(view, tile, n):
    if view == "effects":
        effects = data.load("h200/effects.csv")
        return effects[effects["N"] == (n or effects["N"].max())].reset_index(drop=True)
    ref = claims.points(data.load("h200/bench.csv"))  # the median of its runs
    ref = ref[ref["kernel"].isin(VIEWS[view][0])]  # bench.csv holds both pairs and cuBLAS
    naive = ref["kernel"].map(lambda k: registry.kind(k) == "naive").astype(bool)
    keep = ~naive | (ref["tile"] == bench.NAIVE_TILE)  # one naive block shape
    if view == "pair":
        keep &= naive | (ref["tile"] == tile)
    ref = ref[keep]
    if view == "tile":
        ref = ref[ref["N"] == (n or ref["N"].max())]
    return ref.reset_index(drop=True)


def _draw(view, rows, ax, live):
    sizes, first = sorted(rows["N"].unique()), rows.iloc[0]
    span = f"N = {sizes[0]}" + (f"…{sizes[-1]}" if len(sizes) > 1 else "")
    title = (N_("live, CUDA simulator, {span}:\nPython's time, which says nothing of GPU speed") if live and SIMULATOR
             else N_("live: {device}, {span}") if live else N_("committed: {device} ({date})\n{span}"))
    title = plots.tr(title).format(device=first.get("device"), date=first.get("date"), span=span)
    metric = "median_ms" if (live and SIMULATOR) or view in ("naive", "tile") else "tflops"
    if view == "effects" and not live:
        plots.effect_bars(rows, title, ax)
    elif view == "tile":
        plots.tile_plot(rows, title, ax)
    else:
        plots.bench_plot(rows, title, ax, metric, legend=False)
        if view == "naive" and not (live and SIMULATOR):  # Python's time follows no GPU's loads
            plots.cubic_guide(ax, rows, "naive_unsigned")


def _reading(view, ref):
    def ms(kernel, n, tile=None):
        return data.value(ref, "median_ms", kernel=kernel, N=n, **({} if tile is None else {"tile": tile}))
    sizes = sorted(ref["N"].unique())
    b = bench.NAIVE_TILE  # the committed panels' naive block shape
    if view == "naive":
        slopes = {k: np.polyfit(np.log(g["N"].astype(float)), np.log(g["median_ms"].astype(float)), 1)[0]
                  for k, g in ref.groupby("kernel")}
        factors = [ms("naive", n) / ms("naive_unsigned", n) for n in sizes]
        return _("committed, N = {first}…{last}: log-log slope of time, naive {naive:.2f}, naive_unsigned "
                 "{unsigned:.2f} (2N³ loads: 3); naive takes {low:.2f}…{high:.2f}× naive_unsigned's time").format(
            first=sizes[0], last=sizes[-1], naive=slopes["naive"], unsigned=slopes["naive_unsigned"],
            low=min(factors), high=max(factors))
    if view == "pair":
        t = int(ref.loc[ref["kernel"] == "tiled", "tile"].iloc[0])
        return "\n".join(_("N = {n}: naive / tiled T={t} = {lesson:.2f}×, fair pair naive_unsigned ({b}×{b} blocks) / "
                           "tiled_unsigned T={t} = {fair:.2f}×").format(n=n, t=t, b=b, lesson=ms("naive", n) / ms("tiled", n, t),
                                                                     fair=ms("naive_unsigned", n) / ms("tiled_unsigned", n, t))
                         for n in sizes)
    if view == "tile":
        (n,) = sizes
        tiled = ref[ref["kernel"] == "tiled_unsigned"].sort_values("tile")
        factors = _(", ").join(_("{factor:.2f}× at T = {t}").format(factor=ms("naive_unsigned", n) / r.median_ms, t=r.tile)
                               for r in tiled.itertuples())
        return _("N = {n}: naive_unsigned ({b}×{b} blocks) / tiled_unsigned = {factors} (global loads: T times fewer)").format(
            n=n, b=b, factors=factors)
    worst = plots.effect_factors(ref).sort_values("factor").iloc[-1]
    return _("N = {n}: the costliest change is {kernel} at T = {t}, {factor:.2f}× the time of {base}").format(
        n=sizes[0], kernel=i18n.shown(worst["kernel"]), t=worst["tile"], factor=worst["factor"], base=i18n.shown(worst["base"]))
