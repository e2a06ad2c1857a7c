"""Exercise checks: a kernel's answer on awkward shapes and the loads the exercise allows (`check`), and
predictions compared with a measurement without giving the number away (`predict`)."""
import ast
import contextlib
import hashlib
import inspect
import io
import linecache
import math
import numbers

import numpy as np

from . import diagnosis
from ..core.formulas import naive_loads, shared_traffic, tiled_loads
from ..core.contract import Fault, is_kernel
from ..core.kernel import lesson_tile, validate_tile
from ..core.launch import matmul, resolve
from ..core.operands import operands
from ..core.rules import is_whole, whole
from .count import LaunchFailed, count_loads, said
from ..i18n import N_, _, width
from .hazards import hazard_message
from .outcomes import recorded
from .sizes import global_size

SHAPES = [(5, 23, 7), (8, 8, 8), (13, 9, 17), (1, 4, 1)]  # check() adds two shapes drawn at random
COUNT_SHAPES = [(16, 16, 16), (12, 20, 9)]  # loads are counted at these and at count_shapes' partial ones


TOO_MANY_LOADS = N_("stage tiles in cuda.shared.array and reuse them from there.")
# The hints the notebooks' exercise cells pass to check(): code cells are the same in both editions, so
# the Chinese edition translates them here (tests/test_i18n.py checks the notebooks still pass these).
NOTEBOOK_HINTS = (N_("read each A[row, k] once into a register and use it for both columns."),
                  N_("let one tile of A serve both of a thread's columns."),
                  N_("give each block a 2T×2T tile of C: four results per thread."))


def own_rules(cell, names, args, kwargs):
    """[(this call's, the cell's)] for each rule check(*args, **kwargs) does not share with the check of an exercise
    `cell` as handed out (run in a copy of the caller's `names`): an argument but the hint (a limit by what it gives at
    the counted shapes), and the kernel's geometry against the cell's stub."""
    mine, theirs = _arguments_of(*args, **kwargs), _handed_out(cell, names)
    tile, at = mine["tile"], count_shapes(mine["kernel"], mine["tile"])
    differ = [_differs(name, mine[name], theirs[name], at, tile) for name in mine if name not in ("kernel", "hint")]
    geometry = [_geometry(kernel, tile) for kernel in (mine["kernel"], theirs["kernel"])]
    return [d for d in differ if d] + ([tuple(geometry)] if geometry[0] != geometry[1] else [])


def _handed_out(cell, names):
    """check()'s arguments in an exercise `cell`, its stub the kernel: the cell runs in a copy of `names` without its
    bare expressions (its prints), and its last statement, check(...), gives its arguments instead of checking."""
    name = f"<exercise cell {hashlib.sha256(cell.encode()).hexdigest()[:12]}>"
    linecache.cache[name] = (len(cell), None, cell.splitlines(True), name)  # where its stub's source is read
    *body, last = ast.parse(cell).body
    names = dict(names)
    exec(compile(ast.Module([s for s in body if not isinstance(s, ast.Expr)], []), name, "exec"), names)
    names["check"] = _arguments_of
    return eval(compile(ast.Expression(last.value), name, "eval"), names)


def _arguments_of(*args, **kwargs):
    bound = inspect.signature(check).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.arguments


def _differs(name, mine, theirs, at, tile):
    """(this call's, the cell's) value of check()'s argument `name` where they differ, else None; limits by what they
    give at the shapes `at`."""
    if callable(mine) and callable(theirs):
        for M, K, N in at:
            values = [limit(M, K, N, tile) for limit in (mine, theirs)]
            if values[0] != values[1]:
                return tuple(f"{name}({M}, {K}, {N}, {tile}) = {value:,}" for value in values)
        return None
    with contextlib.suppress(ValueError):  # numpy arrays have no one truth value: they differ
        if mine == theirs:
            return None
    return tuple(f"{name}={getattr(value, '__name__', repr(value))}" for value in (mine, theirs))  # budget, not <...>


def _geometry(kernel, tile):
    """The threads and the tile of C of a block of `kernel` at `tile` (or why it has none there), in words."""
    spec = resolve(kernel)
    try:
        bound = spec.bind(None, tile if "T" in spec.constants else None)
    except ValueError as refused:
        return str(refused)
    return f"threads={bound.threads}, block={bound.block}"


@recorded(rules=own_rules)
def check(kernel, tile=4, limit_loads=True, max_loads=None, shapes=SHAPES, seed=None, max_shared_reads=None,
          hint=TOO_MANY_LOADS, max_shared_reads_per_fma=None, barriers_per_step=None, tiles_per_step=1,
          from_global="", shared_memory=True):
    """Check a student's @cuda.jit(A, B, C) kernel; print what went wrong, or return True: hazards and races on C,
    the product against numpy on odd shapes, then its global loads on `count_shapes`. limit_loads=True allows the
    tiled formula's loads, `max_loads(M, K, N, T)` another limit; `max_shared_reads(M, K, N, T)` or
    `max_shared_reads_per_fma` (of the T×T tiles, as formulas.shared_traffic counts) limit shared reads;
    `barriers_per_step` caps the barriers per step of `tiles_per_step` tiles of K (feedback then suggests no other
    barrier); `hint` says what to try when loads exceed the limit; the operands of `from_global` ("B") must be read
    straight from global memory, as often as the naive kernel reads them; shared_memory=False allows no shared array.
    A wrong product is told with the first cause `diagnosis` finds."""
    if max_shared_reads is not None and max_shared_reads_per_fma is not None:
        raise ValueError(_("give max_shared_reads or max_shared_reads_per_fma, not both"))
    if max_shared_reads_per_fma is not None:  # per multiply-add of the T×T tiles
        def max_shared_reads(M, K, N, T):
            return int(max_shared_reads_per_fma * shared_traffic(M, K, N, T, T, T)["fmas"])
    try:  # a wrong argument is feedback too, never a traceback; nothing runs before every argument is checked
        tile, shapes = _arguments(kernel, tile, shapes, seed, hint, (barriers_per_step, tiles_per_step),
                                  max_shared_reads_per_fma, from_global)
        barriers = None if barriers_per_step is None else (barriers_per_step, tiles_per_step)
        counted_at = count_shapes(kernel, tile)
        _check_limit("max_loads", max_loads, counted_at, tile)
        _check_limit("max_shared_reads", max_shared_reads, counted_at, tile)
    except WrongArgument as wrong:
        print(wrong)
        return False
    except ValueError as refused:
        _refused(refused)
        return False
    rng = np.random.default_rng(seed)  # one stream for the whole check: operands(..., rng) draws from it too
    shapes += [tuple(int(n) for n in rng.integers(1, 3 * tile + 5, size=3)) for _draw in range(2)]
    counted = []
    for M, K, N in counted_at:  # hazards first: a missing barrier is the cause of any wrong result
        A, B = operands(M, K, N, rng)
        c = _counted(kernel, A, B, tile)
        if c is None or not _safe(c, A, B, tile, barriers):
            return False
        counted.append((c, A, B))
    for M, K, N in shapes:
        A, B = operands(M, K, N, rng)
        c = _counted(kernel, A, B, tile)  # first: a loop that never ends at this shape only is said, not waited for
        if c is None or not _safe(c, A, B, tile, barriers):
            return False
        C = _run(kernel, A, B, tile)
        if C is None or not _same(kernel, A, B, tile, C, _what(A, B, tile, joined=True)):
            return False
    for c, A, B in counted:  # the counted launches computed the product too (a count of wrong work is no count)
        what = _("{what}, a counted launch").format(what=_what(A, B, tile, joined=True))
        if not _same(kernel, A, B, tile, c.C, what, c):
            return False
    counted = [c for c, *_operands in counted]
    print(_("Correct on {shapes} shapes. Global loads of A and B, at the {counted} counted:").format(
        shapes=len(shapes) + len(counted), counted=len(counted)))
    for c in counted:
        M, K, N = c.shape
        limit = max_loads(M, K, N, tile) if max_loads is not None else sum(tiled_loads(M, K, N, tile).values())
        naive = sum(naive_loads(M, K, N).values())
        allows = _("this exercise allows {limit:,}").format(limit=limit) if limit_loads else \
            _("no limit in this exercise")
        print(f"  {M}×{K}·{K}×{N}, tile={tile}: "
              + _("{loads:,} (naive needs {naive:,}; {allows})").format(loads=c.total, naive=naive, allows=allows))
        if limit_loads and c.total > limit:
            idle = c.idle_loads and c.total - c.idle_loads <= limit  # the loads over it: threads storing no C
            print(_("Right answer, but {loads:,} loads is more than the {limit:,} this exercise allows: {hint}").format(
                loads=c.total, limit=limit, hint=_(hint) if not idle else _(
                    "{idle:,} of them are made by threads that store no element of C. Their sums are thrown away: "
                    "guard the loads only such a sum uses as the store of C is guarded (a clamped index still loads), "
                    "and keep those that fill a shared tile for the block.").format(idle=c.idle_loads)))
            _note_unused(counted)
            return False
    if not _kept(counted, from_global, shared_memory):
        return False
    if max_shared_reads is not None and not _few_shared_reads(counted, tile, max_shared_reads):
        return False
    most = max(int((c.C_stores - c.C_atomics).max()) for c in counted)  # adds by several threads are no repeats
    if most > 1:
        print(_("Note: elements of C are stored more than once by the thread that owns it (up to {most} times): "
                "each store is global-memory traffic; accumulate in a register and store once.").format(most=most))
    if (adds := max(int(c.C_atomics.max()) for c in counted)) > 1:
        print(_("Note: elements of C are added into with cuda.atomic.add up to {adds} times: each add reads and "
                "writes global memory, and the sum is right only on a C that starts at zero (this check zeroes C; "
                "cuda.device_array does not). Where one thread owns an element, accumulate in a register and store "
                "once.").format(adds=adds))
    _note_unused(counted)
    print(_("Passed."))
    return True


class WrongArgument(ValueError):
    """An argument of check() other than the kernel is wrong: said as it is, the kernel not blamed."""


def _arguments(kernel, tile, shapes, seed, hint, barriers, per_fma, from_global):
    """check()'s tile as an int and its shapes as a list, or a WrongArgument that says what to fix."""
    if is_kernel(tile) or _is_number(kernel):
        raise WrongArgument(_("check() takes your @cuda.jit kernel first, as in check(my_kernel, tile=4)"))
    try:
        tile = validate_tile(tile)
        whole("seed", 0 if seed is None else seed, least=0)
        whole("barriers_per_step", 1 if barriers[0] is None else barriers[0])
        whole("tiles_per_step", barriers[1])
    except ValueError as wrong:
        raise WrongArgument(wrong) from None
    if per_fma is not None and not (_is_number(per_fma) and per_fma >= 0):
        raise WrongArgument(_("max_shared_reads_per_fma must be a number of at least 0, got {value!r}").format(
            value=per_fma))
    if not (isinstance(from_global, str) and set(from_global) <= set("AB")):
        raise WrongArgument(_("from_global takes the operands read straight from global memory, as in "
                              "from_global=\"B\", got {value!r}").format(value=from_global))
    if not isinstance(hint, str):
        raise WrongArgument(_("hint takes a str, what to try when the loads exceed the limit, got {value!r}").format(
            value=hint))
    if not (isinstance(shapes, (list, tuple)) and all(isinstance(s, (list, tuple)) and len(s) == 3 and is_whole(*s)
                                                      and min(s) >= 1 for s in shapes)):
        raise WrongArgument(_("shapes takes a list of (M, K, N), three whole numbers of at least 1 each, as in "
                              "shapes=[(5, 23, 7)], got {value!r}").format(value=shapes))
    return tile, [tuple(int(n) for n in s) for s in shapes]


def _check_limit(name, limit, shapes, tile):
    """A WrongArgument unless `limit` (max_loads, max_shared_reads) is None or gives a number ≥ 0 at `shapes`."""
    if limit is not None and not callable(limit):
        _refuse_limit(name, _("got {value!r}").format(value=limit))
    for M, K, N in shapes if callable(limit) else ():
        call = f"{name}({M}, {K}, {N}, {tile})"
        try:
            value = limit(M, K, N, tile)
        except Exception as error:  # noqa: BLE001  the student's function: what it raised, in one line
            _refuse_limit(name, _("{call} raised {error}").format(call=call, error=f"{type(error).__name__}: {error}"))
        if not (_is_number(value) and value >= 0):
            _refuse_limit(name, _("{call} returned {value!r}").format(call=call, value=value))


def _refuse_limit(name, got):
    raise WrongArgument(_("{name} takes a function of (M, K, N, T) that returns how many are allowed, a number ≥ 0: "
                          "{name}=budget, not budget(16, 16, 16, 4); {got}").format(name=name, got=got)) from None


def count_shapes(kernel, tile):
    """COUNT_SHAPES and three with a partial block of C in M and N and a partial tile step (T, or BK) in K, from
    `kernel`'s block tile at `tile`, the last smaller than one block and one step; a ValueError for what is not a
    kernel, a WrongArgument for a refused tile."""
    spec = resolve(kernel)
    try:
        bound = spec.bind(None, tile if "T" in spec.constants else None)
        (rows, cols), step = spec.sizes(bound)[0], bound.get("T", bound.get("BK", tile))
    except ValueError as refused:  # the count says why it cannot run, unless only this tile is refused
        try:
            spec.bind()
        except ValueError:
            bound, rows, cols, step = None, tile, tile, tile
        else:
            raise WrongArgument(_("check(..., tile={tile}): {refusal}").format(tile=tile, refusal=refused)) from None
    extents = _shared_extents(bound)
    if extents:
        _tile_read(spec, bound, tile, extents)
    shapes = COUNT_SHAPES + [(_partial(rows, 3, 1), _partial(step, 4, 3), _partial(cols, 2, 3)),
                             (_partial(rows, 2, rows - 1), _partial(step, 2, 1), _partial(cols, 1, 1)),
                             (_partial(rows, 0, rows - 1), _partial(step, 0, step - 1), _partial(cols, 0, 2))]
    return shapes + _past_shared(extents, step, shapes)


def _shared_extents(bound):
    """The sides of the build's shared arrays; None where the count refuses the kernel or a declaration (it says why
    by its line)."""
    try:
        return {int(n) for _name, shape, *_ in bound.shared_declarations for n in np.atleast_1d(shape)}
    except Exception:  # noqa: BLE001  bound is None, or a declaration the count (or the contract, first) refuses
        return None


def _tile_read(spec, bound, tile, extents):
    """A WrongArgument for a kernel in the lesson's T×T blocks whose code never reads T and whose shared tiles have
    no side (`extents`) of `tile` elements: sized by another name, they do not follow the blocks check() launches."""
    read = {n.id for n in ast.walk(bound.code.tree) if isinstance(n, ast.Name)}
    if spec.threads is lesson_tile and "T" not in read and tile not in extents:
        raise WrongArgument(_("{name} declares shared tiles but never reads T: check() launches blocks of T×T threads "
                              "with T = tile ({tile}), so size the tiles and the steps with T (or declare the "
                              "kernel's own geometry with @launch_geometry above @cuda.jit)").format(
                                  name=spec.name, tile=tile))


def _past_shared(extents, step, shapes):
    """[a shape whose size in one dimension exceeds every side (`extents`) of the build's shared arrays, the others
    a step and a bit] for each dimension no shape of `shapes` exceeds it in: a buffer sized for small matrices (a
    whole row of A in 32 floats) is then written past its end, at the cost of a thin product, not a cube."""
    if extents is None:
        return []
    largest = max(extents, default=0)
    size, thin = _partial(step, largest // step + 1, 1), _partial(step, 1, 1)
    return [tuple(size if d == long else thin for d in range(3)) for long in range(3)
            if not any(shape[long] > largest for shape in shapes)]


def _partial(step, whole, extra):
    """`whole` steps and part of one: a size `step` does not divide (when step > 1)."""
    return whole * step + (extra % step or 1)


def _safe(c, A, B, tile, barriers):
    """False, after saying why, when the counted launch `c` had a hazard, a race on C or more barriers than
    `barriers` allows: (barriers per step, tiles of K per step), or None for no limit."""
    per_step, tiles = barriers or (None, 1)
    steps = -(-A.shape[1] // (tile * tiles))
    if any(c.hazards.values()):  # another barrier is advised only where the exercise allows one more
        more = per_step is None or c.barriers < per_step * steps
        print(f"{_what(A, B, tile)}: {hazard_message(c.hazards, more_barriers=more)}")
        return False
    if c.C_races:
        i, j, first, other = c.C_races[0]
        threads = [_("thread (ty={ty}, tx={tx}) of block (by={by}, bx={bx})").format(ty=ty, tx=tx, by=by, bx=bx)
                   for by, bx, ty, tx in (first, other)]
        between = _("a race between blocks") if first[:2] != other[:2] else _("a race between threads of one block")
        print(_("C[{i}, {j}] is stored by two threads ({what}): by {first} and by {other}. Which value "
                "stays is {between}: on a GPU it changes from run to run. Let each element of C be stored by one "
                "thread only.").format(i=i, j=j, what=_what(A, B, tile), first=threads[0], other=threads[1],
                                       between=between))
        return False
    if per_step is not None and c.barriers > per_step * steps:
        said = _("{what}: a thread passes {barriers} cuda.syncthreads() in {steps} tile steps; this exercise allows "
                 "{allowed} per tile step.") if tiles == 1 else _(
                 "{what}: a thread passes {barriers} cuda.syncthreads() in {steps} steps of {tiles} tiles of K each; "
                 "this exercise allows {allowed} per step.")
        print(said.format(what=_what(A, B, tile), barriers=c.barriers, steps=steps, allowed=per_step, tiles=tiles))
        return False
    return True


def _what(A, B, tile, joined=False):
    (M, K), N = A.shape, B.shape[1]
    if not joined:
        return f"A {M}×{K} · B {K}×{N}, tile={tile}"
    return _("A {M}×{K} · B {K}×{N} with tile={tile}").format(M=M, K=K, N=N, tile=tile)


def _refused(refusal):
    """Print why a kernel was refused: its fault (a GPU cannot build it or it would never finish), or what the count
    cannot follow."""
    print(refusal if isinstance(refusal, Fault) else
          _("tiledlab cannot count this kernel: {refusal}").format(refusal=refusal))


def _counted(kernel, A, B, tile):
    """count_loads(kernel, A, B, tile), or None after printing why it gave no count."""
    try:
        with diagnosis.quiet():
            return count_loads(kernel, A, B, tile)
    except LaunchFailed as failed:
        print(f"{_what(A, B, tile)}: {failed}")
        if cause := global_size(kernel, A, B, tile):  # a global M, K or N: no guard mends it
            print(cause)
    except ValueError as refused:
        _refused(refused)
    except Exception as error:  # noqa: BLE001  the two counts disagree, or the kernel did not compile: said plainly
        print(f"{_what(A, B, tile)}: {said(error, None)}")
    return None


def _run(kernel, A, B, tile):
    """matmul(A, B, kernel, tile), or None after printing why it failed (a count names the line and thread)."""
    try:
        with diagnosis.quiet():
            return matmul(A, B, kernel, tile)
    except Exception as error:  # noqa: BLE001  no traceback for a student: what failed, and where
        if _counted(kernel, A, B, tile) is not None:
            print(f"{_what(A, B, tile)}: {said(error, None)}")
        return None


def _note_unused(counted):
    unused = sorted({name for c in counted for name in c.unused_shared})
    if unused:
        print(_("Note: {names} declared with cuda.shared.array but never read or stored: this kernel computes "
                "without {them}.").format(names=", ".join(unused), them=_("it") if len(unused) == 1 else _("them")))


def _kept(counted, from_global, shared_memory):
    """False, after saying which, where a counted launch broke the exercise's rule: an operand of `from_global` loaded
    other than as often as the naive kernel loads it, or a shared array where `shared_memory` is False."""
    for c in counted:
        M, K, N = c.shape
        for op in from_global:
            naive = naive_loads(M, K, N)[op]
            if getattr(c, op) != naive:
                print(_("Right answer, but {op} is loaded {loads:,} times at {M}×{K}·{K}×{N}, where this exercise "
                        "reads it straight from global memory, as often as the naive kernel: {naive:,} times. Take "
                        "each value of {op} from {op} itself where the multiply-add uses it, not from shared memory.")
                      .format(op=op, loads=getattr(c, op), M=M, K=K, N=N, naive=naive))
                return False
        if not shared_memory and c.shared:
            print(_("Right answer, but {kernel} declares shared memory ({names}) and this exercise asks for none: take "
                    "each value of A and B from global memory where the multiply-add uses it.").format(
                        kernel=c.kernel, names=", ".join(c.shared)))
            return False
    return True


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


def _same(kernel, A, B, tile, C, what, count=None):
    """True when C is A @ B; else False, after printing where it differs and the first cause `diagnosis` finds."""
    spec = A.astype(np.float64) @ B.astype(np.float64)
    bad = ~np.isclose(C, spec, rtol=1e-4, atol=1e-4)
    if not bad.any():
        return True
    i, j = (int(v) for v in np.argwhere(bad)[0])
    rows, cols = slice(max(i - 1, 0), i + 2), slice(max(j - 1, 0), j + 2)
    unwritten = int(np.isnan(C).sum())
    wrong = _("Wrong result for {what}: {bad} of {size} elements differ ({unwritten} NaN: never written, or computed "
              "from a value that was).") \
        if unwritten else _("Wrong result for {what}: {bad} of {size} elements differ.")
    print(wrong.format(what=what, bad=int(bad.sum()), size=C.size, unwritten=unwritten))
    print(_("First difference at C[{i}, {j}]: yours {yours:.4g}, numpy {numpy:.4g}. Around it (rows {top}–{bottom}, "
            "columns {left}–{right}):").format(i=i, j=j, yours=C[i, j], numpy=spec[i, j], top=rows.start,
                                               bottom=min(rows.stop, C.shape[0]) - 1, left=cols.start,
                                               right=min(cols.stop, C.shape[1]) - 1))
    if digits := diagnosis.alike(C[i, j], spec[i, j], i, j):
        print(digits)
    for name, block in ((_("Yours:"), C[rows, cols]), (_("numpy:"), spec[rows, cols])):
        indent = "\n" + " " * (width(name) + 1)  # continuation lines under the first number
        print(name, np.array2string(block, precision=3).replace("\n", indent))
    if count is None:
        with contextlib.redirect_stdout(io.StringIO()):  # no count, no cause from it: the check has said why it failed
            count = _counted(kernel, A, B, tile)
    step = count.constants.get("T", count.constants.get("BK", tile)) if count else tile
    cause = global_size(kernel, A, B, tile) or \
        (count and (diagnosis.never_stored(count, kernel, tile, i, j) or
                    diagnosis.read_before_stored(count, C, i, j) or diagnosis.stored_again(count, i, j))) or \
        diagnosis.half_precision(kernel, tile, A, B, C) or \
        diagnosis.first_wrong_step(kernel, A, B, tile, step) or diagnosis.wrong_operand(kernel, A, B, tile)
    if cause:
        print(cause)
    return False


def _is_number(p):
    """A finite real number, numpy's and fractions included (np.int64(2048)); not a bool, not NaN."""
    return isinstance(p, numbers.Real) and not isinstance(p, (bool, np.bool_)) and math.isfinite(p)


def _shown(value):
    """A number as predict() writes it: thousands separated where it is an int or a float."""
    return f"{value:,}" if isinstance(value, (int, float, np.integer, np.floating)) else str(value)


@recorded
def predict(prediction, measured, rtol=0.0):
    """Compare a prediction (a number, or a tuple item by item) with a measurement, shown only once it is right so
    that an unanswered exercise's output gives nothing away. True/False, or None while `prediction` is None."""
    if prediction is None:
        print(_("Write your prediction in `prediction`, then run this cell again: it measures and compares."))
        return None
    want = len(measured) if isinstance(measured, (tuple, list)) else 1
    given = prediction if isinstance(prediction, (tuple, list)) else (prediction,)
    if len(given) != want or not all(_is_number(p) for p in given):
        print(_("Give a number, not {given}.").format(given=repr(prediction)) if want == 1 else
              _("Give {want} numbers, as a tuple in the order the question asks for, not {given}.")
              .format(want=want, given=repr(prediction)))
        return False
    pairs = list(zip(given, measured if want > 1 else (measured,)))
    verdicts = [abs(p - m) <= rtol * abs(m) for p, m in pairs]
    if all(verdicts):
        print(_("Right: measured {values}.").format(values=", ".join(_shown(m) for _p, m in pairs)))
        return True
    for k, ((p, m), ok) in enumerate(zip(pairs, verdicts)):
        where = _("number {k}: ").format(k=k + 1) if len(pairs) > 1 else ""
        verdict = _("{value} is right.") if ok else \
            _("not yet: {value} is too high.") if p > m else _("not yet: {value} is too low.")
        print(where + verdict.format(value=_shown(p)))
    print(_("Think it through again, then re-run the cell."))
    return False
