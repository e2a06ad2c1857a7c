"""`python -m tiledlab tune`: as Triton autotunes, each candidate this card can run is checked (against cuBLAS, or
float64 on the simulator) and timed at each shape; the fastest goes to the cache core.best reads, one entry per
card and shape class (best.shape_class)."""
import numpy as np

from ..backend import SIMULATOR
from ..core import best, card as cards
from ..core.best import cache_path, shape_class
from ..core.launch import prepare
from ..core.operands import operands
from ..core.registry import KERNELS
from ..i18n import _
from .bench import rel_err
from .cublas import timed_sgemm
from .timing import back_to_back

CANDIDATES = list(best.CANDIDATES + best.SPLIT_K)  # what `best`'s model chooses among (core.best says why)
TOLERANCE = 1e-4  # relative error against the reference beyond which a candidate is wrong, never chosen


def card():
    """The card in hand (core.card.current: on the simulator, the card it models)."""
    return cards.current()


def timed_at(M, K, N, on, candidates, timer=back_to_back, blas=timed_sgemm):
    """One row per candidate that card `on` can run, timed and checked at M×K·K×N beside cuBLAS."""
    A, B = operands(M, K, N, seed=0)
    blas_result = blas(A, B, timer) if blas else None
    reference = blas_result[1] if blas_result else A.astype(np.float64) @ B.astype(np.float64)
    cublas_tflops = blas_result[0].tflops(M, K, N) if blas_result else None
    step = 1 if M <= 4096 else 16  # every row up to 4096 of them: a float64 check of 8192² takes seconds
    rows = []
    for name in (c for c in candidates if KERNELS[c].refusal(on) is None):
        launch = prepare(name, A, B)
        timing = timer(launch)
        err = rel_err(launch.poison()().result()[::step], reference[::step])
        tflops = timing.tflops(M, K, N)
        rows.append({"M": M, "K": K, "N": N, "kernel": name, "ms": timing.median_ms, "tflops": tflops, "rel_err": err,
                     "pct_cublas": 100 * tflops / cublas_tflops if cublas_tflops else None})
    return rows


def choice(rows, on):
    """One shape class's cache entry: the candidate right at every shape and least slower than the fastest, summed."""
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
    return best.entry(on, shape_class(*next(iter(shapes))), kernel, measured)


def run(shapes, candidates=None, timer=back_to_back, blas=timed_sgemm, path=None, saved=None):
    """A row per candidate timed at `shapes`; each class's choice is cached (and `saved(rows)` called) as it ends."""
    on, path = card(), path or cache_path()
    entries, rows = best.entries(path), []
    classes = {}
    for M, K, N in shapes:
        classes.setdefault(shape_class(M, K, N), []).append((M, K, N))
    for members in classes.values():
        timed = [r for M, K, N in members for r in timed_at(M, K, N, on, candidates or CANDIDATES, timer, blas)]
        entry = choice(timed, on)
        entries = [e for e in entries if not (best.same_class(e, on, entry["shape_class"])
                                              and best.measured_on(e) == best.measured_on(entry))] + [entry]
        rows += [{**r, "chosen": r["kernel"] == entry["kernel"]} for r in timed]
        best.save(entries, path)  # class by class: a tune stopped later keeps the classes before
        if saved:
            saved(rows)
    return rows
