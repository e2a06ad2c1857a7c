"""`python -m tools ladder`: the ladder of register tiling on a GPU, in one run, against cuBLAS measured in the same run.

`run(ns)` compiles the naive kernel, the tiled kernel at T = 32, every rung of
tiledlab.core.registry.LADDER and the search (its family "search"), checks each on an odd shape, and reads what the
compiler made of it: registers and local memory per thread, shared memory per block and, from the
SASS, the instructions of its main loop (`sass`). Then at every N it times each of them and cuBLAS
(through CuPy) with CUDA events. A sample brackets enough back-to-back launches to last 2 ms, so the
host's launch overhead does not count for the fast kernels. One row per (kernel, N): TFLOP/s, % of
cuBLAS, the error of C against float64 (N ≤ 4096) or cuBLAS, the formulas' global loads and shared
reads per FMA, and the compiler's figures. `sass_rows(rows)` gives one row per kernel.
"""
import sys
import time

import numpy as np

from tiledlab.core.launch import prepare, resolve
from tiledlab.core.operands import operands
from tiledlab.core.registry import LADDER, family, predicted
from tiledlab.experiments import Unavailable, require_gpu
from tiledlab.experiments.bench import progress_bar, rel_err
from tiledlab.experiments.cublas import timed_sgemm
from tiledlab.experiments.timing import MIN_SAMPLE_MS, time_launch

from . import triton_peer
from .sass import SASS_FIELDS, kernel_facts

CONSTANTS = ("T", "BM", "BN", "BK", "TM", "TN")
FIELDS = ["kernel", "group", "N", "config", *CONSTANTS, "threads", "launch_bounds", "median_ms", "min_ms", "max_ms",
          "repeats", "launches_per_sample", "tflops", "pct_cublas", "rel_err", "reference", "global_loads_per_fma",
          "shared_reads_per_fma", "compile_s", "odd_shape_rel_err", *SASS_FIELDS[1:], "dynamic_bytes", "idea", "clock"]
ODD_SHAPE = (200, 173, 301)  # every kernel is checked on a shape that no tile divides, before it is timed
FLOAT64_UP_TO = 4096  # above this, C is compared with cuBLAS's (a float64 product would take too long)


def jobs(kernels=None, search=True):
    """[(label, kernel name, constants, group)] in the order they run: the lesson's kernels, the
    register-tiled rungs, the search; or only `kernels` (names of the registry)."""
    rungs = [name for name in LADDER if name not in ("naive", "tiled")]
    found = [("naive", "naive", {"T": 16}, "lesson"), ("tiled", "tiled", {"T": 32}, "lesson")] + \
            [(name, name, {}, "ladder") for name in rungs] + [(name, name, {}, "search") for name in family("search") if search] + \
            [(name, name, {}, "async") for name in family("async") if search] + \
            [(name, name, {}, "dynamic") for name in family("dynamic") if search]
    if kernels:
        for name in kernels:
            resolve(name)  # a clear ValueError for a name the registry does not know
        found = [j for j in found if j[0] in kernels] + [(k, k, {}, "chosen") for k in kernels
                                                          if k not in {j[0] for j in found}]
    return found


def _config(launch):
    c = launch.constants
    if "T" in c:
        return f"T={c['T']}"
    return f"{c['BM']}×{c['BN']}×{c['BK']}, {c['TM']}×{c['TN']}"


def compile_all(jobs, facts=kernel_facts, bar=None, odd_shape=ODD_SHAPE):
    """{label: facts} for every job: built, launched once on `odd_shape` (which compiles it), checked.
    `bar` (a tqdm bar) advances once per job."""
    A, B = operands(*odd_shape, seed=1)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    found = {}
    for label, name, constants, _ in jobs:
        if bar is not None:
            bar.set_postfix_str(f"compile {label}")
        t0 = time.perf_counter()
        launch = prepare(name, A, B, **constants)()
        C = launch.result()  # waits for the launch, and the compilation before it
        found[label] = {"compile_s": round(time.perf_counter() - t0, 2), "odd_shape_rel_err": rel_err(C, ref),
                        "dynamic_bytes": getattr(launch.kernel, "nbytes", 0), **facts(launch.kernel)}
        if bar is not None:
            bar.update()
    return found


def measure(jobs, ns, timer=None, blas=timed_sgemm, facts=kernel_facts, progress=True, seed=0, odd_shape=ODD_SHAPE,
            peer=None):
    """The rows of `run` for these jobs (see `jobs`); `timer(launch) -> Timing`, `blas(A, B, timer)` and
    `peer(A, B, timer) -> (Timing, C, config)` (Triton's product) are parameters so that the bookkeeping
    can be tested without a GPU."""
    timer = timer or (lambda launch: time_launch(launch, 2, 10, MIN_SAMPLE_MS))
    with progress_bar(len(jobs) * (1 + len(ns)), progress, "ladder") as bar:
        compiled = compile_all(jobs, facts, bar, odd_shape)
        return [row for n in ns for row in measure_at(n, jobs, timer, blas, compiled, bar, seed, peer)]


def measure_at(n, jobs, timer, blas, compiled, bar, seed=0, peer=None):
    """The rows of `measure` at one N: cuBLAS's (when `blas` gives one), Triton's (with `peer`), then one
    per job."""
    rows = []
    A, B = operands(n, n, n, seed)
    ref, reference = (A.astype(np.float64) @ B.astype(np.float64), "float64") if n <= FLOAT64_UP_TO else (None, "")
    blas_result = blas(A, B, timer) if blas else None
    blas_tflops = blas_result[0].tflops(n, n, n) if blas_result else None
    if blas_result:
        timing, C = blas_result
        if ref is None:
            ref, reference = C.astype(np.float64), "cuBLAS"
        rows.append({"kernel": "cublas", "group": "cublas", "N": n, "config": "cupy.matmul", **_timed(timing, n),
                     "pct_cublas": 100.0, "rel_err": rel_err(C, ref) if reference == "float64" else "",
                     "reference": reference if reference == "float64" else "",
                     "idea": "cuBLAS SGEMM (FP32; CuPy leaves TF32 off)"})
    if peer:
        timing, C, config = peer(A, B, timer)
        rows.append({"kernel": "triton", "group": "triton", "N": n, "config": config, **_timed(timing, n),
                     "pct_cublas": 100 * timing.tflops(n, n, n) / blas_tflops if blas_tflops else "",
                     "rel_err": rel_err(C, ref) if ref is not None else "", "reference": reference if ref is not None else "",
                     "idea": "Triton's FP32 matmul, tl.dot with input_precision='ieee', autotuned (tools/measure/triton_peer.py)"})
    for label, name, constants, group in jobs:
        bar.set_postfix_str(f"N={n} {label}")
        launch = prepare(name, A, B, **constants)
        timing = timer(launch)
        C = launch.poison()().result()
        rows.append(_row(label, name, group, n, launch, timing, blas_tflops, C, ref, reference, compiled[label]))
        del launch
        bar.update()
    return rows


def _timed(timing, n):
    return {"median_ms": timing.median_ms, "min_ms": timing.min_ms, "max_ms": timing.max_ms,
            "repeats": timing.repeats, "launches_per_sample": timing.launches_per_sample,
            "tflops": timing.tflops(n, n, n), "clock": timing.clock}


def _row(label, name, group, n, launch, timing, blas_tflops, C, ref, reference, facts):
    formula = predicted(launch.spec, n, n, n, **launch.constants)
    threads = launch.threadsperblock
    return {"kernel": label, "group": group, "N": n, "config": _config(launch),
            **{c: launch.constants.get(c, "") for c in CONSTANTS}, "threads": threads[0] * threads[1],
            "launch_bounds": "" if not launch.launch_bounds else "%d,%d" % tuple(launch.launch_bounds),
            **_timed(timing, n),
            "pct_cublas": 100 * timing.tflops(n, n, n) / blas_tflops if blas_tflops else "",
            "rel_err": rel_err(C, ref) if ref is not None else "", "reference": reference if ref is not None else "",
            "global_loads_per_fma": (formula["A"] + formula["B"]) / formula["fmas"],
            "shared_reads_per_fma": formula["reads"] / formula["fmas"], "idea": launch.spec.idea, **facts}


def sass_rows(rows):
    """One row per kernel: what the compiler made of it (registers, local memory, main-loop SASS)."""
    seen = {}
    for r in rows:
        if r["kernel"] not in ("cublas", "triton") and r["kernel"] not in seen:
            seen[r["kernel"]] = {f: r.get(f, "") for f in SASS_FIELDS}
    return list(seen.values())


def run(ns=(1024, 2048, 4096, 8192), kernels=None, search=True, cublas=True, sass=True, progress=True, triton=False):
    """The ladder at every N of `ns` (see the module's docstring); needs a GPU, CuPy for cuBLAS, Triton
    and PyTorch for `triton`."""
    require_gpu("the ladder")
    peer = None
    if triton:
        if not triton_peer.available():
            raise Unavailable("--triton needs Triton and PyTorch (pip install triton torch)")
        peer = triton_peer.timed_matmul
    chosen = jobs(kernels, search)
    started = time.perf_counter()
    rows = measure(chosen, ns, blas=timed_sgemm if cublas else None,
                   facts=lambda k: kernel_facts(k, sass), progress=progress, peer=peer)
    if progress:
        sys.stderr.write(f"ladder: {len(chosen)} kernels × {len(ns)} sizes in {time.perf_counter() - started:.0f} s\n")
    return rows

