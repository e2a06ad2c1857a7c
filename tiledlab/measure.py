"""`python -m tiledlab measure --out DIR`: the GPU-only reference measurements, one CSV each.

latency.csv (dependent-load latency per memory level), races.csv (tiled kernel without each barrier),
racecheck.csv (compute-sanitizer's race report on the same kernels, when the tool is present),
coalescing.csv (naive kernel with threadIdx.x on columns vs rows), peaks.csv (roofline ceilings).
Every row carries the device, versions and date.
"""
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
from numba import cuda

from . import latency, peaks, races
from .backend import SIMULATOR
from .kernels import naive
from .launch import launch_config, resolve
from .reference import stamp, write_rows
from .timing import time_launch
from .variants import swapped_xy


def coalescing(ns=(2048, 4096), tiles=(16, 32), repeats=10):
    rows = []
    for n in ns:
        rng = np.random.default_rng(n)
        dA, dB = (cuda.to_device(rng.standard_normal((n, n), dtype=np.float32)) for _ in range(2))
        dC = cuda.device_array((n, n), np.float32)
        for T in tiles:
            config = launch_config(n, n, T)
            for mapping, kernel in (("threadIdx.x -> column", resolve(naive, T)),
                                    ("threadIdx.x -> row", swapped_xy(naive, T))):
                t = time_launch(lambda: kernel[config](dA, dB, dC), 2, repeats)
                rows.append({"mapping": mapping, "N": n, "tile": T, "median_ms": t.median_ms,
                             "tflops": t.tflops(n, n, n)})
    return rows


_RACECHECK_TARGET = """
import numpy as np, tiledlab
from numba import cuda
from tiledlab.variants import without_barrier
from tiledlab.launch import launch_config
n, T = 64, 16
A = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
k = {kernel}
k[launch_config(n, n, T)](cuda.to_device(A), cuda.to_device(A), cuda.device_array((n, n), np.float32))
cuda.synchronize()
"""


def racecheck():
    """compute-sanitizer --tool racecheck on the correct and the two broken tiled kernels (N=64, T=16)."""
    tool = shutil.which("compute-sanitizer")
    if tool is None:
        return []
    rows = []
    for name, expr in (("tiled (both barriers)", "tiledlab.specialize(tiledlab.tiled, T)"),
                       ("without first barrier", "without_barrier(tiledlab.tiled, 0, T)"),
                       ("without second barrier", "without_barrier(tiledlab.tiled, 1, T)")):
        code = _RACECHECK_TARGET.format(kernel=expr)
        out = subprocess.run([tool, "--tool", "racecheck", sys.executable, "-c", code],
                             capture_output=True, text=True, timeout=300)
        text = out.stdout + out.stderr
        m = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", text)
        rows.append({"kernel": name, "N": 64, "tile": 16,
                     "hazards": int(m.group(1)) if m else 0, "errors": int(m.group(2)) if m else 0,
                     "warnings": int(m.group(3)) if m else 0,
                     "summary": m.group(0) if m else (text.strip().splitlines() or ["no output"])[-1]})
    return rows


def main(args):
    if SIMULATOR:
        print("measure needs a real GPU: the simulator has no caches, warps or clocks to measure")
        return 1
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    provenance = stamp()
    quick = args.quick
    jobs = {"latency": lambda: latency.measure(steps=2000 if quick else 20000),
            "races": lambda: races.run(n=256 if quick else 1024, runs=5 if quick else 200),
            "coalescing": lambda: coalescing(ns=(512,) if quick else (2048, 4096)),
            "peaks": peaks.measure,
            "racecheck": racecheck}
    for name, job in jobs.items():
        if args.only and name not in args.only:
            continue
        rows = job()
        if rows:
            write_rows([{**r, **provenance} for r in rows], out / f"{name}.csv")
            print(f"{name}:")
            for r in rows:
                print("  " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()))
        else:
            print(f"{name}: skipped (tool not found)")
    return 0
