"""Time naive, tiled (and cuBLAS through CuPy) over sizes and tile widths: one row per (kernel, N, tile).
Kernels of tiledlab.core.registry can be added by name; they run at their own constants (tile "")."""
import sys
import time

import numpy as np
from tqdm import tqdm

from ..core.launch import prepare
from ..core.operands import operands
from ..data import stamp
from .cublas import cupy_version, timed_sgemm
from .timing import time_launch

FIELDS = ["kernel", "N", "tile", "median_ms", "min_ms", "max_ms", "repeats", "tflops", "gbps", "rel_err",
          "clock", "backend", "device", "compute_capability", "numba", "numba_cuda", "numpy", "cupy", "date"]
LESSON = ("naive", "tiled")  # timed at every N by the sweep itself, so never again by name


def progress_bar(total, enabled=True, desc="bench"):
    """A tqdm bar on stderr (stdout stays the results'), or one that draws nothing."""
    return tqdm(total=total, desc=desc, disable=not enabled, file=sys.stderr, dynamic_ncols=True)


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
    named = [k for k in dict.fromkeys(kernels) if k not in LESSON]
    return per_n3 * (warmup + repeats) * sum(n**3 for n in ns) * (1 + len(tiles) + len(named))


def jobs(ns, tiles, kernels=(), cublas=False):
    """(kernel, N, tile) in the order they run: naive and tiled at each N, then the kernels by name
    (each once, the lesson's two left out: the sweep times them already), then cuBLAS."""
    named = [k for k in dict.fromkeys(kernels) if k not in LESSON]
    return [(k, n, t) for n in ns for k, t in [("naive", NAIVE_TILE)] + [("tiled", t) for t in tiles]] + \
           [(k, n, "") for n in ns for k in named] + ([("cublas", n, 0) for n in ns] if cublas else [])


def run(ns, tiles, warmup=2, repeats=10, cublas=True, progress=True, kernels=()):
    """One row per (kernel, N, tile): naive once per N, tiled at each tile width, each of `kernels` (names
    of the registry, at their own constants), cuBLAS when CuPy is there."""
    provenance = {**stamp(), "cupy": cupy_version() if cublas else ""}
    todo = jobs(ns, tiles, kernels, cublas=bool(provenance["cupy"]))
    rows, inputs = [], {}
    with progress_bar(len(todo), progress) as bar:
        for kernel, n, tile in todo:
            bar.set_postfix_str(f"{kernel} N={n} T={tile}")
            if n not in inputs:
                A, B = operands(n, n, n)
                inputs[n] = A, B, (A.astype(np.float64) @ B.astype(np.float64) if n <= 4096 else None)
            A, B, ref = inputs[n]
            timing, C = time_one(kernel, A, B, tile, warmup, repeats, by_name=tile == "")
            rows.append({"kernel": kernel, "N": n, "tile": tile, "median_ms": timing.median_ms,
                         "min_ms": timing.min_ms, "max_ms": timing.max_ms, "repeats": repeats,
                         "tflops": timing.tflops(n, n, n), "gbps": timing.gbps(n, n, n),
                         "rel_err": rel_err(C, ref) if ref is not None else "",
                         "clock": timing.clock, **provenance})
            bar.update()
        bar.set_postfix_str("done")
    return rows


def time_one(kernel, A, B, tile, warmup, repeats, by_name=False):
    """(timing, C) of one kernel of the sweep; "cublas" is cuBLAS's SGEMM."""
    if kernel == "cublas":
        return timed_sgemm(A, B, lambda launch: time_launch(launch, warmup, repeats))
    launch = prepare(kernel, A, B, tile or None)
    return time_launch(launch, warmup, repeats, MIN_SAMPLE_MS if by_name else 0), launch.result()
