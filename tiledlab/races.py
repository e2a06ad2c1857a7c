"""What happens when a barrier is missing: run the broken kernel many times and compare each result."""
import numpy as np
from numba import cuda

from .launch import launch_config, resolve
from .variants import without_barrier
from .kernels import tiled


def run(n=1024, T=32, runs=100, seed=0):
    """Rows, one per barrier removed: how many of `runs` launches differed from the correct kernel
    (which does the same arithmetic in the same order, so a race-free run matches it bit for bit),
    and how badly."""
    rng = np.random.default_rng(seed)
    A, B = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    dA, dB, dC = cuda.to_device(A), cuda.to_device(B), cuda.device_array((n, n), np.float32)
    config = launch_config(n, n, T)
    resolve("tiled", T)[config](dA, dB, dC)
    good = dC.copy_to_host()
    rows = []
    for which in (0, 1):
        broken = without_barrier(tiled, which, T)
        wrong_runs, wrong_elems, worst = 0, [], 0.0
        for _ in range(runs):
            dC = cuda.to_device(np.full((n, n), np.nan, dtype=np.float32))
            broken[config](dA, dB, dC)
            C = dC.copy_to_host()
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
