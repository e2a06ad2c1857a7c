"""The articles' other effects, timed on the lesson's kernels and variants derived from their source:
coalescing (x and y swapped, on naive and on tiled), shared-memory bank conflicts (B's tile stored
transposed, then padded to T + 1 columns) and the cost of writing C back (a variant that never stores)."""
import numpy as np

from tiledlab.core.kernels import naive, tiled
from tiledlab.core.launch import prepare
from tiledlab.core.operands import operands
from tiledlab.counting.variants import padded, swapped_xy, transposed, without_write_back
from tiledlab.experiments.bench import rel_err
from tiledlab.experiments.timing import time_launch


def variants():
    """label → kernel: the two lesson kernels and the variants the experiments time and profile."""
    conflict = transposed(tiled, "sB")
    return {"naive": naive, "naive swapped xy": swapped_xy(naive), "tiled": tiled,
            "tiled swapped xy": swapped_xy(tiled), "tiled sB transposed": conflict,
            "tiled sB transposed padded": padded(conflict, "sB"), "tiled without write-back": without_write_back(tiled)}


def run(ns=(2048, 4096), tiles=(8, 16, 32), labels=None, warmup=2, repeats=10, seed=0):
    """One row per (variant, N, T): times, TFLOP/s, and the error of the product against float64."""
    rows = []
    for n in ns:
        A, B = operands(n, n, n, seed)
        ref = A.astype(np.float64) @ B.astype(np.float64) if n <= 2048 else None
        for T in tiles:
            for label, kernel in variants().items():
                if labels and label not in labels:
                    continue
                launch = prepare(kernel, A, B, T)
                t = time_launch(launch, warmup, repeats)
                C = launch.poison()().result()
                if label == "tiled without write-back":
                    err = "C never written" if np.isnan(C).all() else "C WRITTEN"
                else:
                    err = rel_err(C, ref) if ref is not None else ""
                rows.append({"kernel": label, "N": n, "tile": T, "median_ms": t.median_ms, "min_ms": t.min_ms,
                             "max_ms": t.max_ms, "tflops": t.tflops(n, n, n), "rel_err": err})
    return rows
