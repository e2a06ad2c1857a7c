"""Rewrite a kernel so that it tallies its own memory traffic while it computes the same result.

Each read `X[i, j]` of an argument becomes `_tl_gload(...)`, which counts one load (per element, per thread, optionally
traced) and returns `X[i, j]`; a store into C keeps its highest and lowest thread (two in a race); `X[i, j] += v` is a
load and a store, its index evaluated once. Shared accesses are checked for hazards: two threads touching one element
between the same two barriers, one of them writing, or a cp_async4 copy touched before its thread's cp_async_wait
covered it (the simulator's copies land at once: only this shows it). An access outside its array is skipped, the
first one kept for the message. What the rewrite cannot follow is refused (`countable`), never skipped."""
import ast
import copy
import inspect
from dataclasses import dataclass

from numba import cuda  # noqa: F401  (the helpers run in the kernel's namespace; named here for readers)

from ..core import build, ptx
from ..core.contract import breaks, dynamic_bytes, is_call, refused
from ..core.launch import resolve
from .buffers import LINES as _LINES, LOWEST as _LOWEST, OPERANDS, STAMP as _STAMP, CountingBuffers  # helpers' names
from .countable import check_countable, is_atomic_add, is_barrier, ptx_call, unguarded
from ..i18n import _

# Run at the top of the rewritten kernel: how many barriers this thread has passed, where it is.
_PROLOGUE = ("_tl_epoch = 0", "_tl_x, _tl_y = cuda.grid(2)",
             "_tl_b = cuda.blockIdx.x + cuda.gridDim.x * cuda.blockIdx.y",
             "_tl_me = cuda.threadIdx.x + cuda.blockDim.x * cuda.threadIdx.y + 1")


# The helpers below run in the kernel's own namespace (core.build's `helpers`).

def _tl_row(table, p, what, i, j):
    # The fields every table's row starts with (buffers.py): the array accessed, the element, the thread.
    table[p, 0] = what
    table[p, 1] = i
    table[p, 2] = j
    table[p, 3] = cuda.blockIdx.y
    table[p, 4] = cuda.blockIdx.x
    table[p, 5] = cuda.threadIdx.y
    table[p, 6] = cuda.threadIdx.x


def _tl_slot(trace, trace_pos):
    # The next row of a trace, or -1 when there is no trace or no room left in it.
    if trace.shape[0] == 0:
        return -1
    p = cuda.atomic.add(trace_pos, 0, 1)
    return p if p < trace.shape[0] else -1


def _tl_shared_record(strace, strace_pos, array, i, j, epoch, store):
    p = _tl_slot(strace, strace_pos)
    if p >= 0:
        _tl_row(strace, p, array, i, j)
        strace[p, 7] = epoch
        strace[p, 8] = store


def _tl_inside(arr, i, j, width, what, store, line, examples):
    # Whether arr[i, j .. j + width - 1] lies inside arr; the launch's first access outside is kept (OUTSIDE_FIELDS).
    if 0 <= i and i < arr.shape[0] and 0 <= j and j + width <= arr.shape[1]:
        return True
    last = examples.shape[0] - 1
    if cuda.atomic.add(examples, (last, 9), 1) == 0:
        _tl_row(examples, last, what, i, j)
        examples[last, 7] = store
        examples[last, 8] = line
    return False


def _tl_gcount(operand, counts, thread_loads, trace, trace_pos, x, y, epoch, i, j):
    seq = thread_loads[y, x]
    thread_loads[y, x] = seq + 1  # each thread owns its slot: no atomic needed
    cuda.atomic.add(counts, (i, j), 1)
    p = _tl_slot(trace, trace_pos)
    if p >= 0:  # a row of the global-load trace (buffers.TRACE_FIELDS)
        _tl_row(trace, p, operand, i, j)
        trace[p, 7] = seq
        trace[p, 8] = epoch


def _tl_gload(arr, operand, counts, thread_loads, trace, trace_pos, x, y, epoch, line, examples, i, j):
    if not _tl_inside(arr, i, j, 1, operand, 0, line, examples):
        return arr[0, 0]
    _tl_gcount(operand, counts, thread_loads, trace, trace_pos, x, y, epoch, i, j)
    return arr[i, j]


def _tl_ldg4(arr, operand, counts, thread_loads, trace, trace_pos, x, y, epoch, line, examples, i, j):
    if not _tl_inside(arr, i, j, 4, operand, 0, line, examples):
        v = arr[0, 0]
        return v, v, v, v
    for q in range(4):  # one 128-bit load: four elements, four loads counted
        _tl_gcount(operand, counts, thread_loads, trace, trace_pos, x, y, epoch, i, j + q)
    return _tl_ptx_ldg4(arr, i, j)


def _tl_gstore(arr, stores, highest, lowest, mine, line, examples, i, j, value):
    if not _tl_inside(arr, i, j, 1, 2, 1, line, examples):
        return
    cuda.atomic.add(stores, (i, j), 1)
    cuda.atomic.max(highest, (i, j), mine)  # the highest and lowest thread to store it: two in a race, in any order
    cuda.atomic.min(lowest, (i, j), mine)
    arr[i, j] = value


def _tl_gatomic(arr, stores, atomics, counts, line, examples, i, j, value):
    # cuda.atomic.add(C, (i, j), value): a load and a store of C; threads adding into one element do not race.
    if _tl_inside(arr, i, j, 1, 2, 1, line, examples):
        cuda.atomic.add(counts, (i, j), 1)
        cuda.atomic.add(stores, (i, j), 1)
        cuda.atomic.add(atomics, (i, j), 1)
        cuda.atomic.add(arr, (i, j), value)


def _tl_arrive(arrivals, b, me, site):
    # Thread `me` (its index in the block + 1) reached barrier `site` once more.
    arrivals[b, me - 1, site] += 1


def _tl_other(high, low, mine):
    # Another thread (its index in the block + 1) that the stamps (highest, lowest counted downwards) show in
    # this epoch, the lowest unless that is this one; 0 for none.
    if high // _STAMP != mine // _STAMP:
        return 0
    if low // _STAMP == mine // _STAMP and _STAMP - low % _STAMP != mine % _STAMP:
        return _STAMP - low % _STAMP
    if high != mine:
        return high % _STAMP
    return 0


def _tl_touch(table, b, i, j, mine, line):
    # Who touched an element this epoch, as two atomic maxima (the highest thread, the lowest counted downwards;
    # a later epoch ranks higher, so neither needs clearing) and the latest line. Returns another thread that had
    # touched it (0: none): of n threads touching one element, exactly n - 1 see another, on any backend.
    high = cuda.atomic.max(table, (b, i, j, 0), mine)
    low = cuda.atomic.max(table, (b, i, j, 1), mine - mine % _STAMP + _STAMP - mine % _STAMP)
    table[b, i, j, 2] = line
    return _tl_other(high, low, mine)


def _tl_hazard(hazards, examples, kind, array, i, j, b, mine, other, line, other_line):
    # Count a hazard; its kind's example (buffers.EXAMPLE_FIELDS, with both lines) is the one of the lowest block,
    # epoch and pair of threads, whatever order they ran in: under a lock (column 10) one looks and writes at a time.
    cuda.atomic.add(hazards, kind, 1)
    me = mine % _STAMP  # the lower the block, epoch and pair, the higher the rank
    rank = _LOWEST - ((b << 30) + mine - me + min(me, other)) * _STAMP - max(me, other)
    if rank > examples[kind, 9]:  # a stale look is fine: the lock's holder looks again
        while cuda.atomic.cas(examples, (kind, 10), 0, 1) != 0:
            pass
        if cuda.atomic.max(examples, (kind, 9), rank) < rank:
            _tl_row(examples, kind, array, i, j)
            examples[kind, 7] = other
            examples[kind, 8] = line * _LINES + other_line
        cuda.threadfence()
        cuda.atomic.exch(examples, (kind, 10), 0)


def _tl_sload(s, shared_reads, wrote, read, hazards, strace, strace_pos, array, x, y, b, mine, line, examples, i, j):
    if not _tl_inside(s, i, j, 1, 3 + array, 0, line, examples):
        return s[0, 0]
    shared_reads[y, x] += 1
    _tl_shared_record(strace, strace_pos, array, i, j, mine // _STAMP, 0)
    high = wrote[b, i, j, 0]  # read once: on a GPU another thread's store may land between two reads
    if high < 0:  # no thread of this block has stored it: it holds no value
        _tl_hazard(hazards, examples, 5, array, i, j, b, mine, 0, line, 0)
    other = _tl_other(high, wrote[b, i, j, 1], mine)
    if other:  # read-after-write with no barrier between
        _tl_hazard(hazards, examples, 0, array, i, j, b, mine, other, line, wrote[b, i, j, 2])
    _tl_touch(read, b, i, j, mine, line)
    return s[i, j]


def _tl_scount(shared_stores, wrote, read, hazards, strace, strace_pos, array, x, y, b, mine, line, examples, i, j):
    shared_stores[y, x] += 1
    _tl_shared_record(strace, strace_pos, array, i, j, mine // _STAMP, 1)
    other = _tl_other(read[b, i, j, 0], read[b, i, j, 1], mine)
    if other:  # write-after-read: a neighbour may still need the old value
        _tl_hazard(hazards, examples, 1, array, i, j, b, mine, other, line, read[b, i, j, 2])
    before = wrote[b, i, j, 2]
    other = _tl_touch(wrote, b, i, j, mine, line)
    if other:  # write-after-write
        _tl_hazard(hazards, examples, 2, array, i, j, b, mine, other, line, before)


def _tl_sstore(s, shared_stores, wrote, read, hazards, strace, strace_pos, array, x, y, b, mine, line, examples, i, j,
               value):
    if _tl_inside(s, i, j, 1, 3 + array, 1, line, examples):
        _tl_scount(shared_stores, wrote, read, hazards, strace, strace_pos, array, x, y, b, mine, line, examples, i, j)
        s[i, j] = value


# Asynchronous copies. pending[b, i, j] = group * _STAMP + thread of the last copy into the element (-1:
# none); done[b, thread] = how many of that thread's groups have completed (its waits say so).

def _tl_in_flight(s, hazards, array, b, mine, line, examples, pending, done, i, j, store):
    # A hazard when the last copy into the element may still be in flight: its thread has not waited for it.
    if _tl_inside(s, i, j, 1, 3 + array, store, line, examples):
        p = pending[b, i, j]
        if p >= 0 and done[b, p % _STAMP] <= p // _STAMP:
            _tl_hazard(hazards, examples, 3, array, i, j, b, mine, p % _STAMP, line, 0)


def _tl_sload_async(s, shared_reads, wrote, read, hazards, strace, strace_pos, array, x, y, b, mine, line, examples,
                    pending, done, i, j):
    _tl_in_flight(s, hazards, array, b, mine, line, examples, pending, done, i, j, 0)
    return _tl_sload(s, shared_reads, wrote, read, hazards, strace, strace_pos, array, x, y, b, mine, line, examples,
                     i, j)


def _tl_sstore_async(s, shared_stores, wrote, read, hazards, strace, strace_pos, array, x, y, b, mine, line,
                     examples, pending, done, i, j, value):
    _tl_in_flight(s, hazards, array, b, mine, line, examples, pending, done, i, j, 1)
    _tl_sstore(s, shared_stores, wrote, read, hazards, strace, strace_pos, array, x, y, b, mine, line, examples, i, j,
               value)


def _tl_cp_async4(dst, di, dj, src, si, sj, operand, counts, thread_loads, trace, trace_pos, x, y, epoch, line,
                  examples, shared_stores, wrote, read, hazards, strace, strace_pos, array, b, mine, pending, done,
                  group):
    if not (_tl_inside(src, si, sj, 4, operand, 0, line, examples) and
            _tl_inside(dst, di, dj, 4, 3 + array, 1, line, examples)):
        return
    for q in range(4):  # four global loads and four shared stores, the stores pending until a wait
        _tl_gcount(operand, counts, thread_loads, trace, trace_pos, x, y, epoch, si, sj + q)
        _tl_in_flight(dst, hazards, array, b, mine, line, examples, pending, done, di, dj + q, 1)  # one in flight there
        _tl_scount(shared_stores, wrote, read, hazards, strace, strace_pos, array, x, y, b, mine, line, examples, di,
                   dj + q)
        pending[b, di, dj + q] = group * _STAMP + mine % _STAMP
    _tl_ptx_cp_async4(dst, di, dj, src, si, sj)


def _tl_spun_at(spun, line, most, length):
    # The first thread to go round a loop too often keeps its line, place, the limit and a range's length (the loop
    # is left after it).
    if cuda.atomic.cas(spun, 0, 0, line) == 0:
        spun[5] = most
        spun[6] = length
        spun[1] = cuda.blockIdx.y
        spun[2] = cuda.blockIdx.x
        spun[3] = cuda.threadIdx.y
        spun[4] = cuda.threadIdx.x


def _tl_async_wait(done, b, mine, groups, n):
    # cp.async.wait_group n: all but the n most recent committed groups of this thread have completed.
    if groups - n > done[b, mine % _STAMP]:
        done[b, mine % _STAMP] = groups - n


HELPERS = (_tl_row, _tl_slot, _tl_shared_record, _tl_inside, _tl_gcount, _tl_gload, _tl_gstore, _tl_gatomic,
           _tl_arrive, _tl_other, _tl_touch, _tl_hazard, _tl_sload, _tl_scount, _tl_sstore, _tl_spun_at)
ASYNC_HELPERS = (_tl_ldg4, _tl_in_flight, _tl_sload_async, _tl_sstore_async, _tl_cp_async4, _tl_async_wait)
HELPER_SOURCE = "\n\n".join(inspect.getsource(h) for h in HELPERS)  # read once, at import
ASYNC_HELPER_SOURCE = "\n\n".join(inspect.getsource(h) for h in ASYNC_HELPERS)
# The real instructions (on the simulator: their Python definitions), under names the kernel cannot shadow.
PTX_NAMESPACE = {"_tl_ptx_ldg4": ptx.ldg4, "_tl_ptx_cp_async4": ptx.cp_async4}


def _name(node):
    return node.value.id if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) else None


def _unplaced(tree):
    """`tree` without positions: compiled, it takes the student's line from the node around it, errors included."""
    for node in ast.walk(tree):
        for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if hasattr(node, attr):
                delattr(node, attr)
    return tree


def _call(source, *tail):
    """Parse a helper call and put real expressions in place of its last len(tail) arguments."""
    call = _unplaced(ast.parse(source, mode="eval").body)
    call.args[-len(tail):] = list(tail)
    return call


def _at(text, node):
    """The statement `text`, placed at `node`'s line."""
    return ast.copy_location(_unplaced(ast.parse(text).body[0]), node)


class _Rewrite(ast.NodeTransformer):
    """The rewrite (see the module's docstring); check_countable has refused every use of an array it cannot see."""

    def __init__(self, params, shared, namespace, targets=()):
        self.params, self.shared, self.namespace = params, shared, namespace
        self.inputs, self.output = params[:2], params[2]
        self.targets = targets  # shared arrays that cp_async4 copies into
        self.temporaries = 0  # indices of X[i, j] += v, evaluated once
        self.barriers = []  # the line of each barrier, in the order their sites are numbered
        self.loops = 0  # loops guarded: while loops, each with its count of passes, and long ranges
        self.unguarded = set()  # for loops over a range no longer than the arrays' sides (countable.unguarded)
        self.around = []  # the lines of the guarded loops around the node visited, outermost first

    def _global_args(self, name, line):
        k = self.params.index(name)
        return (f"{k}, _tl_count_{OPERANDS[k]}, _tl_thread_loads, _tl_trace, _tl_trace_pos, _tl_x, _tl_y, _tl_epoch, "
                f"{line}, _tl_examples")

    def _shared_call(self, name, reads, line):
        """The start of the call that loads or stores shared `name` (the _async helper where cp_async4 copies)."""
        copied = name in self.targets
        return (f"_tl_s{'load' if reads else 'store'}{'_async' * copied}({name}, "
                f"_tl_shared_{'reads' if reads else 'stores'}, _tl_wrote_{name}, _tl_read_{name}, _tl_hazards, "
                f"_tl_shared_trace, _tl_shared_trace_pos, {list(self.shared).index(name)}, _tl_x, _tl_y, _tl_b, "
                f"_tl_epoch * _STAMP + _tl_me, {line}, _tl_examples" + f", _tl_pending_{name}, _tl_async_done" * copied)

    def _load(self, name, i, j, line):
        if name in self.params:
            return _call(f"_tl_gload({name}, {self._global_args(name, line)}, i, j)", i, j)
        return _call(f"{self._shared_call(name, True, line)}, i, j)", i, j)

    def _store(self, name, i, j, value, line):
        if name == self.output:
            return self._global_store(name, i, j, value, line)
        return ast.Expr(_call(f"{self._shared_call(name, False, line)}, i, j, v)", i, j, value))

    def _global_store(self, name, i, j, value, line):
        return ast.Expr(_call(f"_tl_gstore({name}, _tl_C_stores, _tl_C_writer, _tl_C_lowest_writer, "
                              f"_tl_b * _STAMP + _tl_me, {line}, _tl_examples, i, j, v)", i, j, value))

    def visit_Subscript(self, node):
        self.generic_visit(node)
        name = _name(node)
        if not isinstance(node.ctx, ast.Load) or not (name in self.params or name in self.shared):
            return node
        i, j = node.slice.elts
        return ast.copy_location(self._load(name, i, j, node.lineno), node)

    def visit_Call(self, node):
        self.generic_visit(node)  # the index expressions' own loads
        name = ptx_call(node, self.namespace)
        if name == "ldg4":  # four global loads
            arr, i, j = node.args
            return ast.copy_location(_call(f"_tl_ldg4({arr.id}, {self._global_args(arr.id, node.lineno)}, i, j)",
                                           i, j), node)
        if name == "cp_async4":  # four global loads, four shared stores pending until a wait
            dst, di, dj, src, si, sj = node.args
            call = _unplaced(ast.parse(
                f"_tl_cp_async4({dst.id}, di, dj, {src.id}, si, sj, {self._global_args(src.id, node.lineno)}, "
                f"_tl_shared_stores, _tl_wrote_{dst.id}, _tl_read_{dst.id}, _tl_hazards, _tl_shared_trace, "
                f"_tl_shared_trace_pos, {list(self.shared).index(dst.id)}, _tl_b, "
                f"_tl_epoch * _STAMP + _tl_me, _tl_pending_{dst.id}, _tl_async_done, _tl_groups)", mode="eval").body)
            call.args[1:3], call.args[4:6] = [di, dj], [si, sj]
            return ast.copy_location(call, node)
        return node

    def visit_Assign(self, node):
        if is_call(node.value, "cuda.shared.array"):
            return node  # the declaration itself
        self.generic_visit(node)
        if is_barrier(node.value):  # n = cuda.syncthreads_count(p)
            return self._barrier(node)
        name = _name(node.targets[0])
        if not (name == self.output or name in self.shared):
            return node
        i, j = node.targets[0].slice.elts
        return ast.copy_location(self._store(name, i, j, node.value, node.lineno), node)

    def visit_AugAssign(self, node):
        name = _name(node.target)
        if not (name == self.output or name in self.shared):
            return self.generic_visit(node)
        first = []  # X[i, j] += v evaluates i and j once, before v: into temporaries, unless constants
        index = []
        for e in node.target.slice.elts:
            e = self.visit(e)
            if not isinstance(e, ast.Constant):
                self.temporaries += 1
                first.append(ast.copy_location(ast.Assign(targets=[ast.Name(f"_tl_i{self.temporaries}", ast.Store())],
                                                          value=e), node))
                e = ast.Name(f"_tl_i{self.temporaries}", ast.Load())
            index.append(e)
        value = ast.BinOp(left=self._load(name, *index, node.lineno), op=node.op, right=self.visit(node.value))
        return first + [ast.copy_location(self._store(name, *index, value, node.lineno), node)]  # a load and a store

    def visit_Expr(self, node):
        self.generic_visit(node)
        if is_atomic_add(node.value, self.output):  # check_countable made sure the index is (i, j)
            i, j = node.value.args[1].elts
            return ast.copy_location(ast.Expr(_call(
                f"_tl_gatomic({self.output}, _tl_C_stores, _tl_C_atomics, _tl_count_C, {node.lineno}, _tl_examples, "
                "i, j, v)", i, j, node.value.args[2])), node)
        name = ptx_call(node.value, self.namespace)
        if name == "cp_async_commit":
            return [node, _at("_tl_groups += 1", node)]
        if name == "cp_async_wait":
            wait = _call("_tl_async_wait(_tl_async_done, _tl_b, _tl_epoch * _STAMP + _tl_me, _tl_groups, n)",
                         node.value.args[0])
            return [node, ast.copy_location(ast.Expr(wait), node)]
        return self._barrier(node) if is_barrier(node.value) else node

    def visit_While(self, node):
        """The loop, left after more passes than A, B, C and the shared arrays have elements (`_tl_passes`), its
        line kept: a loop that never ends is said by its line on both backends, not waited for."""
        outer = self._inside(node, guarded=True)
        self.loops += 1
        passes = f"_tl_pass{self.loops}"
        node.body[:0] = [_at(f"{passes} += 1", node), _at(_leave(passes, "_tl_passes", node.lineno, 0), node),
                         *_spend(outer, node)]
        return [_at(f"{passes} = 0", node), node]

    def visit_For(self, node):
        """A loop that may run away (countable.unguarded): over a range(...) longer than `_tl_most` (the product's
        multiply-adds and the passes a while loop may make), left before its first pass; over anything else, or a
        range a break may leave early, left after `_tl_most` passes; its line kept either way."""
        outer = self._inside(node, guarded=node not in self.unguarded)
        if node in self.unguarded:
            node.body[:0] = _spend(outer, node)
            return node
        self.loops += 1
        passes, long = f"_tl_range{self.loops}", f"_tl_long{self.loops}"
        if not is_call(node.iter, "range") or breaks(node.body):
            node.body[:0] = [_at(f"{passes} += 1", node), _at(_leave(passes, "_tl_most", node.lineno, -1), node),
                             *_spend(outer, node)]
            return [_at(f"{passes} = 0", node), node]
        before = [f"{passes} = {ast.unparse(node.iter)}", f"{long} = len({passes}) > _tl_most",
                  f"if {long}:\n    _tl_spun_at(_tl_spun, {node.lineno}, _tl_most, len({passes}))"]
        node.iter = ast.Name(passes, ast.Load())
        node.body[:0] = [_at(f"if {long}:\n    break", node), *_spend(outer, node)]
        return [*(_at(line, node) for line in before), node]

    def _inside(self, node, guarded):
        """Rewrite the loop `node`'s body; the line of the outermost guarded loop around it or of itself (None for
        none): a thread's passes through loops inside a guarded one are counted in all (`_spend`)."""
        around = self.around
        self.around = [*around, node.lineno] if guarded else around
        self.generic_visit(node)
        self.around = around
        return self.around[0] if self.around else (node.lineno if guarded else None)

    def _barrier(self, node):
        """A barrier statement, with the arrival counted before it and a new epoch after it."""
        self.barriers.append(node.lineno)
        arrive = f"_tl_arrive(_tl_arrivals, _tl_b, _tl_me, {len(self.barriers) - 1})"
        return [_at(arrive, node), node, _at("_tl_epoch += 1", node)]


def _leave(passes, most, line, length):
    """Leave a loop gone round more than `most` times, first telling where; the thread's later passes end too."""
    return (f"if {passes} > {most}:\n    _tl_spun_at(_tl_spun, {line}, {most}, {length})\n    _tl_spent = _tl_most\n"
            "    break")


def _spend(outer, node):
    """A pass through a loop in a guarded one (`outer`, its line), counted: after `_tl_most` such passes in all (more
    than a thread ever needs) the loop is left and said by `outer`'s line, however the passes are nested."""
    if outer is None:
        return []
    leave = f"if _tl_spent > _tl_most:\n    _tl_spun_at(_tl_spun, {outer}, _tl_most, -2)\n    break"
    return [_at("_tl_spent += 1", node), _at(leave, node)]


def shared_arrays(declared):
    """{name: shape} of the shared tiles among a kernel's contract.shared_declarations (declarations and views)."""
    found = {}
    for node, shape, *_dtype_alignment in declared:
        if shape == (0,):
            continue  # dynamic shared memory: its tiles are the views
        if len(shape) != 2:
            raise refused(node, _("tiledlab counts 2-D shared arrays; declare the shape as (rows, cols)"))
        if node.targets[0].id in found:
            raise refused(node, _("a second shared array named {name}: give each its own name").format(
                name=node.targets[0].id))
        found[node.targets[0].id] = shape
    return found


def _rewrite(bound):
    """(rewritten FunctionDef, the code rewritten, the core.ptx functions it calls, its CountingBuffers) of a Build."""
    code = bound.kernel.checked_code(bound)
    func = copy.deepcopy(code.tree)  # the Build's tree is shared: the rewrite changes its own copy
    params = [a.arg for a in func.args.args]
    namespace = {**bound.kernel.namespace, **bound}
    shared = shared_arrays(bound.shared_declarations)  # found once per build, as the card's check found them
    check_countable(func, params[:2], params[2], shared, namespace, bound.shared_declarations)
    calls = [(name, node) for node in ast.walk(func) if (name := ptx_call(node, namespace))]
    names = {name for name, _ in calls}
    targets = tuple(dict.fromkeys(node.args[0].id for name, node in calls if name == "cp_async4"))  # copied into
    asynchronous = bool(names - {"ldg4", "shared_view"})  # it copies or waits
    rewrite = _Rewrite(params, shared, namespace, targets)
    rewrite.unguarded = unguarded(func, namespace, (*params, *shared))
    func = rewrite.visit(func)
    if asynchronous:
        func.body[:0] = [_at("_tl_groups = 0", func)]  # cp.async groups this thread has committed
    if rewrite.loops:  # more passes of one loop than elements in A, B, C and the shared arrays (and 256): too many
        tiles = sum(rows * cols for rows, cols in shared.values()) + 256
        func.body[:0] = [_at("_tl_passes = {}.size + {}.size + {}.size + {}".format(*params[:3], tiles), func),
                         _at("_tl_most = _tl_passes + {}.size * {}.shape[1]".format(*params[:2]), func),
                         _at("_tl_spent = 0", func)]
    return func, code, names, CountingBuffers(shared, targets, asynchronous, tuple(rewrite.barriers))


@dataclass(frozen=True)
class CountingBuild:
    """The compiled counting kernel, its extra arguments (`buffers`), its names for A, B, C and its file."""
    kernel: object
    buffers: CountingBuffers
    params: tuple
    filename: str


def instrumented(bound):
    """The CountingBuild of a Build, launch-bounded to (its threads per block, 1): the counting code needs many
    more registers, and capped like this (spilling if it must) even a 32×32 block still launches."""
    func, code, ptx_names, buffers = _rewrite(bound)
    func.body[:0] = [_at(statement, func) for statement in _PROLOGUE]  # an error there: the def's line
    func.args.args += [ast.arg(arg=a) for a in buffers.parameters]
    helpers = "\n\n".join([code.helpers] * bool(code.helpers) + [HELPER_SOURCE] +
                          [ASYNC_HELPER_SOURCE] * bool(ptx_names))
    namespace = {**bound.kernel.namespace, **bound, "_STAMP": _STAMP, "_LINES": _LINES, "_LOWEST": _LOWEST,
                 **(PTX_NAMESPACE if ptx_names else {})}
    threads = bound.threads
    compiled = build.from_tree(func, namespace, code.filename, ("instrumented", ast.dump(func), helpers,
                               tuple(sorted(bound.items())), bound.kernel.code.base,
                               bound.kernel.code.reads()), (threads[0] * threads[1], 1), helpers, called=True,
                               constants=bound)
    dynamic = dynamic_bytes(func, namespace)
    return CountingBuild(ptx.DynamicShared(compiled, dynamic) if dynamic else compiled, buffers,
                         tuple(a.arg for a in func.args.args[:3]), code.filename)


def instrumented_source(kernel, T=None, **constants):
    """The rewritten kernel as source: exactly what is counted (the lesson's kernels at T = 4 unless given)."""
    kernel = resolve(kernel)
    if T is None and "T" in kernel.constants:
        T = 4
    return ast.unparse(_rewrite(kernel.bind(constants, T))[0])
