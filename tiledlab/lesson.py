"""Small helpers that notebooks call: which backend is running, a kernel's source, text tables."""
import inspect

from .backend import describe
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
