"""Rewrite a kernel so that it tallies its own memory traffic while it computes the same result.

Every read `X[i, j]` of a kernel argument becomes `_tl_gload(...)`, which counts one global load
(per element, per thread, and optionally into a trace) and then returns `X[i, j]`. Reads and writes
of `cuda.shared.array`s are counted too, and checked for barrier hazards: two threads touching one
shared element between the same pair of `cuda.syncthreads()` calls, at least one of them writing.
Index expressions and arithmetic are left exactly as written.
"""
import ast
import inspect

import numpy as np
from numba import cuda  # noqa: F401  (the helpers run in the kernel's namespace; named here for readers)

from .source import build, is_call, syntax_tree

TRACE_FIELDS = ("array", "i", "j", "block_y", "block_x", "ty", "tx", "seq")
_STAMP = 2048  # hazard stamp = epoch * _STAMP + thread id + 1; blocks hold at most 1024 threads

# Run at the top of the rewritten kernel: where this thread is, and how many barriers it has passed.
_PROLOGUE = """
_tl_epoch = 0
_tl_x, _tl_y = cuda.grid(2)
_tl_b = cuda.blockIdx.x + cuda.gridDim.x * cuda.blockIdx.y
_tl_me = cuda.threadIdx.x + cuda.blockDim.x * cuda.threadIdx.y + 1
"""


# The helpers below are compiled into the kernel's own namespace: as device functions on a GPU, as
# plain Python on the simulator (where they then see the simulator's per-launch `cuda` module).

def _tl_gload(arr, aid, counts, tloads, trace, tpos, x, y, i, j):
    seq = tloads[y, x]
    tloads[y, x] = seq + 1  # each thread owns its slot: no atomic needed
    cuda.atomic.add(counts, (i, j), 1)
    if trace.shape[0] > 0:
        p = cuda.atomic.add(tpos, 0, 1)
        if p < trace.shape[0]:
            trace[p, 0] = aid
            trace[p, 1] = i
            trace[p, 2] = j
            trace[p, 3] = cuda.blockIdx.y
            trace[p, 4] = cuda.blockIdx.x
            trace[p, 5] = cuda.threadIdx.y
            trace[p, 6] = cuda.threadIdx.x
            trace[p, 7] = seq
    return arr[i, j]


def _tl_foreign(stamp, mine):
    # Same epoch (no barrier in between), another thread.
    return stamp // _STAMP == mine // _STAMP and stamp != mine


def _tl_sload(s, sreads, wrote, read, hazards, x, y, b, mine, i, j):
    sreads[y, x] += 1
    if _tl_foreign(wrote[b, i, j], mine):
        cuda.atomic.add(hazards, 0, 1)  # read-after-write with no barrier between
    read[b, i, j] = mine
    return s[i, j]


def _tl_sstore(s, sstores, wrote, read, hazards, x, y, b, mine, i, j, value):
    sstores[y, x] += 1
    if _tl_foreign(read[b, i, j], mine):
        cuda.atomic.add(hazards, 1, 1)  # write-after-read: a neighbour may still need the old value
    if _tl_foreign(wrote[b, i, j], mine):
        cuda.atomic.add(hazards, 2, 1)  # write-after-write
    wrote[b, i, j] = mine
    s[i, j] = value


HELPERS = (_tl_gload, _tl_foreign, _tl_sload, _tl_sstore)


def _index(node, what):
    idx = node.slice
    if not (isinstance(idx, ast.Tuple) and len(idx.elts) == 2):
        raise ValueError(f"tiledlab counts 2-D accesses written as {what}[i, j]; found {ast.unparse(node)}")
    return idx.elts


def _name(node):
    return node.value.id if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) else None


def _call(source, *tail):
    """Parse a helper call and put real expressions in place of its last len(tail) arguments."""
    call = ast.parse(source, mode="eval").body
    call.args[-len(tail):] = list(tail)
    return call


class _Rewrite(ast.NodeTransformer):
    def __init__(self, params, shared):
        self.params, self.shared = params, shared

    def visit_Subscript(self, node):
        self.generic_visit(node)
        name = _name(node)
        if not isinstance(node.ctx, ast.Load) or name not in self.params + list(self.shared):
            return node
        i, j = _index(node, name)
        if name in self.params:
            new = _call(f"_tl_gload({name}, {self.params.index(name)}, _tl_count_{name}, _tl_tloads, "
                        "_tl_trace, _tl_tpos, _tl_x, _tl_y, i, j)", i, j)
        else:
            new = _call(f"_tl_sload({name}, _tl_sreads, _tl_w_{name}, _tl_r_{name}, _tl_hazards, "
                        "_tl_x, _tl_y, _tl_b, _tl_epoch * _STAMP + _tl_me, i, j)", i, j)
        return ast.copy_location(new, node)

    def visit_Assign(self, node):
        self.generic_visit(node)
        name = _name(node.targets[0])
        if len(node.targets) != 1 or name not in self.shared:
            return node
        i, j = _index(node.targets[0], name)
        new = _call(f"_tl_sstore({name}, _tl_sstores, _tl_w_{name}, _tl_r_{name}, _tl_hazards, _tl_x, "
                    "_tl_y, _tl_b, _tl_epoch * _STAMP + _tl_me, i, j, v)", i, j, node.value)
        return ast.copy_location(ast.Expr(new), node)

    def visit_Expr(self, node):
        if is_call(node.value, "cuda.syncthreads"):
            return [node, ast.copy_location(ast.parse("_tl_epoch += 1").body[0], node)]
        return self.generic_visit(node)


def shared_arrays(func, namespace):
    """{name: shape} of the cuda.shared.array declarations in a kernel's FunctionDef."""
    found = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and is_call(node.value, "cuda.shared.array"):
            shape = eval(compile(ast.Expression(node.value.args[0]), "<shape>", "eval"), namespace)
            found[node.targets[0].id] = tuple(int(n) for n in np.atleast_1d(shape))
    return found


def _rewrite(kernel, T):
    func = syntax_tree(kernel)
    params = [a.arg for a in func.args.args]
    shared = shared_arrays(func, {**kernel.py_func.__globals__, "T": T})
    return _Rewrite(params, shared).visit(func), params, shared


def instrumented(kernel, T):
    """(compiled counting kernel, argument names, {shared name: shape}) for `kernel` at tile width T."""
    func, params, shared = _rewrite(kernel, T)
    func.body[:0] = ast.parse(_PROLOGUE).body
    extra = [f"_tl_count_{p}" for p in params] + ["_tl_tloads", "_tl_trace", "_tl_tpos", "_tl_sreads",
                                                  "_tl_sstores", "_tl_hazards"]
    extra += [f"_tl_{rw}_{s}" for s in shared for rw in ("w", "r")]
    func.args.args += [ast.arg(arg=a) for a in extra]
    helpers = "\n\n".join(inspect.getsource(h) for h in HELPERS)
    return build(kernel, func, T, "instrumented", {"_STAMP": _STAMP}, helpers), params, shared


def instrumented_source(kernel, T=4):
    """The rewritten kernel as source, for readers who want to see exactly what is counted."""
    return ast.unparse(_rewrite(kernel, T)[0])
