"""Run a kernel with counting switched on and return what it fetched, from where, and how often."""
import ast
import difflib
import dis
import linecache
import multiprocessing
import os
import re
from collections import namedtuple
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from unittest import mock

import numpy as np

from ..backend import SIMULATOR
from ..core.contract import is_call, unbuildable_vote
from ..core.launch import Launch, bind
from ..i18n import _
from .buffers import EXAMPLE_FIELDS, HAZARDS, LINES, OPERANDS, OUTSIDE_FIELDS, SHARED_TRACE_FIELDS, STAMP, as_records
from .recorded import SecondCount
from .rewrite import instrumented


class LaunchFailed(ValueError):
    """The counted kernel read or stored outside an array, or failed: what, where, by which thread."""


class Hazard(namedtuple("Hazard", "kind array element block thread other line other_line code other_code across_loop "
                        "stores_no_C", defaults=(False, False))):
    """`thread` met `other` ((ty, tx) in `block`, (by, bx)) at `element` (i, j) of `array`, on their lines and code;
    `across_loop`: a barrier stands between the lines; `stores_no_C`: `thread` stored no element of C. A divergent
    barrier's `element` is how often each reached it."""
    __slots__ = ()


class Hazards(dict):
    """Hazards by kind (buffers.HAZARDS), with one example of each kind seen in `examples`."""

    def __init__(self, counts, examples=None):
        super().__init__(counts)
        self.examples = examples or {}


@dataclass
class LoadCount:
    """Measured memory traffic of one launch. Maps are indexed like the matrices they describe."""
    kernel: str
    shape: tuple          # (M, K, N)
    tile: int             # T of the lesson's kernels; None for kernels with other constants
    maps: dict            # "A", "B", "C" (by argument position) → how often each element was read
    thread_loads: np.ndarray   # global loads made by each thread, indexed [row, col] of the thread grid
    shared_reads: np.ndarray   # shared-memory reads made by each thread
    shared_stores: np.ndarray  # shared-memory writes made by each thread
    hazards: dict         # Hazards seen in shared memory and at barriers (0 everywhere for a correct kernel)
    C: np.ndarray         # the product the counted launch computed
    trace: np.recarray = None  # one record per global load (fields: buffers.TRACE_FIELDS), when asked for
    shared_trace: np.recarray = None  # one record per shared access (buffers.SHARED_TRACE_FIELDS), likewise
    shared: dict = None   # the kernel's shared arrays {name: shape}, in the order shared_trace.array numbers them
    constants: dict = None  # every compile-time constant of the counted build ({"T": 4}, {"BM": 64, ...})
    C_stores: np.ndarray = None  # stores into each element of C
    C_atomics: np.ndarray = None  # ... of which cuda.atomic.add, each by any thread
    C_races: list = None  # elements of C stored by two threads: (i, j, lowest, highest writer), (by, bx, ty, tx)
    unused_shared: tuple = ()  # shared arrays declared but never read nor stored in this launch
    barriers: int = 0     # the most barriers one thread passed
    local: dict = None    # the kernel's cuda.local.array declarations {name: line}
    idle_loads: int = None  # global loads by threads that stored no element of C (None: C's writers cannot tell)

    A = property(lambda self: int(self.maps["A"].sum()))  # global loads of A, in all
    B = property(lambda self: int(self.maps["B"].sum()))
    total = property(lambda self: self.A + self.B)
    shared_names = property(lambda self: tuple(self.shared or ()))


def trace_room(launch):
    """Records the traces need room for, sized from the part of C the grid covers and K padded by a block tile:
    edge blocks also store and read the padding's zeros, and a register-tiled kernel may read clamped rows again."""
    rows, cols = launch.block
    M, N = launch.blockspergrid[1] * rows, launch.blockspergrid[0] * cols
    K = launch.shape[1] + max(rows, cols)  # at least K rounded up to any step ≤ the tile
    return 2 * M * N * K + 2 * K * (M + N) + M * N


def count_loads(kernel, A, B, tile=None, trace=False, **constants):
    """Launch `kernel` (a name or a @cuda.jit(A, B, C) function) with counting on, at `tile` or named constants
    (BM=32); trace=True records every access with its thread. On the simulator a count the second count (`recorded`)
    contradicts is a RuntimeError; an access outside its array or an error is a LaunchFailed naming the line."""
    if isinstance(kernel, (np.ndarray, list)):  # matmul's order, A and B first
        raise ValueError(_("count_loads takes the kernel first: count_loads('tiled', A, B, tile=4)"))
    A, B, bound = bind(kernel, A, B, tile, **constants)
    counting = instrumented(bound)
    launch = Launch.of(bound, A, B, counting.kernel)
    capacity = trace_room(launch) if trace else 0
    buffers = counting.buffers
    arrays = buffers.allocate(launch, capacity)
    second = SecondCount(launch) if SIMULATOR else None  # on a GPU only the rewrite counts
    failure = None
    with second.armed() if second else nullcontext():
        try:
            launch(*arrays)
        except Exception as error:  # noqa: BLE001  the kernel's own error: said below with its line
            failure = error
    got = buffers.read(arrays)
    _refuse_endless(got["spun"], counting)
    _refuse_failure(dict(zip(OUTSIDE_FIELDS, map(int, got["examples"][-1]))), failure, launch, counting)
    if second:
        second.compare(got, launch.name)
    made, shared_made = int(got["trace_pos"][0]), int(got["shared_trace_pos"][0])
    if trace and (made > capacity or shared_made > 2 * capacity):
        raise ValueError(_("the kernel made {loads:,} global loads and {shared:,} shared accesses, more "
                           "than the trace holds: trace a smaller product").format(loads=made, shared=shared_made))
    return LoadCount(
        kernel=launch.name, shape=launch.shape, tile=launch.tile, maps={op: got[f"count_{op}"] for op in OPERANDS},
        thread_loads=got["thread_loads"], shared_reads=got["shared_reads"], shared_stores=got["shared_stores"],
        hazards=_hazards(got, launch, counting), C=np.asarray(launch.result()),
        trace=as_records(got["trace"][:made]) if trace else None,
        shared_trace=as_records(got["shared_trace"][:shared_made], SHARED_TRACE_FIELDS) if trace else None,
        shared=dict(buffers.shared), constants=dict(launch.constants),
        C_stores=got["C_stores"], C_atomics=got["C_atomics"],
        C_races=races(got["C_lowest_writer"], got["C_writer"], launch), idle_loads=_idle_loads(got, launch),
        unused_shared=tuple(name for name in buffers.shared if (got[f"wrote_{name}"][..., 0] < 0).all() and
                            (got[f"read_{name}"][..., 0] < 0).all()),
        barriers=int(got["arrivals"][..., :len(buffers.barriers)].sum(axis=2).max()),
        local={n.targets[0].id: n.lineno for n in ast.walk(bound.code.tree) if isinstance(n, ast.Assign) and
               is_call(n.value, "cuda.local.array") and isinstance(n.targets[0], ast.Name)})


def count_on_simulator(kernel, A, B, tile=None, **constants):
    """count_loads of a registry kernel, run by the CUDA simulator: here, or on a GPU in a child Python with the
    simulator on. The same count (checked twice there) without the GPU's counting build (minutes for some rungs)."""
    if SIMULATOR:
        return count_loads(kernel, A, B, tile, **constants)
    child_env = {"NUMBA_ENABLE_CUDASIM": "1", "TILEDLAB_BACKEND": "simulator"}  # read as the child imports numba
    with mock.patch.dict(os.environ, child_env), \
            ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as child:
        return child.submit(count_loads, kernel, A, B, tile, **constants).result()


def _thread(launch, me):
    return divmod(int(me) - 1, launch.threadsperblock[0])  # (ty, tx) of a thread's index in its block + 1


def races(lowest, highest, launch):
    """(i, j, lowest, highest) of each element of C stored by several threads: its writers by block, then thread."""
    def thread(stamp):
        block, me = divmod(int(stamp), STAMP)
        return divmod(block, launch.blockspergrid[0]) + _thread(launch, me)  # (by, bx, ty, tx)
    return [(int(i), int(j), thread(lowest[i, j]), thread(highest[i, j])) for i, j in np.argwhere(lowest < highest)]


def _code(counting, line):
    return linecache.getline(counting.filename, line).strip() if line else None


def _hazards(got, launch, counting):
    """The launch's Hazards: the rewrite's counts and examples, and the barriers a block's threads reached unalike."""
    names = list(counting.buffers.shared)
    examples = {}
    for kind, row in zip(HAZARDS, got["examples"]):
        h = dict(zip(EXAMPLE_FIELDS, map(int, row)))
        if h["claimed"]:
            line, other_line = divmod(h["lines"], LINES)
            first, last = sorted((line, other_line or line))
            examples[kind] = Hazard(kind, names[h["array"]], (h["i"], h["j"]), (h["by"], h["bx"]), (h["ty"], h["tx"]),
                                    _thread(launch, h["other"]), line, other_line or None, _code(counting, line),
                                    _code(counting, other_line),
                                    any(first < b < last for b in counting.buffers.barriers))
    if "unstored_read" in examples:  # what a thread that stores no element of C reads is thrown away
        h = examples["unstored_read"]
        examples["unstored_read"] = h._replace(stores_no_C=_stores_no_C(got, launch, *h.block, *h.thread))
    counts = dict(zip(HAZARDS, map(int, got["hazards"])))
    arrivals = got["arrivals"][..., :len(counting.buffers.barriers)]
    uneven = arrivals.max(axis=1) != arrivals.min(axis=1)  # [block, site]: its threads reached it unalike
    counts["divergent_barrier"] = int(uneven.any(axis=1).sum())
    if uneven.any():
        examples["divergent_barrier"] = _divergent_hazard(arrivals, *map(int, np.argwhere(uneven)[0]), launch, counting)
    return Hazards(counts, examples)


def _idle_loads(got, launch):
    """Global loads by the threads that stored no element of C, as C's writers tell it whole (else None)."""
    highest, lowest, loads = got["C_writer"], got["C_lowest_writer"], got["thread_loads"]
    if got["C_atomics"].any() or (lowest < highest).any():
        return None
    (bdx, bdy, *_), rows, cols = launch.threadsperblock, *np.indices(loads.shape)
    stamps = ((rows // bdy) * launch.blockspergrid[0] + cols // bdx) * STAMP + (rows % bdy) * bdx + cols % bdx + 1
    return int(loads[~np.isin(stamps, highest)].sum())


def _stores_no_C(got, launch, by, bx, ty, tx):
    """True where thread (ty, tx) of block (by, bx) stored no element of C while others did, as C's writers tell it
    whole: no element stored by two threads, none added into."""
    highest, lowest = got["C_writer"], got["C_lowest_writer"]
    if got["C_atomics"].any() or (lowest < highest).any() or (highest < 0).all():
        return False
    stamp = (by * launch.blockspergrid[0] + bx) * STAMP + ty * launch.threadsperblock[0] + tx + 1
    return not (highest == stamp).any()


def _divergent_hazard(arrivals, b, site, launch, counting):
    """The divergent-barrier Hazard of block `b` at barrier `site`: a thread that reached it more often than
    another, and where that other waited instead (a barrier it reached more often), if anywhere."""
    reached = arrivals[b]  # [thread, site]
    thread, other = int(reached[:, site].argmax()), int(reached[:, site].argmin())
    elsewhere = np.flatnonzero(reached[other] > reached[thread])
    line = counting.buffers.barriers[site]
    other_line = counting.buffers.barriers[elsewhere[0]] if len(elsewhere) else None
    by, bx = divmod(b, launch.blockspergrid[0])
    times = (int(reached[thread, site]), int(reached[other, site]))  # the element field: how often each reached it
    return Hazard("divergent_barrier", None, times, (by, bx), _thread(launch, thread + 1), _thread(launch, other + 1),
                  line, other_line, _code(counting, line), _code(counting, other_line))


def _refuse_endless(spun, counting):
    """A LaunchFailed naming the loop a thread went round more often than the rewrite's limits allow (a while loop)
    or would have (a range too long), if one did: it was left there, so the count is of another program."""
    line, by, bx, ty, tx, most, length = map(int, spun)
    place = dict(line=line, code=repr(_code(counting, line)), ty=ty, tx=tx, by=by, bx=bx, most=most, length=length)
    if line and length == -2:
        raise LaunchFailed(_("line {line}: {code}: thread (ty={ty}, tx={tx}) of block (by={by}, bx={bx}) went round "
                             "this loop and the loops inside it more than {most:,} times in all without leaving it: "
                             "more than the product's multiply-adds (M × N × K), the elements of A, B, C and the "
                             "shared arrays, and 256 add up to, which tiledlab takes for a loop that never ends. Make "
                             "each pass of this loop step it towards its end (e.g. k += 1)").format(**place)
                          + _past_its_end(_code(counting, line)))
    if line and length < 0:
        raise LaunchFailed(_("line {line}: {code}: thread (ty={ty}, tx={tx}) of block (by={by}, bx={bx}) went "
                             "round this loop more than {most:,} times without leaving it: more than the product's "
                             "multiply-adds (M × N × K), the elements of A, B, C and the shared arrays, and 256 add up "
                             "to, which tiledlab takes for a wrong bound (its count would not finish). Check what the "
                             "loop goes over, and where it leaves").format(**place))
    if line and length:
        raise LaunchFailed(_("line {line}: {code}: thread (ty={ty}, tx={tx}) of block (by={by}, bx={bx}) would go "
                             "round this loop {length:,} times: more than the {most:,} passes that the product's "
                             "multiply-adds (M × N × K), the elements of A, B, C and the shared arrays, and 256 add "
                             "up to, "
                             "which tiledlab takes for a wrong bound (its count would not finish). Check what the "
                             "range counts: a tile loop goes round once per tile of K, a loop over k once per column "
                             "of A").format(**place))
    if line:
        raise LaunchFailed(_("line {line}: {code}: thread (ty={ty}, tx={tx}) of block (by={by}, bx={bx}) went round "
                             "this loop more than {most:,} times without leaving it: more passes than A, B, C and the "
                             "shared arrays have elements, which tiledlab takes for a loop that never ends. Make each "
                             "pass step the loop towards its end (e.g. k += 1); a loop that needs so many passes can "
                             "be a for loop over range(...), which may go round as often as the product has "
                             "multiply-adds").format(**place) + _past_its_end(_code(counting, line)))


def _past_its_end(code):
    """What a loop whose test is `!=` may do that the message above does not say: step over its end."""
    try:
        test = ast.parse(code.strip() + "\n    pass").body[0]
    except SyntaxError:  # a loop's first line that is not all of its header
        return ""
    tests = [op for n in ast.walk(test.test) if isinstance(n, ast.Compare) for op in n.ops] \
        if isinstance(test, ast.While) else []
    if not any(isinstance(op, ast.NotEq) for op in tests):
        return ""
    return _(". Its test is !=: a loop that steps by more than 1 (k0 += T) can step over its end where T does not "
             "divide it; compare with < instead")


def _refuse_failure(f, failure, launch, counting):
    """A LaunchFailed naming the line of the first access outside its array (`f`) or of the kernel's `failure`."""
    if f["claimed"]:
        name = [*counting.params, *counting.buffers.shared][f["what"]]
        rows, cols = (launch.A, launch.B, launch.C)[f["what"]].shape if f["what"] < 3 else counting.buffers.shared[name]
        verb, access = (_("stores"), _("store")) if f["store"] else (_("reads"), _("read"))
        raise LaunchFailed(_("line {line}: {code}: thread (ty={ty}, tx={tx}) of block (by={by}, bx={bx}) {verb} "
                             "{name}[{i}, {j}], outside {name} ({rows}×{cols}: rows 0–{last_row}, columns "
                             "0–{last_col}). Guard this {access}: make it only where its row and column lie inside "
                             "{name}.").format(**f, code=repr(_code(counting, f["line"])), name=name, verb=verb,
                                               access=access, rows=rows, cols=cols, last_row=rows - 1,
                                               last_col=cols - 1)) from None
    if failure is None:
        return
    # the kernel's own line (on the simulator; on a GPU, numba's message names it)
    line = failed_line(failure, counting.filename) or compiled_line(failure, counting.filename) \
        or (float_index_line(launch.bound.code.tree) if _FLOAT_INDEX in str(failure) else None) \
        or named_line(launch.bound.code.tree, str(failure))
    if line is None:
        raise failure
    raise LaunchFailed(_("line {line}: {code}: the kernel failed here: {error}").format(
        line=line, code=repr(_code(counting, line)), error=said(failure, _code(counting, line)))) from None


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_THREAD = re.compile(r"tid=\[[^\]]*\] ctaid=\[[^\]]*\]:? ?")  # the simulator's words for the thread that failed
_UNSET = re.compile(r"(?:local variable|Variable) '(\w+)' (?:referenced|where|is not defined)")  # Python's, numba's
_UNDEFINED = re.compile(r"\bname '(\w+)' is not defined")
_NO_ATTRIBUTE = re.compile(r"has no attribute '(\w+)'|Unknown attribute '(\w+)'")  # the simulator's, a GPU's
_ATTRIBUTES = {"cuda": ("threadIdx", "blockIdx", "blockDim", "gridDim", "grid", "gridsize", "shared", "local",
                        "const", "atomic", "syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or",
                        "threadfence", "threadfence_block", "laneid", "warpsize"),
               "shared": ("array",), "local": ("array",), "const": ("array_like",),
               "atomic": ("add", "sub", "max", "min", "exch", "cas"),
               **dict.fromkeys(("threadIdx", "blockIdx", "blockDim", "gridDim"), ("x", "y", "z"))}


def failed_line(error, filename):
    """The line of `filename` where `error` was raised, in its innermost frame there, or None. CPython 3.11 runs some
    pairs of instructions as one (STORE_FAST k, LOAD_FAST acc) and names the first one's line when the second finds
    its local unset: that local's read is then found just after."""
    tb, found = error.__traceback__, None
    while tb is not None:
        found = tb if tb.tb_frame.f_code.co_filename == filename else found
        tb = tb.tb_next
    if found is None:
        return None
    unset = _UNSET.search(str(error))
    later = [i for i in dis.get_instructions(found.tb_frame.f_code) if i.offset >= found.tb_lasti][:2] if unset else []
    read = next((i for i in later if i.opname.startswith("LOAD_FAST") and i.argval == unset[1]), None)
    return read.positions.lineno if read and read.positions.lineno else found.tb_lineno


def compiled_line(error, filename):
    """The line of `filename` a numba compile error names ('File "…", line 12:' or 'at … (12)'), or None."""
    text, name = _ANSI.sub("", str(error)), os.path.basename(filename)
    named = re.findall(r'File "([^"]+)", line (\d+)', text) + re.findall(r"at (\S+) \((\d+)\)", text)
    found = [int(n) for where, n in named if os.path.basename(where) == name]
    return found[-1] if found else None


_VOTE = re.compile(r">>> (syncthreads_\w+)\((\w+)\)")  # numba's words (and the simulator's) for a vote of a non-number
_FLOAT_INDEX = "Unsupported array index type float"  # numba's words, on a GPU, for an index that is a float


def named_line(tree, error):
    """The first line of a kernel's def `tree` naming what a GPU's compiler refused in `error` where its message names
    no line of the kernel's: a vote, a name never defined, an unknown attribute (cuda.threadidx); else None."""
    text = _ANSI.sub("", error)
    if vote := _VOTE.search(text):
        found = (n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func).split(".")[-1] == vote[1])
    elif undefined := _UNDEFINED.search(text):
        found = (n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == undefined[1])
    elif missing := _NO_ATTRIBUTE.search(text):
        found = (n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == (missing[1] or missing[2]))
    else:
        return None
    return min((n.lineno for n in found), default=None)


def float_index_line(tree):
    """The first line of a kernel's def `tree` that indexes an array with what is a float as written: a `/` or a
    float literal in the index, or a name assigned from one (a GPU's compiler names no line for it); None if none."""
    floats = set()

    def is_float(e):  # int(...), round(...) and the like make a float whole again: not looked into
        if isinstance(e, ast.Call) and isinstance(e.func, (ast.Name, ast.Attribute)) and \
                ast.unparse(e.func).split(".")[-1] in ("int", "round", "floor", "ceil", "trunc"):
            return False
        return isinstance(e, ast.BinOp) and isinstance(e.op, ast.Div) or isinstance(e, ast.Name) and e.id in floats \
            or isinstance(e, ast.Constant) and isinstance(e.value, float) or any(map(is_float, ast.iter_child_nodes(e)))
    assigned = [n for n in ast.walk(tree) if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)]
    while grown := {n.targets[0].id for n in assigned if is_float(n.value)} - floats:  # and names assigned from those
        floats |= grown
    return min((n.lineno for n in ast.walk(tree) if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Tuple)
                and is_float(n.slice)), default=None)


def divided_index(code):
    """The index that divides with / in a kernel's line `code`, as written (k * 2 / 2 in A[row, k * 2 / 2]); None if
    none. A line that does not parse alone (an elif ...:) is searched for a / between two words instead."""
    try:
        tree = ast.parse(code + " pass" if code.endswith(":") else code)
    except SyntaxError:
        found = re.search(r"\w+\s*/\s*\w+", code)
        return found and found[0]

    def divides(e):  # a / of its own, not of an array's index within it nor in a call (int(k / 2) is whole)
        return not isinstance(e, (ast.Subscript, ast.Call)) and (isinstance(e, ast.BinOp) and isinstance(e.op, ast.Div)
                                                                 or any(map(divides, ast.iter_child_nodes(e))))
    indices = [i for n in ast.walk(tree) if isinstance(n, ast.Subscript)
               for i in (n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice])]
    return next((ast.unparse(i) for i in reversed(indices) if divides(i)), None)


def said(error, code):
    """An error of a kernel in words, alike on the simulator and a GPU's compiler: a float index as such (an
    IndexError, or numba's 'Unsupported array index type float64'); else its first line, without colours and paths."""
    text = _ANSI.sub("", str(error))
    if _FLOAT_INDEX in text or isinstance(error, IndexError) and "only integers" in text:
        divided = divided_index(code or "")
        return _("an index is not a whole number{example}: index with whole numbers, and divide with // (whole) "
                 "where an index is divided").format(
            example=_(" ({expression} is a float)").format(expression=divided) if divided else "")
    if isinstance(error, OverflowError):
        return _("a whole number here does not fit in 64 bits (on a GPU it would wrap around and go wrong without a "
                 "word): keep loop bounds and indices within the arrays' sizes")
    if vote := _VOTE.search(text):
        return unbuildable_vote(f"cuda.{vote[1]}", vote[2])
    if unset := _UNSET.search(text):  # an UnboundLocalError here, numba's NotDefinedError on a GPU
        return _("{name} is read here before it is given a value: give it one first (an accumulator starts as "
                 "acc = float32(0.0), before its loop)").format(name=unset[1])
    if undefined := _UNDEFINED.search(text):
        return _("nothing named {name} is defined for the kernel: check its spelling, or define it (a constant as a "
                 "global, before the kernel)").format(name=undefined[1])
    if (missing := _NO_ATTRIBUTE.search(text)) and (attribute := no_attribute(missing[1] or missing[2], code)):
        return attribute
    first = next((_THREAD.sub("", l.strip()) for l in text.splitlines() if l.strip() and not l.startswith("Failed in")),
                 type(error).__name__)
    return f"{type(error).__name__}: {re.sub(r'(/[^ :]+)+/', '', first)}"


def no_attribute(name, code):
    """`owner.name` of the kernel's line `code` said as missing, with the name meant where CUDA has one close to it
    (cuda has no threadidx (did you mean threadIdx?)); None when `code` holds no `.name`."""
    owner = re.search(rf"([\w.]+)\.{name}\b", code or "")
    if owner is None:
        return None
    known = _ATTRIBUTES.get(owner[1].split(".")[-1], ()) if owner[1].startswith("cuda") else ()
    meant = [n for n in known if n.lower() == name.lower()] or difflib.get_close_matches(name, known, 1)
    return _("{owner} has no {name}").format(owner=owner[1], name=name) + \
        (_(" (did you mean {name}?)").format(name=meant[0]) if meant else "")
