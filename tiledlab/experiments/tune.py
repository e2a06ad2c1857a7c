"""`python -m tiledlab tune`: measure the candidate kernels at the sizes given, on this card, and keep the choice.

The way Triton autotunes: each candidate that the card can run is checked on the shape (C against cuBLAS, or
float64 on the simulator) and timed back to back (timing.back_to_back); the fastest is written to a JSON cache,
one entry per card and shape class (each of M, K, N rounded up to a power of two), and `best` runs it thereafter
at every shape of that class on that card. Several shapes of one class (1000³ and 1024³) share a choice: the
candidate with the least time relative to the fastest at each of them, summed. An entry is used only for the
card it was measured on: another GPU, or the same one after a driver change of its limits, tunes again.

The cache, {"version": 1, "entries": [{"card": {...}, "shape_class": [M2, K2, N2], "kernel": name, "measured": {...}}]},
lives at $TILEDLAB_CACHE_DIR/tune.json, or at tiledlab/tune.json in the user's cache folder (platformdirs).
"""
import json
import os
import pathlib

import numpy as np

from ..backend import SIMULATOR
from ..core.generated import shared_memory
from ..core.launch import prepare
from ..core.operands import operands
from ..core.registry import KERNELS
from ..i18n import _
from .bench import rel_err
from .cublas import timed_sgemm
from .timing import back_to_back

VERSION = 1
# Measured at every shape: the kernels that were the fastest numba kernel somewhere in the H200 exploration
# (explore.csv): the 128×256 tile for large products, the 64×128 pipeline where few blocks fill the card, and
# the double-buffered 64×128 tile, which needs no cp.async and was the fastest at 1000³.
CANDIDATES = ["w_128x256x8_8x16_warp16x2", "a_64x128x16_8x8_s3", "s_64x128x8_8x8_db"]
TOLERANCE = 1e-4  # relative error against the reference beyond which a candidate is wrong, never chosen


def cache_path():
    """Where the choices are kept: $TILEDLAB_CACHE_DIR/tune.json, else tiledlab/tune.json in the user's cache folder."""
    root = os.environ.get("TILEDLAB_CACHE_DIR")
    if root:
        return pathlib.Path(root) / "tune.json"
    import platformdirs
    return pathlib.Path(platformdirs.user_cache_dir()) / "tiledlab" / "tune.json"


def card():
    """The card in hand as the cache records it; on the simulator, the H200 it models (committed device.csv)."""
    if SIMULATOR:
        from .. import data
        row = data.load("h200/device.csv").iloc[0]
        return {"name": f"{row['device']} (modelled by the simulator)",
                "compute_capability": [int(c) for c in str(row["compute_capability"]).split(".")],
                "sms": int(row["sms"]), "shared_per_block_optin": int(row["shared_per_block_optin_bytes"])}
    from numba import cuda
    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    return {"name": name, "compute_capability": list(dev.compute_capability), "sms": int(dev.MULTIPROCESSOR_COUNT),
            "shared_per_block_optin": int(dev.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)}


def shape_class(M, K, N):
    """[M, K, N], each rounded up to the next power of two: shapes of one class share a choice."""
    return [1 << (int(n) - 1).bit_length() for n in (M, K, N)]


def runs_on(name, on):
    """True when card `on` can run kernel `name`: cp.async needs compute capability 8.0, its tiles the shared
    memory the card gives a block."""
    kernel = KERNELS[name]
    if kernel.generator is None:
        return True
    options = kernel.generator.options
    if options["stages"] and tuple(on["compute_capability"]) < (8, 0):
        return False
    return shared_memory(kernel, kernel.bind())[0] <= on["shared_per_block_optin"]


def load(path=None):
    """The cache's entries ([] when there is none yet, or it is of another version)."""
    path = pathlib.Path(path or cache_path())
    try:
        found = json.loads(path.read_text())
    except FileNotFoundError:
        return []
    except ValueError:
        raise ValueError(_("{path} is not a tune cache (not JSON): delete it and run `python -m tiledlab tune` "
                           "again").format(path=path)) from None
    return found.get("entries", []) if found.get("version") == VERSION else []


def chosen(M, K, N, on=None, path=None):
    """The kernel `tune` chose for this shape's class on card `on` (the card in hand by default), or None."""
    on, key = on or card(), shape_class(M, K, N)
    return next((e["kernel"] for e in load(path) if e["card"] == on and e["shape_class"] == key
                 and e["kernel"] in KERNELS), None)


def measure(name, A, B, reference, timer=back_to_back):
    """{"ms", "tflops", "rel_err"} of kernel `name` on A·B (rel_err against `reference`)."""
    launch = prepare(name, A, B)
    timing = timer(launch)
    step = 1 if len(A) <= 4096 else 16  # every row up to 4096 of them: a float64 check of 8192² takes seconds
    err = rel_err(launch.poison()().result()[::step], reference[::step])
    (M, K), N = A.shape, B.shape[1]
    return {"ms": timing.median_ms, "tflops": timing.tflops(M, K, N), "rel_err": err}


def timed_at(M, K, N, on, candidates, timer=back_to_back, blas=timed_sgemm):
    """One row per candidate that card `on` can run, timed and checked at M×K·K×N beside cuBLAS."""
    A, B = operands(M, K, N, seed=0)
    blas_result = blas(A, B, timer) if blas else None
    reference = blas_result[1] if blas_result else A.astype(np.float64) @ B.astype(np.float64)
    cublas_tflops = blas_result[0].tflops(M, K, N) if blas_result else None
    rows = []
    for name in (c for c in candidates if runs_on(c, on)):
        row = {"M": M, "K": K, "N": N, "kernel": name, **measure(name, A, B, reference, timer)}
        row["pct_cublas"] = 100 * row["tflops"] / cublas_tflops if cublas_tflops else None
        rows.append(row)
    return rows


def choice(rows, on):
    """The cache entry for the rows of one shape class: the correct candidate with the least time relative to the
    fastest at each of its shapes, summed (a kernel wrong at any shape of the class is never chosen)."""
    shapes = {(r["M"], r["K"], r["N"]) for r in rows}
    wrong = {r["kernel"] for r in rows if not (np.isfinite(r["rel_err"]) and r["rel_err"] <= TOLERANCE)}
    fastest = {s: min(r["ms"] for r in rows if (r["M"], r["K"], r["N"]) == s) for s in shapes}
    score = {}
    for r in rows:
        if r["kernel"] not in wrong:
            score[r["kernel"]] = score.get(r["kernel"], 0) + r["ms"] / fastest[r["M"], r["K"], r["N"]]
    if not score:
        raise ValueError(_("no candidate computed {shapes} correctly on this card").format(
            shapes=", ".join("×".join(map(str, s)) for s in sorted(shapes))))
    kernel = min(score, key=score.get)
    measured = {"shapes": sorted(map(list, shapes)), "relative_time": round(score[kernel] / len(shapes), 4),
                "rows": [{k: r[k] for k in ("M", "K", "N", "ms", "tflops", "pct_cublas")} for r in rows
                         if r["kernel"] == kernel], "backend": "simulator" if SIMULATOR else "gpu"}
    return {"card": on, "shape_class": shape_class(*next(iter(shapes))), "kernel": kernel, "measured": measured}


def run(shapes, candidates=None, timer=back_to_back, blas=timed_sgemm, path=None, saved=None):
    """Tune the shape classes of `shapes` on the card in hand and write the choices to the cache (replacing this
    card's earlier ones for those classes; other cards' entries stay), class by class, then `saved(rows so far)`.
    Returns one row per candidate timed."""
    on, path = card(), pathlib.Path(path or cache_path())
    entries, rows = load(path), []
    classes = {}
    for M, K, N in shapes:
        classes.setdefault(tuple(shape_class(M, K, N)), []).append((M, K, N))
    for members in classes.values():
        timed = [r for M, K, N in members for r in timed_at(M, K, N, on, candidates or CANDIDATES, timer, blas)]
        entry = choice(timed, on)
        entries = [e for e in entries if not (e["card"] == on and e["shape_class"] == entry["shape_class"])]
        entries.append(entry)
        rows += [{**r, "chosen": r["kernel"] == entry["kernel"]} for r in timed]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"version": VERSION, "entries": entries}, indent=1) + "\n")  # class by class
        if saved:
            saved(rows)
    return rows
