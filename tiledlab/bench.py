"""Sweep sizes and tile widths, time naive, tiled (and cuBLAS through CuPy), write bench.csv and bench.png."""
import sys

import numpy as np
from numba import cuda

from .launch import launch_config, resolve
from .reference import stamp as provenance
from .reference import write_rows
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


def _rel_err(C, ref):
    return float(np.linalg.norm(C.astype(np.float64) - ref) / np.linalg.norm(ref))


def sweep(ns, tiles, warmup=2, repeats=10, cublas=True, progress=True):
    """One row per (kernel, N, tile). Naive runs with T×T blocks too, so only tiling differs."""
    stamp = provenance()
    cupy = _cupy() if cublas and stamp["backend"] == "gpu" else None
    stamp["cupy"] = cupy.__version__ if cupy else ""
    jobs = [(k, n, t) for n in ns for k in ("naive", "tiled") for t in tiles] + \
           ([("cublas", n, 0) for n in ns] if cupy else [])
    rows, rng = [], np.random.default_rng(0)
    inputs = {}
    for done, (kernel, n, tile) in enumerate(jobs):
        if progress:
            _progress(done, len(jobs), f"{kernel} N={n} T={tile}")
        if n not in inputs:
            A, B = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
            ref = A.astype(np.float64) @ B.astype(np.float64) if n <= 4096 else None
            inputs[n] = (cuda.to_device(A), cuda.to_device(B), cuda.device_array((n, n), np.float32), ref)
        dA, dB, dC, ref = inputs[n]
        if kernel == "cublas":
            cA, cB, cC = cupy.asarray(dA), cupy.asarray(dB), cupy.asarray(dC)
            timing = time_launch(lambda: cupy.matmul(cA, cB, out=cC), warmup, repeats)
        else:
            compiled = resolve(kernel, tile)
            config = launch_config(n, n, tile)
            timing = time_launch(lambda: compiled[config](dA, dB, dC), warmup, repeats)
        C = dC.copy_to_host()
        rows.append({"kernel": kernel, "N": n, "tile": tile, "median_ms": timing.median_ms,
                     "min_ms": timing.min_ms, "max_ms": timing.max_ms, "repeats": repeats,
                     "tflops": timing.tflops(n, n, n), "gbps": timing.gbps(n, n, n),
                     "rel_err": _rel_err(C, ref) if ref is not None else "", "clock": timing.clock, **stamp})
    if progress:
        _progress(len(jobs), len(jobs), "done")
    return rows


def write_csv(rows, path):
    write_rows(rows, path, FIELDS)


def table(rows):
    """Rows as aligned text."""
    lines = [f"{'kernel':<7} {'N':>6} {'T':>3} {'median ms':>11} {'TFLOP/s':>9} {'GB/s':>8}  clock"]
    for r in rows:
        lines.append(f"{r['kernel']:<7} {r['N']:>6} {r['tile'] or '':>3} {r['median_ms']:>11.3f} "
                     f"{r['tflops']:>9.3f} {r['gbps']:>8.1f}  {r['clock']}")
    return "\n".join(lines)
