"""Coalescing: the same kernel with threadIdx.x walking columns (as written) and rows (x and y swapped)."""
import numpy as np

from ..core.kernels import naive
from ..core.launch import prepare
from ..counting.variants import swapped_xy
from .timing import time_launch


def run(ns=(2048, 4096), tiles=(16, 32), kernels=(naive,), repeats=10):
    rows = []
    for n in ns:
        rng = np.random.default_rng(n)
        A, B = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
        for kernel in kernels:
            for T in tiles:
                for mapping, variant in (("threadIdx.x -> column", kernel), ("threadIdx.x -> row", swapped_xy(kernel))):
                    t = time_launch(prepare(variant, A, B, T), 2, repeats)
                    rows.append({"kernel": kernel.__name__, "mapping": mapping, "N": n, "tile": T,
                                 "median_ms": t.median_ms, "tflops": t.tflops(n, n, n)})
    return rows
