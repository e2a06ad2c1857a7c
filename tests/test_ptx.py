"""tiledlab.core.ptx: 128-bit loads and asynchronous copies, their simulator definitions and their counts.

On the simulator each function is a Python definition (ldg4 returns four elements, cp_async4 copies at
once); the counting lab counts what each moves, element by element, and keeps a copy's elements
pending until a wait covers them. On a GPU the same kernels compile to LDG.E.128 and LDGSTS.
"""
import linecache
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import gpu_only, operands, simulator_only, source_line
from numba import cuda, float32  # globals, as in a notebook: the simulator swaps module globals only

from tiledlab.core import formulas, launch_geometry, prepare, ptx
from tiledlab.core.ptx import cp_async4, cp_async_commit, cp_async_wait, ldg4
from tiledlab.counting import count_loads
from tiledlab.counting.rewrite import instrumented_source

T = 8  # tile width, a multiple of 4: a row of a tile is T/4 groups of four floats
WAIT = 0
wide = ldg4  # ldg4 under another name (refused below)


# --- kernels --------------------------------------------------------------------------------------------

@cuda.jit
def tiled_wide(A, B, C):
    """The lesson's tiled kernel, its tiles loaded four floats at a time: A's through registers with one
    128-bit load (ldg4), B's straight into shared memory (cp_async4). Zeros past the edges, written one
    by one. Needs K % 4 == 0 and N % 4 == 0 (rows of A and B on 16-byte boundaries)."""
    sA = cuda.shared.array((T, T), float32, alignment=16)
    sB = cuda.shared.array((T, T), float32, alignment=16)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range((K + T - 1) // T):
        if tx < T // 4:  # T/4 threads of a row move its T elements, four each
            k = t * T + 4 * tx
            if row < M and k < K:  # K % 4 == 0: a group is inside A or outside it whole
                a0, a1, a2, a3 = ldg4(A, row, k)
            else:
                a0 = a1 = a2 = a3 = float32(0.0)
            sA[ty, 4 * tx] = a0
            sA[ty, 4 * tx + 1] = a1
            sA[ty, 4 * tx + 2] = a2
            sA[ty, 4 * tx + 3] = a3
            kb, cb = t * T + ty, cuda.blockIdx.x * T + 4 * tx
            if kb < K and cb < N:
                cp_async4(sB, ty, 4 * tx, B, kb, cb)
            else:
                for q in range(4):
                    sB[ty, 4 * tx + q] = float32(0.0)
        cp_async_commit()
        cp_async_wait(0)  # this thread's copies have landed ...
        cuda.syncthreads()  # ... and everyone's: the tiles are complete
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # nobody overwrites the tiles while a neighbour reads them
    if row < M and col < N:
        C[row, col] = acc


def _copy_kernel(wait, commit_first=True, neighbour=False, barrier=False):
    """Source of a kernel copying A (M×N, N % 4 == 0) into C through shared memory with cp_async4, one
    group of four per thread, T×T per block; variants leave out the wait, wait before committing, or read
    the neighbour's group (with or without a barrier)."""
    group = "(tx + 1) % (T // 4)" if neighbour else "tx"
    steps = ["cp_async_commit()", "cp_async_wait(0)"] if commit_first else ["cp_async_wait(0)", "cp_async_commit()"]
    steps = [s for s in steps if wait or "wait" not in s] + ["cuda.syncthreads()"] * barrier
    body = "\n    ".join(steps)
    return f'''
@launch_geometry(block=lambda T: (T, T), threads=lambda T: (T // 4, T), T=8)
@cuda.jit
def copy_async(A, B, C):
    s = cuda.shared.array((T, T), float32, alignment=16)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + 4 * tx
    if row < A.shape[0] and col < A.shape[1]:
        cp_async4(s, ty, 4 * tx, A, row, col)
    {body}
    g = {group}
    read = cuda.blockIdx.x * T + 4 * g
    if row < C.shape[0] and read < C.shape[1] and col < C.shape[1]:
        for q in range(4):
            C[row, col + q] = s[ty, 4 * g + q]
'''


def copy_kernel(**variant):
    """The copy kernel (a tiledlab Kernel), defined from source kept in linecache (so it can be read)."""
    source = _copy_kernel(**variant)
    name = f"<test_ptx copy {sorted(variant.items())}>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    namespace = {"cuda": cuda, "float32": float32, "launch_geometry": launch_geometry, "cp_async4": cp_async4,
                 "cp_async_commit": cp_async_commit, "cp_async_wait": cp_async_wait}
    exec(compile(source, name, "exec"), namespace)
    return namespace["copy_async"]


@launch_geometry(block=lambda T: (T, T), threads=lambda T: (T // 4, T), T=8, WAIT=0)
@cuda.jit
def two_stages(A, B, C):
    """C = A + B (square, N % 4 == 0) through two shared tiles, copied as two groups: sA's first, then
    sB's. cp_async_wait(WAIT) with WAIT = 1 leaves the last group (sB) in flight, WAIT = 2 both."""
    sA = cuda.shared.array((T, T), float32, alignment=16)
    sB = cuda.shared.array((T, T), float32, alignment=16)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + 4 * tx
    inside = row < C.shape[0] and col < C.shape[1]
    if inside:
        cp_async4(sA, ty, 4 * tx, A, row, col)
    cp_async_commit()
    if inside:
        cp_async4(sB, ty, 4 * tx, B, row, col)
    cp_async_commit()
    cp_async_wait(WAIT)
    if inside:
        for q in range(4):
            C[row, col + q] = sA[ty, 4 * tx + q] + sB[ty, 4 * tx + q]


@launch_geometry(block=lambda T: (T, T), threads=lambda T: (T // 4, T), T=8)
@cuda.jit
def copies_twice(A, B, C):
    """C = B (square, N % 4 == 0) through one shared tile, into which A's copy is still in flight when B's is
    issued: two copies into one element at once."""
    s = cuda.shared.array((T, T), float32, alignment=16)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + 4 * tx
    inside = row < C.shape[0] and col < C.shape[1]
    if inside:
        cp_async4(s, ty, 4 * tx, A, row, col)
    cp_async_commit()
    if inside:
        cp_async4(s, ty, 4 * tx, B, row, col)
    cp_async_commit()
    cp_async_wait(0)
    if inside:
        for q in range(4):
            C[row, col + q] = s[ty, 4 * tx + q]


# --- results ---------------------------------------------------------------------------------------------

SHAPES = [(13, 20, 12), (8, 8, 8), (1, 4, 4), (17, 36, 28)]  # K, N multiples of 4 (the contract), M any


@pytest.mark.parametrize("M,K,N", SHAPES)
def test_the_wide_tiled_kernel_matches_numpy(rng, M, K, N):
    A, B = operands(rng, M, K, N)
    C = prepare(tiled_wide, A, B, T)().result()
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("M,N", [(13, 12), (8, 8), (3, 20)])
def test_the_async_copy_copies(rng, M, N):
    A, B = operands(rng, M, N, N)
    np.testing.assert_array_equal(prepare(copy_kernel(wait=True), A, B)().result(), A)


def test_two_stages_add(rng):
    A, B = operands(rng, 16, 16, 16)
    np.testing.assert_array_equal(prepare(two_stages, A, B)().result(), A + B)


# --- the simulator's definitions -------------------------------------------------------------------------

@simulator_only
def test_ldg4_on_the_simulator_returns_four_float32():
    A = np.arange(24, dtype=np.float32).reshape(3, 8)
    four = ldg4(A, 2, 4)
    assert four == (20.0, 21.0, 22.0, 23.0) and all(type(v) is np.float32 for v in four)


@simulator_only
def test_cp_async4_on_the_simulator_copies_at_once():
    A = np.arange(24, dtype=np.float32).reshape(3, 8)
    s = np.zeros((2, 8), np.float32)
    cp_async4(s, 1, 4, A, 2, 0)
    assert s[1].tolist() == [0, 0, 0, 0, 16, 17, 18, 19] and not s[0].any()
    assert cp_async_commit() is None and cp_async_wait(0) is None and cp_async_wait(np.int64(3)) is None


def _rows(n=3, cols=8):
    return np.zeros((n, cols), np.float32)


@simulator_only
@pytest.mark.parametrize("call,error,message", [
    (lambda: ldg4(_rows(), 0, 2), ValueError, r"8 bytes from its start, not on a 16-byte boundary"),
    (lambda: ldg4(_rows(cols=6), 1, 0), ValueError, r"24 bytes from its start"),  # rows of 6 floats
    (lambda: ldg4(_rows(cols=10), 0, 8), IndexError, r"\[0, 8:12\] are not all inside the 3×10 array"),
    (lambda: ldg4(_rows(), 3, 0), IndexError, r"not all inside"),
    (lambda: ldg4(_rows(), -1, 0), IndexError, r"not all inside"),
    (lambda: ldg4(_rows().astype(np.float64), 0, 0), TypeError, r"2-D float32"),
    (lambda: ldg4(_rows()[:, ::2], 0, 0), ValueError, r"16-byte boundary"),  # not contiguous
    (lambda: cp_async4(_rows(2), 0, 1, _rows(), 0, 0), ValueError, r"shared destination"),
    (lambda: cp_async4(_rows(2), 0, 0, _rows(), 0, 6), IndexError, r"global source"),
    (lambda: cp_async_wait(-1), TypeError, r"whole number ≥ 0"),
    (lambda: cp_async_wait(1.0), TypeError, r"whole number ≥ 0"),
    (lambda: cp_async_wait(True), TypeError, r"whole number ≥ 0"),
])
def test_the_simulator_refuses_what_faults_on_a_gpu(call, error, message):
    with pytest.raises(error, match=message):
        call()


@simulator_only
def test_the_simulator_definitions_are_chosen():
    assert ptx.ldg4 is ptx._ldg4_sim and ptx.cp_async4 is ptx._cp_async4_sim
    assert set(ptx.FUNCTIONS.values()) == {"ldg4", "cp_async4", "cp_async_commit", "cp_async_wait", "shared_view"}


# --- counts ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("M,K,N", SHAPES)
def test_the_wide_tiled_kernel_counts_like_the_tiled_one(rng, M, K, N):
    A, B = operands(rng, M, K, N)
    c = count_loads(tiled_wide, A, B, T)
    assert {"A": c.A, "B": c.B} == formulas.tiled_loads(M, K, N, T)
    traffic = formulas.shared_traffic(M, K, N, T, T, T)
    assert (c.shared_stores.sum(), c.shared_reads.sum()) == (traffic["stores"], traffic["reads"])
    assert not any(c.hazards.values()), c.hazards
    np.testing.assert_allclose(c.C, A @ B, rtol=1e-5, atol=1e-5)


def test_a_tile_copied_with_cp_async4_counts_one_load_and_one_store_per_element(rng):
    M, N = 13, 12
    A, B = operands(rng, M, N, N)
    c = count_loads(copy_kernel(wait=True), A, B)
    assert (c.maps["A"] == 1).all() and c.B == 0
    assert c.shared_stores.sum() == M * N and c.shared_reads.sum() == M * N
    assert (c.C_stores == 1).all() and not any(c.hazards.values()), c.hazards
    np.testing.assert_array_equal(c.C, A)


def test_the_trace_shows_four_neighbouring_loads_per_copy(rng):
    A, B = operands(rng, 8, 8, 8)
    c = count_loads(copy_kernel(wait=True), A, B, trace=True)
    mine = c.trace[(c.trace.ty == 2) & (c.trace.tx == 1)]  # thread (2, 1) of block (0, 0) copies A[2, 4:8]
    mine = mine[(mine.by == 0) & (mine.bx == 0)]
    assert sorted(zip(mine.i, mine.j)) == [(2, 4), (2, 5), (2, 6), (2, 7)]
    stores = c.shared_trace[(c.shared_trace.store == 1) & (c.shared_trace.ty == 2) & (c.shared_trace.tx == 1)]
    assert sorted(zip(stores.i, stores.j))[:4] == [(2, 4), (2, 5), (2, 6), (2, 7)]


def test_ldg4_counts_four_loads_in_the_rewritten_source():
    text = instrumented_source(tiled_wide, T=8)
    assert "_tl_ldg4(A, 0, _tl_count_A" in text and "_tl_cp_async4(sB, ty, 4 * tx, B, kb, cb, 1, _tl_count_B" in text
    assert "_tl_groups += 1" in text and "_tl_async_wait(_tl_async_done" in text
    assert "_tl_sload_async(sB" in text and "_tl_sload(sA" in text  # only sB is a copy's target


# --- a missing wait is a hazard ------------------------------------------------------------------------------

@pytest.mark.parametrize("variant", [dict(wait=False), dict(wait=True, commit_first=False)],
                         ids=["no wait", "wait before commit"])
def test_reading_a_copy_before_its_wait_is_a_hazard(rng, variant):
    M, N = 13, 12
    A, B = operands(rng, M, N, N)
    c = count_loads(copy_kernel(**variant), A, B)
    assert c.hazards == {"read_after_write": 0, "write_after_read": 0, "write_after_write": 0, "copy_in_flight": M * N,
                         "divergent_barrier": 0, "unstored_read": 0}
    np.testing.assert_array_equal(c.C, A)  # on the simulator the copies have landed anyway


def test_a_neighbours_copy_needs_a_barrier_after_the_wait(rng):
    A, B = operands(rng, 8, 8, 8)
    unsynced = count_loads(copy_kernel(wait=True, neighbour=True), A, B)
    synced = count_loads(copy_kernel(wait=True, neighbour=True, barrier=True), A, B)
    assert sum(unsynced.hazards.values()) > 0 and not any(synced.hazards.values()), (unsynced.hazards, synced.hazards)


@pytest.mark.parametrize("wait,pending", [(0, 0), (1, 1), (2, 2)])
def test_wait_n_leaves_the_n_latest_groups_in_flight(rng, wait, pending):
    n = 16
    A, B = operands(rng, n, n, n)
    c = count_loads(two_stages, A, B, WAIT=wait)
    assert c.hazards == {"read_after_write": 0, "write_after_read": 0, "write_after_write": 0,
                         "copy_in_flight": pending * n * n, "divergent_barrier": 0, "unstored_read": 0}
    assert (c.maps["A"] == 1).all() and (c.maps["B"] == 1).all() and c.shared_stores.sum() == 2 * n * n


def test_a_copy_into_an_element_whose_copy_is_in_flight_is_a_hazard(rng):
    n = 16
    A, B = operands(rng, n, n, n)
    c = count_loads(copies_twice, A, B)
    assert c.hazards == {"read_after_write": 0, "write_after_read": 0, "write_after_write": 0,
                         "copy_in_flight": n * n, "divergent_barrier": 0, "unstored_read": 0}
    np.testing.assert_array_equal(c.C, B)


# --- what the count refuses ------------------------------------------------------------------------------------

@cuda.jit
def aliased(A, B, C):
    load = ldg4
    a, b, c, d = load(A, 0, 0)
    C[0, 0] = a


@cuda.jit
def through_the_module(A, B, C):
    a, b, c, d = ptx.ldg4(A, 0, 0)
    C[0, 0] = a


@cuda.jit
def under_another_name(A, B, C):
    a, b, c, d = wide(A, 0, 0)
    C[0, 0] = a


@cuda.jit
def too_few(A, B, C):
    a, b, c, d = ldg4(A, 0)
    C[0, 0] = a


@cuda.jit
def by_keyword(A, B, C):
    s = cuda.shared.array((T, T), float32, alignment=16)
    cp_async4(s, 0, 0, A, 0, sj=0)
    C[0, 0] = s[0, 0]


@cuda.jit
def wide_load_of_C(A, B, C):
    a, b, c, d = ldg4(C, 0, 0)
    C[0, 0] = a


@cuda.jit
def wide_load_of_shared(A, B, C):
    s = cuda.shared.array((T, T), float32, alignment=16)
    a, b, c, d = ldg4(s, 0, 0)
    C[0, 0] = a


@cuda.jit
def copy_into_global(A, B, C):
    cp_async4(C, 0, 0, A, 0, 0)


@cuda.jit
def copy_unaligned(A, B, C):
    s = cuda.shared.array((T, T), float32)
    cp_async4(s, 0, 0, A, 0, 0)
    cp_async_commit()
    cp_async_wait(0)
    C[0, 0] = s[0, 0]


@cuda.jit
def commit_in_an_expression(A, B, C):
    done = cp_async_commit()
    C[0, 0] = A[0, 0]


@cuda.jit
def wait_for_a_variable(A, B, C):
    n = cuda.threadIdx.x
    cp_async_wait(n)
    C[0, 0] = A[0, 0]


@cuda.jit
def wait_for_a_negative(A, B, C):
    cp_async_wait(-1)
    C[0, 0] = A[0, 0]


@cuda.jit
def wait_for_a_fraction(A, B, C):
    cp_async_wait(1.5)
    C[0, 0] = A[0, 0]


@cuda.jit(device=True)
def commit_and_wait():
    cp_async_commit()
    cp_async_wait(0)


@cuda.jit
def wait_in_a_helper(A, B, C):
    s = cuda.shared.array((T, T), float32, alignment=16)
    cp_async4(s, 0, 0, A, 0, 0)
    commit_and_wait()
    C[0, 0] = s[0, 0]


@cuda.jit(device=True)
def passes(f):
    return 0


@cuda.jit
def passed_along(A, B, C):
    C[0, 0] = A[0, 0] + passes(cp_async_commit)


REFUSED = [  # (kernel, the code the message quotes, what it says)
    (aliased, "load = ldg4", r"call ldg4\(\.\.\.\) where it stands"),
    (through_the_module, "ptx.ldg4(A, 0, 0)", r"import it with `from tiledlab.core.ptx import ldg4`"),
    (under_another_name, "wide(A, 0, 0)", r"wide is tiledlab.core.ptx's ldg4 under another name"),
    (too_few, "ldg4(A, 0)", r"ldg4 takes 3 arguments, given by position: ldg4\(A, i, j\)"),
    (by_keyword, "cp_async4(s, 0, 0, A, 0, sj=0)", r"cp_async4 takes 6 arguments"),
    (wide_load_of_C, "ldg4(C, 0, 0)", r"read-only path: its array is an input of the kernel, A or B, "
                                      r"by name; C is not"),
    (wide_load_of_shared, "ldg4(s, 0, 0)", r"s is not"),
    (copy_into_global, "cp_async4(C, 0, 0, A, 0, 0)", r"copies into a shared array"),
    (copy_unaligned, "cp_async4(s, 0, 0, A, 0, 0)", r"declare it with cuda.shared.array\(shape, float32, "
                                                    r"alignment=16\)"),
    (commit_in_an_expression, "done = cp_async_commit()", r"statement of its own"),
    (wait_for_a_variable, "cp_async_wait(n)", r"known when the kernel compiles: a number or a constant's name, not n"),
    (wait_for_a_negative, "cp_async_wait(-1)", r"not -1"),
    (wait_for_a_fraction, "cp_async_wait(1.5)", r"whole number n ≥ 0"),
    (wait_in_a_helper, "commit_and_wait()", r"commit_and_wait → cp_async_commit is tiledlab.core.ptx's "
                                            r"cp_async_commit inside a helper"),
    (passed_along, "passes(cp_async_commit)", r"call cp_async_commit\(\.\.\.\) where it stands"),
]


@pytest.mark.parametrize("kernel,code,why", REFUSED, ids=[k.__name__ for k, *_ in REFUSED])
def test_a_ptx_call_the_count_could_not_follow_is_refused_with_its_line(rng, kernel, code, why):
    A, B = operands(rng, 8, 8, 8)
    with pytest.raises(ValueError) as refused:
        count_loads(kernel, A, B, T)
    message = str(refused.value)
    assert message.startswith(f"line {source_line(kernel, code)}: "), message
    assert code in message and re.search(why, message), message


# --- on a GPU: the instructions themselves -------------------------------------------------------------------

# Compiles the wide tiled kernel for sm_90 in a process on the real CUDA target: its LLVM IR needs no GPU
# and no NVVM; its PTX needs NVVM and NVRTC (skipped where they are missing).
_COMPILE_SCRIPT = """
import sys
from numba import cuda, types
from numba.cuda.compiler import compile_cuda
sys.path.insert(0, "tests")
import test_ptx
arr = types.Array(types.float32, 2, "C")
kernel = test_ptx.tiled_wide.py_func
print("IR", compile_cuda(kernel, types.void, (arr, arr, arr), cc=(9, 0)).library.get_llvm_str().count("cp.async"))
try:
    ptx, _ = cuda.compile_ptx(kernel, (arr, arr, arr), cc=(9, 0))
except Exception as e:
    print("NO PTX", type(e).__name__, str(e)[:200].replace(chr(10), " "))
else:
    print("PTX", ptx.count("ld.global.nc.v4.f32"), ptx.count("cp.async.cg.shared.global"),
          ptx.count("cp.async.commit_group"), ptx.count("cp.async.wait_group 0"))
"""


def test_the_kernel_compiles_to_the_instructions_for_sm90():
    env = {**os.environ, "TILEDLAB_BACKEND": "gpu", "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    run = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT], capture_output=True, text=True, env=env,
                         cwd=root, timeout=300)
    if run.returncode and ("NvvmSupportError" in run.stderr or "DynamicLibNotFound" in run.stderr):
        pytest.skip("numba's CUDA target needs CUDA's libraries to compile: " + run.stderr[-200:])
    if run.returncode and "has no attribute 'row_stack'" in run.stderr:
        pytest.skip("numba-cuda 0.30's CUDA target needs numpy < 2.5; only its simulator runs on 2.5")
    assert run.returncode == 0, run.stderr
    out = dict(line.split(" ", 1) for line in run.stdout.splitlines())
    assert int(out["IR"]) == 3  # copy, commit, wait: inline assembly in the IR numba hands to NVVM
    if "PTX" not in out:
        pytest.skip("no PTX here (NVVM or NVRTC missing): " + out["NO"])
    assert out["PTX"].split() == ["1", "1", "1", "1"], out


@gpu_only
@pytest.mark.parametrize("M,K,N", [(13, 20, 12), (256, 128, 96)])
def test_on_a_gpu_the_sass_has_128_bit_loads_and_async_copies(rng, M, K, N):
    from tools.measure.sass import sass_text
    A, B = operands(rng, M, K, N)
    launch = prepare(tiled_wide, A, B, T)()
    np.testing.assert_allclose(launch.result(), A @ B, rtol=1e-4, atol=1e-4)
    sass, how = sass_text(next(iter(launch.kernel.overloads.values())))
    if sass is None:
        pytest.skip(f"no SASS: {how}")
    assert "LDG.E.128" in sass and "LDGSTS" in sass and "LDGDEPBAR" in sass, sass


@gpu_only
def test_on_a_gpu_the_async_copies_and_waits_are_right(rng):
    A, B = operands(rng, 40, 36, 36)
    np.testing.assert_array_equal(prepare(copy_kernel(wait=True), A, B)().result(), A)
    A, B = operands(rng, 32, 32, 32)
    np.testing.assert_array_equal(prepare(two_stages, A, B)().result(), A + B)
    c = count_loads(tiled_wide, *operands(rng, 13, 20, 12), T)  # the counting build, with the real instructions
    assert {"A": c.A, "B": c.B} == formulas.tiled_loads(13, 20, 12, T) and not any(c.hazards.values())


def test_the_message_for_a_copy_in_flight_names_the_wait_not_a_barrier(rng):
    from tiledlab.counting.hazards import hazard_message
    A, B = operands(rng, 13, 12, 12)
    message = hazard_message(count_loads(copy_kernel(wait=False), A, B).hazards)
    assert message.startswith("156 copies in flight") and "cp_async_wait" in message and "syncthreads" not in message
    assert "barrier hazards" in hazard_message({"read_after_write": 2, "copy_in_flight": 0})
