"""Count or refuse, form by form: every way to declare or reach a shared array, to name numba's cuda module,
to store, and to index that numba compiles is either counted exactly or refused with its line.

The forms are enumerated by kind: assignment kinds (plain, annotated, tuple, starred, augmented; a walrus is refused),
aliases of `cuda` and of `cuda.shared` (local, global, through a module, `from numba.cuda import ...`),
helpers, keyword arguments, and shapes from globals, locals and expressions. Aliases that only exist on a
GPU (the simulator's cuda module has no `shared` or `syncthreads` until a kernel runs) are checked in a
process that imports numba for a GPU; the check is on the syntax tree, so no GPU is needed.
"""
import os
import re
import subprocess
import sys
import textwrap
import types

import numba
import numpy as np
import pytest
from conftest import operands, source_line
from numba import cuda, float32  # globals, as in a notebook: the simulator swaps module globals only
from numba import cuda as gpu  # numba's cuda under another name, as a student might import it

import tiledlab.core.kernels as lesson_module  # a module whose attribute is numba's cuda module
from tiledlab.counting import count_loads
from tiledlab.counting.exercises import check

T = 4
SHAPE = (T, T)
WIDTH = 8  # a global a kernel below shadows with a local of its own
STRIDE = slice(0, 2)
cu = cuda


@cuda.jit(device=True)
def same(x):  # a device function: numba's refusal of a plain Python one would come first
    return x


# --- shared arrays: the forms that are counted ---------------------------------------------------------

@cuda.jit
def positional(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    sA[ty, tx] = A[ty, tx]
    C[ty, tx] = sA[tx, ty]  # no barrier between the stores and the reads: the hazard check must see it


@cuda.jit
def by_keyword(A, B, C):
    sA = cuda.shared.array(dtype=float32, shape=(T, T))
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    sA[ty, tx] = A[ty, tx]
    C[ty, tx] = sA[tx, ty]  # no barrier


@cuda.jit
def shape_by_keyword(A, B, C):
    sA = cuda.shared.array(SHAPE, dtype=numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    sA[ty, tx] = A[ty, tx]
    C[ty, tx] = sA[tx, ty]  # no barrier


@cuda.jit
def shape_from_a_global(A, B, C):
    sA = cuda.shared.array(SHAPE, np.float32, alignment=16)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    sA[ty, tx] = A[ty, tx]
    C[ty, tx] = sA[tx, ty]  # no barrier


@pytest.mark.parametrize("kernel", [positional, by_keyword, shape_by_keyword, shape_from_a_global],
                         ids=lambda k: k.__name__)
def test_a_shared_array_declared_any_way_numba_takes_is_counted_and_checked(rng, kernel):
    A, B = operands(rng, T, T, T)
    c = count_loads(kernel, A, B, T)
    assert c.shared == {"sA": (T, T)} and c.shared_stores.sum() == c.shared_reads.sum() == T * T
    assert c.hazards["read_after_write"] + c.hazards["write_after_read"] > 0, c.hazards


# --- shared arrays: every other form is refused by line -------------------------------------------------

@cuda.jit
def annotated(A, B, C):
    sA: float32 = cuda.shared.array((T, T), float32)
    C[0, 0] = sA[0, 0]


@cuda.jit
def a_tuple_over_two_lines(A, B, C):
    sA, sB = (cuda.shared.array((T, T), float32),
              cuda.shared.array((T, T), float32))
    C[0, 0] = sA[0, 0] + sB[0, 0]


@cuda.jit
def starred(A, B, C):
    *sA, = (cuda.shared.array((T, T), float32),)
    C[0, 0] = A[0, 0]


@cuda.jit
def walrus(A, B, C):
    (sA := cuda.shared.array((T, T), float32))
    C[0, 0] = sA[0, 0]


@cuda.jit
def through_a_helper(A, B, C):
    sA = same(cuda.shared.array((T, T), float32))
    C[0, 0] = sA[0, 0]


@cuda.jit
def in_a_condition(A, B, C):
    sA = (cuda.shared.array((T, T), float32) if T > 2 else
          cuda.shared.array((T, T), float32))
    C[0, 0] = sA[0, 0]


@cuda.jit
def indexed_where_declared(A, B, C):
    acc = float32(0.0)
    acc += cuda.shared.array((T, T), float32)[0, 0]
    C[0, 0] = acc


@cuda.jit
def alias_of_cuda_shared(A, B, C):
    sh = cuda.shared
    sA = sh.array((T, T), float32)
    C[0, 0] = sA[0, 0]


@cuda.jit
def redeclared_as_local(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sA = cuda.local.array((T, T), float32)
    sA[0, 0] = A[0, 0]
    C[0, 0] = sA[0, 0]


@cuda.jit
def shape_from_a_local(A, B, C):
    n = 4
    sA = cuda.shared.array((n, n), float32)
    C[0, 0] = sA[0, 0]


@cuda.jit
def shape_from_a_shadowing_local(A, B, C):
    WIDTH = 2
    sA = cuda.shared.array((WIDTH, WIDTH), float32)  # the local 2, not the global 8
    C[0, 0] = sA[0, 0]


@cuda.jit
def shape_from_a_missing_global(A, B, C):
    sA = cuda.shared.array((T, NOT_DEFINED), float32)  # noqa: F821
    C[0, 0] = sA[0, 0]


@cuda.jit
def shape_from_an_expression(A, B, C):
    sA = cuda.shared.array((T, 2 * T), float32)
    C[0, 0] = sA[0, 0]


@cuda.jit
def an_unknown_keyword(A, B, C):
    sA = cuda.shared.array((T, T), float32, order='F')
    C[0, 0] = sA[0, 0]


@cuda.jit
def one_dimensional(A, B, C):
    s = cuda.shared.array(T, float32)
    C[0, 0] = s[0]


SHARED_REFUSED = [  # (kernel, the code the message quotes, what it says)
    (annotated, "sA: float32 = cuda.shared.array((T, T), float32)", r"declare each shared array as a statement"),
    (a_tuple_over_two_lines, "cuda.shared.array((T, T), float32)", r"declare each shared array"),
    (starred, "cuda.shared.array((T, T), float32)", r"declare each shared array"),
    (through_a_helper, "cuda.shared.array((T, T), float32)", r"declare each shared array"),
    (in_a_condition, "cuda.shared.array((T, T), float32)", r"declare each shared array"),
    (indexed_where_declared, "cuda.shared.array((T, T), float32)", r"declare each shared array"),
    (alias_of_cuda_shared, "sh = cuda.shared", r"use cuda.shared only to declare"),
    (redeclared_as_local, "sA = cuda.local.array((T, T), float32)", r"sA names an array of the kernel"),
    (shape_from_a_local, "sA = cuda.shared.array((n, n), float32)", r"n: a shared array's shape"),
    (shape_from_a_shadowing_local, "sA = cuda.shared.array((WIDTH, WIDTH), float32)", r"WIDTH: a shared array's"),
    (shape_from_a_missing_global, "sA = cuda.shared.array((T, NOT_DEFINED), float32)", r"NOT_DEFINED: a shared"),
    (shape_from_an_expression, "array shape (T, 2 * T)", r"constant of its own"),
    (an_unknown_keyword, "cuda.shared.array((T, T), float32, order='F')", r"its shape and dtype"),
    (one_dimensional, "s = cuda.shared.array(T, float32)", r"2-D shared arrays"),
]


# --- numba's cuda module under other names --------------------------------------------------------------

@cuda.jit
def local_alias(A, B, C):
    c = cuda
    c.syncthreads()
    C[0, 0] = A[0, 0]


@cuda.jit
def imported_as(A, B, C):
    gpu.syncthreads()
    C[0, 0] = A[0, 0]


@cuda.jit
def through_numba(A, B, C):
    numba.cuda.syncthreads()
    C[0, 0] = A[0, 0]


@cuda.jit
def through_another_module(A, B, C):
    lesson_module.cuda.syncthreads()
    C[0, 0] = A[0, 0]


@cuda.jit
def grid_group_sync(A, B, C):
    cuda.cg.this_grid().sync()
    C[0, 0] = A[0, 0]


@cuda.jit
def warp_sync(A, B, C):
    cuda.syncwarp()
    C[0, 0] = A[0, 0]


@cuda.jit
def warp_shuffle(A, B, C):
    a = cuda.shfl_sync(cuda.activemask(), A[0, 0], 0)
    C[0, 0] = a


@cuda.jit
def warp_vote(A, B, C):
    if cuda.all_sync(cuda.activemask(), A[0, 0] > 0):
        C[0, 0] = A[0, 0]


@cuda.jit
def barrier_as_a_value(A, B, C):
    wait = cuda.syncthreads
    wait()
    C[0, 0] = A[0, 0]


@cuda.jit(device=True)
def renamed_barrier():
    cu.syncthreads()


@cuda.jit(device=True)
def barrier_through_numba():
    numba.cuda.syncthreads()


@cuda.jit(device=True)
def calls_a_barrier_helper():
    helpers.barrier()


helpers = types.ModuleType("helpers")  # a module of helpers, called as helpers.barrier()
helpers.barrier = renamed_barrier


@cuda.jit
def helper_with_cuda_renamed(A, B, C):
    renamed_barrier()
    C[0, 0] = A[0, 0]


@cuda.jit
def helper_through_numba(A, B, C):
    barrier_through_numba()
    C[0, 0] = A[0, 0]


@cuda.jit
def helper_from_a_module(A, B, C):
    helpers.barrier()
    C[0, 0] = A[0, 0]


@cuda.jit
def helper_calling_through_a_module(A, B, C):
    calls_a_barrier_helper()
    C[0, 0] = A[0, 0]


CUDA_REFUSED = [
    (local_alias, "c = cuda", r"name numba's cuda module only cuda"),
    (imported_as, "gpu.syncthreads()", r"gpu is numba's cuda module under another name"),
    (through_numba, "numba.cuda.syncthreads()", r"numba.cuda is numba's cuda module under another name"),
    (through_another_module, "lesson_module.cuda.syncthreads()", r"lesson_module.cuda is numba's cuda module"),
    (grid_group_sync, "cuda.cg.this_grid().sync()", r"cuda.cg: the hazard check knows the barriers"),
    (warp_sync, "cuda.syncwarp()", r"cuda.syncwarp: the hazard check knows the barriers"),
    (warp_shuffle, "a = cuda.shfl_sync(cuda.activemask(), A[0, 0], 0)", r"cuda.shfl_sync works across a warp"),
    (warp_vote, "if cuda.all_sync(cuda.activemask(), A[0, 0] > 0):", r"cuda.all_sync works across a warp"),
    (barrier_as_a_value, "wait = cuda.syncthreads", r"call cuda.syncthreads\(...\) where it stands"),
    (helper_with_cuda_renamed, "renamed_barrier()", r"the helper renamed_barrier uses cuda"),
    (helper_through_numba, "barrier_through_numba()", r"the helper barrier_through_numba uses cuda"),
    (helper_from_a_module, "helpers.barrier()", r"the helper helpers.barrier uses cuda"),
    (helper_calling_through_a_module, "calls_a_barrier_helper()",
     r"calls_a_barrier_helper → helpers.barrier uses cuda"),
]


GPU_ONLY = '''
import tiledlab
from numba import cuda, float32
from numba.cuda import shared, shfl_sync, syncthreads
from tiledlab.core.kernel import Kernel
from tiledlab.counting.rewrite import _rewrite
from tiledlab.core import card
card.current = lambda: card.KNOWN["h200"]  # GPU mode without a GPU (CI): no driver to read the card from
T = 4
sh = cuda.shared
declare = cuda.shared.array
sync = cuda.syncthreads

@cuda.jit
def module_alias(A, B, C):
    sA = sh.array((T, T), float32)
    C[0, 0] = sA[0, 0]

@cuda.jit
def imported_shared(A, B, C):
    sA = shared.array((T, T), float32)
    C[0, 0] = sA[0, 0]

@cuda.jit
def array_alias(A, B, C):
    sA = declare((T, T), float32)
    C[0, 0] = sA[0, 0]

@cuda.jit
def imported_barrier(A, B, C):
    syncthreads()
    C[0, 0] = A[0, 0]

@cuda.jit
def imported_shuffle(A, B, C):
    C[0, 0] = shfl_sync(0xffffffff, A[0, 0], 0)

@cuda.jit
def warp_shuffle(A, B, C):
    C[0, 0] = cuda.shfl_down_sync(0xffffffff, A[0, 0], 1)

@cuda.jit(device=True)
def helper():
    sync()

@cuda.jit
def barrier_alias_in_a_helper(A, B, C):
    helper()
    C[0, 0] = A[0, 0]

for k in (module_alias, imported_shared, array_alias, imported_barrier, barrier_alias_in_a_helper, imported_shuffle,
          warp_shuffle):
    kernel = Kernel.of(k)
    try:
        _rewrite(kernel.bind())
        print(k.__name__, "COUNTED")
    except ValueError as refused:
        print(k.__name__, refused)
'''


def test_aliases_only_a_gpu_has_are_refused_too(tmp_path):
    script = tmp_path / "gpu_only.py"
    script.write_text(textwrap.dedent(GPU_ONLY))
    env = {**os.environ, "TILEDLAB_BACKEND": "gpu", "PYTHONPATH": os.pathsep.join(sys.path)}
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)
    said = dict(line.split(" ", 1) for line in run.stdout.splitlines())
    assert said.keys() == {"module_alias", "imported_shared", "array_alias", "imported_barrier",
                           "barrier_alias_in_a_helper", "imported_shuffle", "warp_shuffle"}, run.stdout + run.stderr
    assert re.match(r"line \d+: 'sA = sh.array\(\(T, T\), float32\)': sh is numba's cuda.shared ", said["module_alias"])
    assert "shared is numba's cuda.shared under another name" in said["imported_shared"]
    assert "declare is numba's cuda.shared.array under another name" in said["array_alias"]
    assert "syncthreads is numba's cuda.syncthreads under another name" in said["imported_barrier"]
    assert "the helper helper uses cuda" in said["barrier_alias_in_a_helper"]
    assert "'C[0, 0] = shfl_sync(4294967295, A[0, 0], 0)': shfl_sync works across a warp" in said["imported_shuffle"]
    assert "cuda.shfl_down_sync works across a warp (32 threads at once)" in said["warp_shuffle"]


# --- stores: assignment kinds, and stores into an input -----------------------------------------------------

@cuda.jit
def store_annotated(A, B, C):
    C[0, 0]: float32 = A[0, 0]


@cuda.jit
def store_starred(A, B, C):
    C[0, 0], *rest = A[0, 0], A[0, 1]


@cuda.jit
def store_as_loop_target(A, B, C):
    for C[0, 0] in range(3):
        pass


@cuda.jit
def stores_into_B(A, B, C):
    B[0, 0] = A[0, 0]
    C[0, 0] = B[0, 0]


@cuda.jit
def adds_into_B(A, B, C):
    B[0, 0] += A[0, 0]
    C[0, 0] = B[0, 0]


STORES_REFUSED = [
    (store_annotated, "C[0, 0]: float32 = A[0, 0]", r"one global store per statement"),
    (store_starred, "C[0, 0], *rest = (A[0, 0], A[0, 1])", r"one global store per statement"),
    (store_as_loop_target, "for C[0, 0] in range(3):", r"one global store per statement"),
    (stores_into_B, "B[0, 0] = A[0, 0]", r"B is an input of C = A @ B"),
    (adds_into_B, "B[0, 0] += A[0, 0]", r"B is an input of C = A @ B"),
]


# --- indices: one element at a time ----------------------------------------------------------------------------

@cuda.jit
def slice_object(A, B, C):
    s = slice(0, 2)
    C[0, 0] = A[0, s][0]


@cuda.jit
def global_slice(A, B, C):
    C[0, 0] = A[0, STRIDE][0]


@cuda.jit
def ellipsis(A, B, C):
    C[0, 0] = A[0, ...]


@cuda.jit
def new_axis(A, B, C):
    C[0, 0] = A[0, None]


@cuda.jit
def float_index(A, B, C):
    C[0, 0] = A[0, 1.0]


@cuda.jit
def fancy_index(A, B, C):
    C[0, 0] = A[0, (0, 1)][0]


@cuda.jit
def local_slice(A, B, C):
    acc = cuda.local.array(4, float32)
    part = acc[1:3]
    C[0, 0] = A[0, 0] + part[0]


INDEX_REFUSED = [
    (slice_object, "s = slice(0, 2)", r"a slice makes a view"),
    (global_slice, "C[0, 0] = A[0, STRIDE][0]", r"a slice makes a view"),
    (ellipsis, "C[0, 0] = A[0, ...]", r"with two whole numbers"),
    (new_axis, "C[0, 0] = A[0, None]", r"with two whole numbers"),
    (float_index, "C[0, 0] = A[0, 1.0]", r"with two whole numbers"),
    (fancy_index, "C[0, 0] = A[0, (0, 1)][0]", r"with two whole numbers"),
    (local_slice, "part = acc[1:3]", r"a slice makes a view"),
]


REFUSED = SHARED_REFUSED + CUDA_REFUSED + STORES_REFUSED + INDEX_REFUSED


@pytest.mark.parametrize("kernel,code,why", REFUSED, ids=[k.__name__ for k, *_ in REFUSED])
def test_a_form_the_count_cannot_follow_is_refused_with_its_line(rng, kernel, code, why):
    A, B = operands(rng, 4, 4, 4)
    with pytest.raises(ValueError) as refused:  # a ValueError, never a KeyError or TypeError
        count_loads(kernel, A, B, T)
    message = str(refused.value)
    assert type(refused.value) is ValueError and code in message and re.search(why, message), message
    as_written = (code, code.replace("array shape ", "cuda.shared.array("), code.split(" = (")[0])
    assert re.match(rf"(kernel {kernel.__name__}, )?line {source_line(kernel, *as_written)}: ", message), message


@cuda.jit
def while_walrus(A, B, C):
    t = -1
    while (t := t + 1) < A.shape[1]:
        C[0, 0] += A[0, t]


@pytest.mark.parametrize("kernel", [walrus, while_walrus], ids=lambda k: k.__name__)
def test_an_assignment_expression_is_refused_on_both_backends(rng, capsys, kernel):
    """numba-cuda compiles no `:=` for a GPU (a type it cannot determine) while the simulator runs it: refused on
    both by its line, as the kernel's fault."""
    with pytest.raises(ValueError, match=rf"^line {source_line(kernel, ':=')}: .*assign \w+ on a line of its own"):
        count_loads(kernel, *operands(rng, 4, 4, 4), T)
    assert not check(kernel, tile=4)
    out = capsys.readouterr().out
    assert ":=" in out and "cannot count" not in out, out


@cuda.jit
def or_of_a_condition(A, B, C):
    row, col = cuda.grid(2)
    if cuda.syncthreads_or(row < C.shape[0]):  # GPU-less
        C[0, 0] = A[0, 0]


@cuda.jit
def or_of_a_flag(A, B, C):
    row, col = cuda.grid(2)
    inside = row < C.shape[0]
    if cuda.syncthreads_or(inside):  # GPU-less
        C[0, 0] = A[0, 0]


@cuda.jit
def a_list_of_places(A, B, C):
    row, col = [cuda.blockIdx.y, cuda.blockIdx.x]  # GPU-less
    C[row, col] = A[row, 0]


@cuda.jit(device=True)
def plus_one(x):
    y = (z := x) + 1  # GPU-less
    return y + z


@cuda.jit
def a_walrus_in_a_helper(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = plus_one(A[row, 0])


@pytest.mark.parametrize("kernel, why", [
    (or_of_a_condition, r"cuda.syncthreads_or\(1 if \.\.\. else 0\)"),
    (or_of_a_flag, r"cuda.syncthreads_or\(1 if \.\.\. else 0\)"),
    (a_list_of_places, r"write a tuple"),
    (a_walrus_in_a_helper, r"assign z on a line of its own"),
], ids=lambda k: getattr(k, "__name__", ""))
def test_what_a_gpu_cannot_build_is_refused_on_both_backends(rng, capsys, kernel, why):
    """numba-cuda types syncthreads_or/_and/_count of a bool as no implementation, builds no list (it needs NRT) and
    no `:=` in a device function either; the simulator runs all of them."""
    fn = plus_one if kernel is a_walrus_in_a_helper else kernel
    with pytest.raises(ValueError, match=rf"^line {source_line(fn, '# GPU-less')}: .*{why}"):
        count_loads(kernel, *operands(rng, 4, 4, 4), T)
    assert not check(kernel, tile=4)
    assert "cannot count" not in capsys.readouterr().out
