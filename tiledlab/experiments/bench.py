"""Time naive, tiled (and cuBLAS through CuPy) over sizes and tile widths: one row per (kernel, N, tile), all by
timing.back_to_back. With `fair`, also the fair pair (core.fair: unsigned indices), so tiling's speed-up can be
read with index arithmetic alike; kernels named in `kernels` run at their own constants (tile "")."""
import sys

import numpy as np
from tqdm import tqdm

from ..core.launch import prepare
from ..core.operands import operands
from ..core.registry import family, kind
from ..data import stamp
from .cublas import cupy_version, sgemm
from .timing import back_to_back, per_launch_ms

FIELDS = ["run", "kernel", "N", "tile", "median_ms", "min_ms", "max_ms", "repeats", "tflops", "gbps", "rel_err",
          "clock", "backend", "device", "compute_capability", "numba", "numba_cuda", "numpy", "cupy", "date",
          "launches_per_sample", "timing"]
LESSON = tuple(family("lesson"))  # (naive, tiled), timed at every N and tile width by the sweep itself
FAIR = tuple(family("fair"))  # and these with `fair`: never again by name
NAIVE_TILE = 16  # the naive kernels' block shape unless asked for others: the fair one's fastest


def progress_bar(total, enabled=True, desc="bench"):
    """A tqdm bar on stderr (stdout stays the results'), or one that draws nothing."""
    return tqdm(total=total, desc=desc, disable=not enabled, file=sys.stderr, dynamic_ncols=True)


def rel_err(C, ref):
    """‖C − ref‖ / ‖ref‖, in float64."""
    return float(np.linalg.norm(C.astype(np.float64) - ref) / np.linalg.norm(ref))


def swept(fair):
    """The (naive, tiled) pairs a sweep times at every N and tile width (tools' profile launches the same)."""
    return [LESSON, FAIR] if fair else [LESSON]


def _named(kernels, fair):
    paired = {k for pair in swept(fair) for k in pair}
    return [k for k in dict.fromkeys(kernels) if k not in paired]


def simulator_seconds(ns, tiles, warmup, repeats, kernels=(), fair=False, naive_tiles=(NAIVE_TILE,)):
    """A rough forecast of a sweep's seconds on the simulator, from one timed 16×16 launch and N³ growth."""
    A = np.ones((16, 16), np.float32)
    launch = prepare("naive", A, A, 16)()  # once untimed: the first launch also sets the simulator up
    per_n3 = per_launch_ms(launch) / 1e3 / 16**3
    per_n = len(swept(fair)) * (len(naive_tiles) + len(tiles)) + len(_named(kernels, fair))
    return per_n3 * (warmup + repeats) * sum(n**3 for n in ns) * per_n


def jobs(ns, tiles, kernels=(), cublas=False, fair=False, naive_tiles=(NAIVE_TILE,)):
    """(kernel, N, tile) in the order they run: at each N the pairs of `swept`, the kernels by name, then cuBLAS."""
    sweep = [(k, n, t) for n in ns for naive, tiled in swept(fair)
             for k, t in [(naive, t) for t in naive_tiles] + [(tiled, t) for t in tiles]]
    return sweep + [(k, n, "") for n in ns for k in _named(kernels, fair)] + [("cublas", n, 0) for n in ns if cublas]


def run(ns, tiles, warmup=2, repeats=10, cublas=True, progress=True, kernels=(), fair=False,
        naive_tiles=(NAIVE_TILE,), run=1):
    """One row, numbered `run`, per job of `jobs` (cuBLAS when CuPy is there), timed back to back."""
    provenance = {**stamp(), "cupy": cupy_version() if cublas else ""}
    todo = jobs(ns, tiles, kernels, cublas=bool(provenance["cupy"]), fair=fair, naive_tiles=naive_tiles)
    rows, inputs = [], {}
    with progress_bar(len(todo), progress) as bar:
        for kernel, n, tile in todo:
            bar.set_postfix_str(f"{kernel} N={n} T={tile}")
            if n not in inputs:
                A, B = operands(n, n, n)
                inputs[n] = A, B, (A.astype(np.float64) @ B.astype(np.float64) if n <= 4096 else None)
            A, B, ref = inputs[n]
            launch = sgemm(A, B) if kind(kernel) == "peer" else prepare(kernel, A, B, tile or None)
            timing, C = back_to_back(launch, warmup, repeats), launch.result()  # one method for all, cuBLAS too
            rows.append({"run": run, "kernel": kernel, "N": n, "tile": tile, "median_ms": timing.median_ms,
                         "min_ms": timing.min_ms, "max_ms": timing.max_ms, "repeats": repeats,
                         "tflops": timing.tflops(n, n, n), "gbps": timing.gbps(n, n, n),
                         "rel_err": rel_err(C, ref) if ref is not None else "", "clock": timing.clock,
                         **provenance, "launches_per_sample": timing.launches_per_sample, "timing": timing.method})
            bar.update()
        bar.set_postfix_str("done")
    return rows
