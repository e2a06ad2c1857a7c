"""Small helpers that notebooks call: which backend is running, a kernel's source, text tables."""
import inspect

import matplotlib.pyplot as plt

from .backend import SIMULATOR, describe
from .bench import sweep
from .plots import bench_plot
from .reference import load, provenance
from .source import py_func


def banner():
    """Say plainly which backend runs this notebook, and what that means for its numbers."""
    info = describe()
    if info["backend"] == "simulator":
        bench = load("h200/bench.csv")
        print("Backend: CUDA simulator (no GPU in use). Kernels run as Python threads: counts and results\n"
              "are exact, but times measure Python, not a GPU. GPU timings below are committed data,\n"
              f"{provenance(bench)}.")
    else:
        print(f"Backend: GPU {info['device']} (compute capability {info['compute_capability']}), "
              f"numba {info['numba']}, numba-cuda {info['numba_cuda']}")


def show(kernel):
    """The kernel's own source, highlighted: exactly the code that is counted, timed and tested."""
    from IPython.display import Code
    return Code(inspect.getsource(py_func(kernel)), language="python")


def table(header, rows):
    """Print rows as an aligned text table (plain text, so notebook checks can compare it)."""
    cells = [[str(h) for h in header]] + [[f"{v:,}" if isinstance(v, int) else str(v) for v in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    for k, row in enumerate(cells):
        print("  ".join(c.rjust(w) for c, w in zip(row, widths)))
        if k == 0:
            print("  ".join("-" * w for w in widths))


def timings(gpu_ns=(512, 1024, 2048, 4096), tiles=(8, 16, 32), sim_ns=(16, 32), sim_tiles=(4, 8)):
    """Time naive and tiled live on this backend (small sizes on the simulator), and plot the live
    times beside the committed H200 sweep. Returns (live rows, committed rows)."""
    ns, ts = (sim_ns, sim_tiles) if SIMULATOR else (gpu_ns, tiles)
    live = sweep(ns, ts, warmup=1, repeats=3 if SIMULATOR else 10, progress=False)
    ref = load("h200/bench.csv")
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    bench_plot(live, f"live: {live[0]['device']} ({live[0]['clock']})", axes[0], metric="median_ms")
    bench_plot(ref, f"committed: {ref[0]['device']}, {ref[0]['date']}", axes[1], metric="tflops")
    fig.tight_layout()
    plt.show()
    return live, ref
