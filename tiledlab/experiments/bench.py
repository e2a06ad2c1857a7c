"""Time naive, tiled (and cuBLAS through CuPy) over sizes and tile widths: one row per (kernel, N, tile).
Kernels of tiledlab.core.registry can be added by name; they run at their own constants (tile "")."""
import sys
import time

import numpy as np

from ..backend import SIMULATOR
from ..core.launch import prepare
from ..data import stamp
from .timing import time_launch

FIELDS = ["kernel", "N", "tile", "median_ms", "min_ms", "max_ms", "repeats", "tflops", "gbps", "rel_err",
          "clock", "backend", "device", "compute_capability", "numba", "numba_cuda", "numpy", "cupy", "date"]


def _cupy():
    try:
        import cupy
        return cupy
    except Exception:  # absent, or present without a usable GPU
        return None


def _progress(done, total, label):
    bar = "#" * (30 * done // total)
    sys.stderr.write(f"\r[{bar:<30}] {done}/{total} {label:<28}")
    sys.stderr.write("\n" if done == total else "")
    sys.stderr.flush()


def rel_err(C, ref):
    """‖C − ref‖ / ‖ref‖, in float64."""
    return float(np.linalg.norm(C.astype(np.float64) - ref) / np.linalg.norm(ref))


NAIVE_TILE = 16  # the naive kernel runs in 16×16 blocks: its speed barely depends on the block shape
MIN_SAMPLE_MS = 2.0  # kernels by name are fast: time enough launches per sample that launch overhead hides


def simulator_seconds(ns, tiles, warmup, repeats, kernels=()):
    """A rough forecast of a sweep's length on the simulator, scaled from one timed 16×16 launch:
    its Python threads do work that grows like N³ (a kernel by name counts as one more tile width)."""
    A = np.ones((16, 16), np.float32)
    launch = prepare("naive", A, A, 16)()  # once untimed: the first launch also sets the simulator up
    start = time.perf_counter()
    launch()
    per_n3 = (time.perf_counter() - start) / 16**3
    return per_n3 * (warmup + repeats) * sum(n**3 for n in ns) * (1 + len(tiles) + len(kernels))


def run(ns, tiles, warmup=2, repeats=10, cublas=True, progress=True, kernels=()):
    """One row per (kernel, N, tile): naive once per N, tiled at each tile width, each of `kernels` (names
    of the registry, at their own constants), cuBLAS when CuPy is there."""
    provenance = stamp()
    cupy = _cupy() if cublas and not SIMULATOR else None
    provenance["cupy"] = cupy.__version__ if cupy else ""
    jobs = [(k, n, t) for n in ns for k, t in [("naive", NAIVE_TILE)] + [("tiled", t) for t in tiles]] + \
           [(k, n, "") for n in ns for k in kernels] + ([("cublas", n, 0) for n in ns] if cupy else [])
    rows, rng, inputs = [], np.random.default_rng(0), {}
    for done, (kernel, n, tile) in enumerate(jobs):
        if progress:
            _progress(done, len(jobs), f"{kernel} N={n} T={tile}")
        if n not in inputs:
            A, B = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
            inputs[n] = A, B, (A.astype(np.float64) @ B.astype(np.float64) if n <= 4096 else None)
        A, B, ref = inputs[n]
        if kernel == "cublas":
            cA, cB = cupy.asarray(A), cupy.asarray(B)
            cC = cupy.full((n, n), cupy.nan, dtype=cupy.float32)
            timing = time_launch(lambda: cupy.matmul(cA, cB, out=cC), warmup, repeats)
            C = cC.get()
        else:
            launch = prepare(kernel, A, B, tile or None)
            timing = time_launch(launch, warmup, repeats, MIN_SAMPLE_MS if kernel in kernels else 0)
            C = launch.result()
        rows.append({"kernel": kernel, "N": n, "tile": tile, "median_ms": timing.median_ms,
                     "min_ms": timing.min_ms, "max_ms": timing.max_ms, "repeats": repeats,
                     "tflops": timing.tflops(n, n, n), "gbps": timing.gbps(n, n, n),
                     "rel_err": rel_err(C, ref) if ref is not None else "",
                     "clock": timing.clock, **provenance})
    if progress:
        _progress(len(jobs), len(jobs), "done")
    return rows
