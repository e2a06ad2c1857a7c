"""What the notebooks call: `setup()` to start a lesson, `show` for a kernel's source, `table` for
aligned text, `timings()` for the live-and-committed timing figure, and `plots` for the pictures.
The names a lesson needs from other wings are re-exported here, so one import line serves:

    from tiledlab.notebook import setup, show, table, timings, plots, formulas, data, count_loads
"""
import math
import numbers

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .. import data
from ..backend import SIMULATOR, describe
from ..core import formulas
from ..core.launch import resolve
from ..counting import count_loads
from ..experiments import bench
from ..experiments import device as device_properties
from . import plots

__all__ = ["setup", "banner", "show", "table", "timings", "device", "plots", "formulas", "data", "count_loads"]


def setup(seed=0):
    """Start a lesson: say which backend runs it, set figure defaults that read well when projected,
    and return `rand(*shape)`, which draws float32 standard-normal arrays from a fixed seed."""
    banner()
    plots.style()
    rng = np.random.default_rng(seed)

    def rand(*shape):
        return rng.standard_normal(shape, dtype=np.float32)
    return rand


def banner():
    """Say plainly which backend runs this notebook, and what that means for its numbers."""
    info = describe()
    if SIMULATOR:
        print("Backend: CUDA simulator (no GPU in use). Kernels run as Python threads: counts and results\n"
              "are exact, but times measure Python, not a GPU. GPU timings below are committed data,\n"
              f"{data.provenance(data.load('h200/bench.csv'))}.")
    else:
        print(f"Backend: GPU {info['device']} (compute capability {info['compute_capability']}), "
              f"numba {info['numba']}, numba-cuda {info['numba_cuda']}")


def device():
    """The card's properties (SMs, clocks, L2, shared memory, ...): read live from the driver on a GPU,
    the committed H200 row on the simulator. `source` says which."""
    if SIMULATOR:
        committed = data.load("h200/device.csv")
        return {**committed.iloc[0].to_dict(), "source": f"committed data, {data.provenance(committed)}"}
    return {**device_properties.properties(), **describe(), "source": "read live from the driver"}


def show(kernel, **constants):
    """The kernel's own source, highlighted: exactly the code that is counted, timed and tested
    (generated kernels: the code written for `constants`, their defaults unless given)."""
    from IPython.display import Code
    return Code(resolve(kernel).source(constants), language="python")


def table(frame, rows=None, columns=None, formats=None):
    """Print a DataFrame, or a header and its rows, as an aligned text table (plain text, so notebook
    checks can compare it): whole numbers with thousands separators, a missing value as "-".
    For a DataFrame, `columns` picks and orders its columns ({column: heading} also renames them) and
    `formats` gives a column's format, e.g. {"value": "{:.2f}"}."""
    if isinstance(frame, pd.DataFrame):
        frame = frame if columns is None else frame[list(columns)]
        for column, spec in (formats or {}).items():
            frame = frame.assign(**{column: frame[column].map(spec.format, na_action="ignore")})
        header = [columns[c] if isinstance(columns, dict) else c for c in frame.columns]
        rows = frame.itertuples(index=False)
    else:
        header = frame
    cells = [[str(h) for h in header]] + [[_cell(v) for v in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    for k, row in enumerate(cells):
        print("  ".join(c.rjust(w) for c, w in zip(row, widths)))
        if k == 0:
            print("  ".join("-" * w for w in widths))


def _cell(value):
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        return f"{value:,}"
    if value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return str(value)


def timings(gpu_ns=(1024, 2048, 4096), tiles=(8, 16, 32), sim_ns=(8, 16), sim_tiles=(4, 8)):
    """Time naive and tiled live on this backend (small sizes on the simulator) and plot them beside
    the committed H200 sweep: TFLOP/s on one scale on a GPU; on the simulator the live panel shows
    Python's milliseconds, which say nothing of GPU speed. Returns (live, committed): two DataFrames."""
    ns, ts = (sim_ns, sim_tiles) if SIMULATOR else (gpu_ns, tiles)
    live = pd.DataFrame(bench.run(ns, ts, warmup=0 if SIMULATOR else 1, repeats=2 if SIMULATOR else 10,
                                  progress=False))
    ref = data.load("h200/bench.csv")
    ref = ref[ref["kernel"].isin(["naive", "tiled", "cublas"])]  # the lesson's pair (bench.csv also has the fair pair)
    first = ref.iloc[0]
    fig, axes = plt.subplots(1, 2, figsize=(14, 4.8), sharey=not SIMULATOR, layout="constrained")
    if SIMULATOR:
        plots.bench_plot(live, "live, CUDA simulator: Python's time, not a GPU's", axes[0], "median_ms", legend=False)
    else:
        plots.bench_plot(live, f"live: {live['device'][0]}, N = {ns[0]}…{ns[-1]}", axes[0], legend=False)
    plots.bench_plot(ref, f"committed: {first['device']} ({first['date']}), N = {ref['N'].min()}…{ref['N'].max()}",
                     axes[1], legend=False)
    plots.shared_legend(fig, axes)
    plt.show()
    return live, ref
