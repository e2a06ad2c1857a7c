"""Exercise checks: a kernel's answer on awkward shapes and the loads the exercise allows (`check`), and
predictions compared with a measurement without giving the number away (`predict`)."""
import numbers
import unicodedata

import numpy as np

from ..core.formulas import naive_loads, shared_traffic, tiled_loads
from ..core.launch import matmul
from .count import count_loads
from ..i18n import N_, _
from .hazards import hazard_message
from .outcomes import recorded

SHAPES = [(5, 23, 7), (8, 8, 8), (13, 9, 17), (1, 4, 1)]  # check() adds two shapes drawn at random
COUNT_SHAPES = [(16, 16, 16), (12, 20, 9)]  # loads are counted at both: no limit fits one shape only


TOO_MANY_LOADS = N_("stage tiles in cuda.shared.array and reuse them from there.")
# The hints the notebooks' exercise cells pass to check(): code cells are the same in both editions, so
# the Chinese edition translates them here (tests/test_i18n.py checks the notebooks still pass these).
NOTEBOOK_HINTS = (N_("read each A[row, k] once into a register and use it for both columns."),
                  N_("let one tile of A serve both of a thread's columns."),
                  N_("give each block a 2T×2T tile of C: four results per thread."))


@recorded
def check(kernel, tile=4, limit_loads=True, max_loads=None, shapes=SHAPES, seed=None, max_shared_reads=None,
          hint=TOO_MANY_LOADS, max_shared_reads_per_fma=None):
    """Run a student's @cuda.jit(A, B, C) kernel: look for barrier hazards and for elements of C stored
    by two threads, compare with numpy on odd shapes, then count its global loads.

    With limit_loads=True the kernel must also load no more than the tiled formula, so a naive kernel fails.
    `max_loads(M, K, N, T)` sets another limit on loads, for exercises with their own count, and
    `max_shared_reads(M, K, N, T)` a limit on shared-memory reads (the register-tiling exercises), and
    `max_shared_reads_per_fma` the same limit as a number per multiply-add of the T×T tiles (the zeros of
    edge tiles included, as `formulas.shared_traffic` counts them).
    `hint` is what to try when a kernel loads more than the exercise allows.
    A kernel the counting lab cannot follow fails, with the line it could not follow. A thread may
    store its own element of C more than once (accumulating in C): that passes, with a note.
    Returns True when everything holds; prints what went wrong otherwise.
    """
    if max_shared_reads and max_shared_reads_per_fma is not None:
        raise ValueError(_("give max_shared_reads or max_shared_reads_per_fma, not both"))
    rng = np.random.default_rng(seed)
    shapes = list(shapes) + [tuple(int(n) for n in rng.integers(1, 3 * tile + 5, size=3)) for _draw in range(2)]

    def operands(M, K, N):
        return rng.standard_normal((M, K), dtype=np.float32), rng.standard_normal((K, N), dtype=np.float32)

    counted = []
    for M, K, N in COUNT_SHAPES:  # hazards first: a missing barrier is the cause of any wrong result
        try:
            with np.errstate(all="ignore"):
                counted.append(count_loads(kernel, *operands(M, K, N), tile))
        except ValueError as refused:
            print(_("tiledlab cannot count this kernel: {refusal}").format(refusal=refused))
            return False
        if any(counted[-1].hazards.values()):
            print(f"A {M}×{K} · B {K}×{N}, tile={tile}: {hazard_message(counted[-1].hazards)}")
            return False
        if counted[-1].C_races:
            _print_race(counted[-1].C_races[0], f"A {M}×{K} · B {K}×{N}, tile={tile}")
            return False
    for M, K, N in shapes:
        A, B = operands(M, K, N)
        with np.errstate(all="ignore"):
            C = matmul(A, B, kernel, tile)
        if not _same(C, A @ B, _("A {M}×{K} · B {K}×{N} with tile={tile}").format(M=M, K=K, N=N, tile=tile)):
            return False
    limits = [max_loads(M, K, N, tile) if max_loads else sum(tiled_loads(M, K, N, tile).values())
              for M, K, N in COUNT_SHAPES]
    print(_("Correct on {shapes} shapes. Global loads of A and B:").format(shapes=len(shapes)))
    for (M, K, N), c, limit in zip(COUNT_SHAPES, counted, limits):
        naive = sum(naive_loads(M, K, N).values())
        allows = _("this exercise allows {limit:,}").format(limit=limit) if limit_loads else \
            _("no limit in this exercise")
        print(f"  {M}×{K}·{K}×{N}, tile={tile}: "
              + _("{loads:,} (naive needs {naive:,}; {allows})").format(loads=c.total, naive=naive, allows=allows))
        if limit_loads and c.total > limit:
            print(_("Right answer, but {loads:,} loads is more than the {limit:,} this exercise allows: {hint}")
                  .format(loads=c.total, limit=limit, hint=_(hint)))
            return False
    if max_shared_reads_per_fma is not None:
        max_shared_reads = _per_fma(max_shared_reads_per_fma)
    if max_shared_reads and not _few_shared_reads(counted, tile, max_shared_reads):
        return False
    most = max(int(c.C_stores.max()) for c in counted)
    if most > 1:
        print(_("Note: elements of C are stored more than once by the thread that owns it (up to {most} times): "
                "each store is global-memory traffic; accumulate in a register and store once.").format(most=most))
    print(_("Passed."))
    return True


def _print_race(race, what):
    i, j, first, other = race
    threads = [_("thread (ty={ty}, tx={tx}) of block (by={by}, bx={bx})").format(ty=ty, tx=tx, by=by, bx=bx)
               for by, bx, ty, tx in (first, other)]
    between = _("a race between blocks") if first[:2] != other[:2] else _("a race between threads of one block")
    print(_("C[{i}, {j}] is stored by two threads ({what}): by {first} and by {other}. Which value "
            "stays is {between}: on a GPU it changes from run to run. Let each element of C be stored by one "
            "thread only.").format(i=i, j=j, what=what, first=threads[0], other=threads[1], between=between))


def _per_fma(reads_per_fma):
    """A limit on shared reads: `reads_per_fma` for every multiply-add of the T×T tiles."""
    return lambda M, K, N, T: int(reads_per_fma * shared_traffic(M, K, N, T, T, T)["fmas"])


def _few_shared_reads(counted, tile, max_shared_reads):
    print(_("Shared-memory reads:"))
    for c in counted:
        M, K, N = c.shape
        reads, limit = int(c.shared_reads.sum()), max_shared_reads(M, K, N, tile)
        tiled = shared_traffic(M, K, N, tile, tile, tile)
        print(f"  {M}×{K}·{K}×{N}, tile={tile}: "
              + _("{reads:,}, {per_fma:.4g} per multiply-add (the tiled kernel reads {tiled:,}, 2 per multiply-add; "
                  "this exercise allows {limit:,})").format(reads=reads, per_fma=reads / tiled["fmas"],
                                                           tiled=tiled["reads"], limit=limit))
        if reads > limit:
            print(_("Right answer, but {reads:,} shared reads is more than the {limit:,} this exercise allows: "
                    "read a value once from shared memory into a register, then use it for every result that "
                    "needs it.").format(reads=reads, limit=limit))
            return False
    return True


def _same(C, spec, what):
    bad = ~np.isclose(C, spec, rtol=1e-4, atol=1e-4)
    if not bad.any():
        return True
    i, j = (int(v) for v in np.argwhere(bad)[0])
    rows, cols = slice(max(i - 1, 0), i + 2), slice(max(j - 1, 0), j + 2)
    unwritten = int(np.isnan(C).sum())
    differ = dict(what=what, bad=int(bad.sum()), size=C.size, unwritten=unwritten)
    wrong = _("Wrong result for {what}: {bad} of {size} elements differ ({unwritten} never written: still NaN).") \
        if unwritten else _("Wrong result for {what}: {bad} of {size} elements differ.")
    print(wrong.format(**differ))
    print(_("First difference at C[{i}, {j}]: yours {yours:.4g}, numpy {numpy:.4g}. Around it (rows {top}–{bottom}, "
            "columns {left}–{right}):").format(i=i, j=j, yours=C[i, j], numpy=spec[i, j], top=rows.start,
                                               bottom=min(rows.stop, C.shape[0]) - 1, left=cols.start,
                                               right=min(cols.stop, C.shape[1]) - 1))
    for name, block in ((_("Yours:"), C[rows, cols]), (_("Spec :"), spec[rows, cols])):
        indent = "\n" + " " * (_columns(name) + 1)  # continuation lines under the first number
        print(name, np.array2string(block, precision=3).replace("\n", indent))
    return False


def _columns(text):
    """How many terminal columns `text` takes: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _number(p):
    """A real number, numpy's included (np.int64(2048)); not a bool."""
    return isinstance(p, numbers.Real) and not isinstance(p, (bool, np.bool_))


@recorded
def predict(prediction, measured, rtol=0.0):
    """Compare a prediction with a measurement. The measured number is shown only once the prediction
    is right, so the stored output of an unanswered exercise gives nothing away. Returns True/False,
    or None while `prediction` is still None. Tuples and lists are compared item by item."""
    if prediction is None:
        print(_("Write your prediction in `prediction`, then run this cell again: it measures and compares."))
        return None
    want = len(measured) if isinstance(measured, (tuple, list)) else 1
    given = prediction if isinstance(prediction, (tuple, list)) else (prediction,)
    if len(given) != want or not all(_number(p) for p in given):
        print(_("Give a number, not {given}.").format(given=repr(prediction)) if want == 1 else
              _("Give {want} numbers, as a tuple in the order the question asks for, not {given}.")
              .format(want=want, given=repr(prediction)))
        return False
    pairs = list(zip(given, measured if want > 1 else (measured,)))
    verdicts = [abs(p - m) <= rtol * abs(m) for p, m in pairs]
    if all(verdicts):
        print(_("Right: measured {values}.").format(values=", ".join(f"{m:,}" for _p, m in pairs)))
        return True
    for k, ((p, m), ok) in enumerate(zip(pairs, verdicts)):
        where = _("number {k}: ").format(k=k + 1) if len(pairs) > 1 else ""
        verdict = _("{value:,} is right.") if ok else \
            _("not yet: {value:,} is too high.") if p > m else _("not yet: {value:,} is too low.")
        print(where + verdict.format(value=p))
    print(_("Think it through again, then re-run the cell."))
    return False
