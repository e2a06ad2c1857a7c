"""Sentences that compare two measured points (a table's `run` column names each run), stated only beyond their
run-to-run spread: `compare(table, a, b)` claims an order only with MIN_RUNS runs and a margin beyond both points'
half-ranges; _ms and _ns metrics are better lower, others higher, pct ones compared in points."""
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core import registry
from ..i18n import N_, _

MIN_RUNS = 3  # the fewest runs whose spread a claim may rest on
BEYOND = {False: N_("{a} is faster than {b} by {by} (beyond the run-to-run spread of ± {noise}, {runs} runs)."),
          True: N_("{a} is ahead of {b} by {by} (beyond the run-to-run spread of ± {noise}, {runs} runs).")}
KEYS = ("kernel", "N", "tile")  # what names a point


def points(table, metrics=("median_ms", "tflops")):
    """A row per point: each metric's median, run_min_ and run_max_ over the runs, `runs`, samples' min/max_ms."""
    if "runs" in table.columns:
        return table
    keys = [k for k in KEYS if k in table.columns]
    table = table if "run" in table.columns else table.assign(run=1)
    groups = table.groupby(keys, sort=False, dropna=False)
    out = groups.first().assign(runs=groups["run"].nunique())
    for column, pick in (("min_ms", "min"), ("max_ms", "max")):  # the samples' range over every run
        if column in table.columns:
            out[column] = groups[column].agg(pick)
    for m in (m for m in metrics if m in table.columns):
        values = groups[m]
        out = out.assign(**{m: values.median(), f"run_min_{m}": values.min(), f"run_max_{m}": values.max()})
    return out.reset_index().drop(columns="run")


@dataclass
class Point:
    name: str
    value: float  # median over runs
    spread: float  # half the range of the runs, in the comparison's unit (% of value, or points)
    runs: int


def point(table, metric, name=None, **where):
    """The Point of `table` whose columns equal `where`, or None when the table has no such row."""
    rows = table
    for column, wanted in where.items():
        rows = rows[(rows[column] == wanted).fillna(False).astype(bool)]
    if rows.empty:
        return None
    row = points(rows, (metric,)).iloc[0]
    half = (row[f"run_max_{metric}"] - row[f"run_min_{metric}"]) / 2
    spread = half if metric.startswith("pct") else 100 * half / row[metric]
    return Point(name, float(row[metric]), float(spread), int(row["runs"]))


@dataclass
class Comparison:
    a: Point
    b: Point
    metric: str
    n: object = None  # the N both points share, named in the sentence

    @property
    def margin(self):
        """How far a is ahead of b (negative: behind): points for pct metrics, else % of the one behind."""
        a, b = self.a.value, self.b.value
        if self.metric.startswith("pct"):
            return a - b
        ratio = b / a if self.metric.endswith(("_ms", "_ns")) else a / b
        return 100 * (ratio - 1) if ratio >= 1 else -100 * (1 / ratio - 1)

    noise = property(lambda self: self.a.spread + self.b.spread)
    runs = property(lambda self: min(self.a.runs, self.b.runs))
    holds = property(lambda self: self.runs >= MIN_RUNS and self.margin > self.noise)  # a ahead beyond the spread
    within_noise = property(lambda self: self.runs >= MIN_RUNS and abs(self.margin) <= self.noise)

    def __str__(self):
        a, b = (self.a, self.b) if self.margin >= 0 else (self.b, self.a)
        points_ = self.metric.startswith("pct")
        size = abs(self.margin)
        by = _("{x:.1f} points").format(x=size) if points_ else \
            (f"{1 + size / 100:.2f}×" if size >= 100 else percent(size))
        noise = _("{x:.1f} points").format(x=self.noise) if points_ else percent(self.noise)
        at = _("At N = {n}, ").format(n=self.n) if self.n is not None else ""
        if self.runs < MIN_RUNS:
            text = _("{a} measured {by} ahead of {b} in {runs} run(s): fewer than 3 runs give no spread, so the "
                     "order is not claimed.")
        elif self.within_noise:
            text = _("{a} and {b} are within noise of each other ({by} apart, ± {noise}, {runs} runs).")
        else:
            text = _(BEYOND[points_])
        return (at + text.format(a=a.name, b=b.name, by=by, noise=noise, runs=self.runs)).replace("） ", "）")  # no space after ）


def percent(x):  # to the precision that matters: 74 %, 3.2 %
    return f"{x:.0f} %" if x >= 10 else f"{x:.1f} %"


def compare(table, a, b, metric="median_ms", names=(None, None)):
    """Comparison of points a and b (dicts of column values), str() its sentence; a missing point: a sentence."""
    names = [n or registry.label(w.get("kernel", "?"), w.get("tile"), by_name=True) for w, n in zip((a, b), names)]
    found = [point(table, metric, name, **where) for where, name in zip((a, b), names)]
    missing = [name for name, p in zip(names, found) if p is None]
    if missing:
        return _("{names}: not in the committed data").format(names=", ".join(missing))
    n = a.get("N") if a.get("N") == b.get("N") else None
    return Comparison(*found, metric, None if n is None else int(n))


def factor(table, slow, fast, metric="median_ms"):
    """slow's median over fast's, e.g. naive / tiled time; NaN when either point is missing."""
    found = [point(table, metric, **where) for where in (slow, fast)]
    return np.nan if None in found else found[0].value / found[1].value


def fastest(table, kernel, n):
    """The tile (a naive kernel's: block shape) of `kernel`'s least median time at N = n."""
    at = points(table).query("kernel == @kernel and N == @n")
    return int(at.loc[at["median_ms"].idxmin(), "tile"])


def times(x):  # a factor as a table shows it, "1.53×", or "-" for a point not measured
    return "-" if pd.isna(x) else f"{x:.2f}×"


def outlying(value, others, tolerance=0.01):
    """Whether `value` lies beyond the range of `others` (other runs) by more than `tolerance`: a row to flag."""
    low, high = min(others), max(others)
    return value < low * (1 - tolerance) or value > high * (1 + tolerance)
