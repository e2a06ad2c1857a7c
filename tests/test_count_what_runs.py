"""The count and the check run the program that runs: the compiled function as it is now, with its
globals as they are now, at the constants it was bound to; the rewrite keeps its semantics; and every
counted launch computes the product."""
import importlib
import sys
import textwrap

import numpy as np
import pytest
from conftest import operands
from numba import cuda, float32  # globals, as in a notebook: the simulator swaps module globals only

import tiledlab
from tiledlab.core.launch import specialize
from tiledlab.counting import count_loads
from tiledlab.counting.cachesim import address_stream
from tiledlab.counting.exercises import COUNT_SHAPES, check

T = 4
REPEAT = 1  # a global the kernel below reads: changed by a test after a count


@cuda.jit
def repeated(A, B, C):  # the naive kernel, run REPEAT times over k: REPEAT · 2MNK loads
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for r in range(REPEAT):
            for k in range(A.shape[1]):
                acc += A[row, k] * B[k, col]
        C[row, col] = acc / float32(REPEAT)


def test_a_global_changed_after_a_count_is_the_one_counted_and_run(rng, monkeypatch):
    M, K, N = 4, 5, 6
    A, B = operands(rng, M, K, N)
    assert count_loads(repeated, A, B, T).total == 2 * M * N * K
    monkeypatch.setitem(globals(), "REPEAT", 3)
    c = count_loads(repeated, A, B, T)
    assert c.total == 3 * 2 * M * N * K
    np.testing.assert_allclose(tiledlab.matmul(A, B, repeated, T), c.C, rtol=1e-6)


MODULE = '''
from numba import cuda, float32

@cuda.jit
def edited(A, B, C):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
'''


def test_a_kernel_whose_file_changed_since_import_is_refused_not_counted(rng, tmp_path, monkeypatch, capsys):
    path = tmp_path / "student_kernels.py"
    path.write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("student_kernels")
    A, B = operands(rng, 4, 4, 4)
    assert count_loads(module.edited, A, B, T).total == 2 * 4 ** 3
    path.write_text(MODULE.replace("acc += A[row, k] * B[k, col]", "acc += A[row, 0] * B[0, col]  # edited"))
    with pytest.raises(ValueError, match=r"kernel edited: .*student_kernels.py changed since the kernel was defined.*"
                                         r"import it again"):
        count_loads(module.edited, A, B, T)
    assert not check(module.edited, tile=T, limit_loads=False)
    assert "changed since the kernel was defined" in capsys.readouterr().out
    sys.modules.pop("student_kernels")


def test_a_kernel_moved_down_its_file_is_refused_too(rng, tmp_path, monkeypatch):
    path = tmp_path / "moved_kernels.py"
    path.write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("moved_kernels")
    path.write_text("\n\n" + MODULE)  # the same code two lines lower: the lines a message names would be wrong
    with pytest.raises(ValueError, match="changed since the kernel was defined"):
        count_loads(module.edited, *operands(rng, 4, 4, 4), T)
    sys.modules.pop("moved_kernels")


def nested_kernel():
    @cuda.jit
    def inner(A, B, C):  # defined inside a function, with no closure: its source is read in place
        C[0, 0] = A[0, 0] * B[0, 0]
    return inner


def test_a_kernel_defined_inside_a_function_is_read_as_it_runs(rng):
    A, B = operands(rng, 2, 2, 2)
    assert count_loads(nested_kernel(), A, B, 2).total == 2 * 4  # every thread stores C[0, 0]: 4 threads


@pytest.mark.parametrize("given", [dict(), dict(tile=8), dict(T=8)])
def test_a_specialized_kernel_counts_at_its_own_constants(rng, given):
    A, B = operands(rng, 16, 16, 16)
    c = count_loads(specialize(tiledlab.tiled, T=8), A, B, **given)
    assert c.tile == 8 and c.total == 2 * 16 ** 3 // 8
    np.testing.assert_allclose(tiledlab.matmul(A, B, specialize("tiled", 8)), A @ B, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("run", [lambda k, A, B: count_loads(specialize(k, T=8), A, B, 4),
                                 lambda k, A, B: count_loads(specialize(k, T=8), A, B, T=4),
                                 lambda k, A, B: tiledlab.matmul(A, B, specialize(k, T=8), 4),
                                 lambda k, A, B: count_loads(k, A, B, tile=4, T=8),
                                 lambda k, A, B: tiledlab.matmul(A, B, k, 4, T=8)])
def test_two_values_for_one_constant_are_refused(rng, run):
    with pytest.raises(ValueError, match=r"T=8.*T=4|tile=4 and T=8"):
        run(tiledlab.tiled, *operands(rng, 8, 8, 8))


@cuda.jit
def index_with_a_load(A, B, C):  # accumulates in C at a column computed from a load of A
    row, col = cuda.grid(2)[1], cuda.grid(2)[0]
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = float32(0.0)
        for k in range(A.shape[1]):
            C[row, col + int(A[0, 0] * float32(0.0))] += A[row, k] * B[k, col]


def test_an_augmented_store_evaluates_its_index_once(rng):
    M, K, N = 4, 3, 5
    A, B = operands(rng, M, K, N)
    c = count_loads(index_with_a_load, A, B, T)
    assert c.maps["A"][0, 0] == M * N * K + N  # one load of A[0, 0] per +=, MNK of them, and row 0 reads it N times
    assert c.total == 2 * M * N * K + M * N * K and int(c.maps["C"].sum()) == M * N * K
    np.testing.assert_allclose(c.C, A @ B, rtol=1e-5, atol=1e-5)


@cuda.jit
def skips_the_counted_shapes(A, B, C):  # naive, but wrong at exactly the shapes check() counts (M, K and N)
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        if not (C.shape[0] == 16 and A.shape[1] == 16 and C.shape[1] == 16
                or C.shape[0] == 12 and A.shape[1] == 20 and C.shape[1] == 9):
            for k in range(A.shape[1]):
                acc += A[row, k] * B[k, col]
        C[row, col] = acc


def test_every_counted_launch_is_compared_with_numpy(capsys):
    assert {(16, 16), (12, 9)} == {(M, N) for M, K, N in COUNT_SHAPES}
    assert not check(skips_the_counted_shapes, tile=T, limit_loads=False)
    out = capsys.readouterr().out
    assert "Wrong result for A 16×16 · B 16×16 with tile=4, a counted launch" in out and "Passed." not in out


def test_the_cache_model_puts_C_apart_from_B(rng):
    from test_rewrite import accumulate_in_C
    M, K, N = 4, 3, 4
    c = count_loads(accumulate_in_C, *operands(rng, M, K, N), T, trace=True)
    lines = address_stream(c, line_bytes=4)  # one float per line: a line is an element's address
    operand = c.trace[np.lexsort((c.trace.tx, c.trace.ty, c.trace.seq, c.trace.bx, c.trace.by))].operand
    a, b, cs = (set(lines[operand == k].tolist()) for k in range(3))
    assert a == set(range(M * K)) and b == set(range(M * K, M * K + K * N))
    assert cs == set(range(M * K + K * N, M * K + K * N + M * N))
