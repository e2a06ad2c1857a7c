"""What happens when a barrier is missing: run the broken kernel many times and compare each result."""
import numpy as np

from ..core.kernels import tiled
from ..core.launch import matmul, prepare
from ..core.operands import operands
from ..counting.variants import without_barrier


def run(n=1024, T=32, runs=100, seed=0):
    """Rows, one per barrier removed: how many of `runs` launches differed from the correct kernel
    (which does the same arithmetic in the same order, so a race-free run matches it bit for bit),
    and how badly."""
    A, B = operands(n, n, n, seed)
    good = matmul(A, B, tiled, T)
    rows = []
    for which in (0, 1):
        launch = prepare(without_barrier(tiled, which), A, B, T)
        wrong_runs, wrong_elems, worst = 0, [], 0.0
        for _ in range(runs):
            C = launch.poison()().result()
            bad = ~(C == good)
            if bad.any():
                wrong_runs += 1
                wrong_elems.append(bad.mean())
                with np.errstate(invalid="ignore", over="ignore"):
                    worst = max(worst, float(np.nanmax(np.abs(C - good))) if np.isfinite(C).any() else np.inf)
        rows.append({"barrier_removed": ["first", "second"][which], "N": n, "tile": T, "runs": runs,
                     "wrong_runs": wrong_runs,
                     "mean_wrong_fraction": float(np.mean(wrong_elems)) if wrong_elems else 0.0,
                     "max_abs_error": worst})
    return rows
