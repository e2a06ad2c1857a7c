"""A kernel that reads the product's sizes from globals outside it (hostile review 51, N3): notebook 1 leaves M, K =
5, 23 and N = 8 behind, and a kernel that forgets `M, K = A.shape` freezes them. check() said "reads A[0, 16],
outside A ... Guard this read", which cannot mend it; now the cause is named, for a global M, K or N and for another
whole number that acts as a size. The lab's constants, a kernel's own M, K, N and a guard's bound are not named."""
import re
import sys

import pytest
from numba import cuda, float32  # globals, as in a notebook

from tiledlab.counting.exercises import check

M, K, N = 5, 23, 8  # as notebook 1 leaves them (its cells 7 and 15)
T = 4
n = 16  # a size of the notebook's own (notebook 2 has n, T = 32, 8)
TS = 2  # a guard's bound


@cuda.jit
def sizes_from_globals(A, B, C):  # M, K and N never read from the arrays: the notebook's
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < M and col < N:
        acc = float32(0.0)
        for k in range(K):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def test_globals_named_as_the_sizes_are_named_where_a_guard_was_advised(capsys):
    assert not check(sizes_from_globals, tile=4, seed=0, limit_loads=False)
    out = capsys.readouterr().out
    assert re.search(r"reads A\[\d+, 16\], outside A", out), out  # the thread first said differs on a GPU
    assert "The kernel reads M = 5, K = 23, N = 8 from globals outside it, where this product has M = 16 (the rows of " \
           "A), K = 16 (the columns of A), N = 16 (the columns of B): read the sizes from the arrays in the kernel, " \
           "M, K = A.shape and N = B.shape[1]." in out


def test_globals_too_small_are_named_as_the_cause_of_a_wrong_product(capsys, monkeypatch):
    for name in "MKN":
        monkeypatch.setattr(sys.modules[__name__], name, 1)
    assert not check(sizes_from_globals, tile=4, seed=0, limit_loads=False)
    out = capsys.readouterr().out
    assert "Wrong result for A 5×23 · B 23×7" in out
    assert "The kernel reads M = 1, K = 1, N = 1 from globals outside it, where this product has M = 5" in out


@cuda.jit
def depth_from_a_global(A, B, C):  # M and N read from the arrays, K from the notebook's n
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < A.shape[0] and col < B.shape[1]:
        acc = float32(0.0)
        for k in range(n):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def test_another_global_that_acts_as_a_size_is_named(capsys, monkeypatch):
    assert not check(depth_from_a_global, tile=4, seed=0, limit_loads=False)  # right where K is 16
    out = capsys.readouterr().out
    assert "A 11×9 · B 9×5, tile=4: line " in out  # it reads A[0, 9]
    assert "The kernel reads n = 16 from globals outside it, where this product has K = 9 (the columns of A)" in out
    monkeypatch.setattr(sys.modules[__name__], "n", 1)
    assert not check(depth_from_a_global, tile=4, seed=0, limit_loads=False)  # wrong, reading nothing outside
    out = capsys.readouterr().out
    assert "Wrong result for A 5×23 · B 23×7" in out
    assert "The kernel reads n = 1 from globals outside it, where this product has K = 23 (the columns of A)" in out


@cuda.jit
def half_the_block(A, B, C):  # only threads with tx < TS store: a guard's bound, no size
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < A.shape[0] and col < B.shape[1] and cuda.threadIdx.x < TS:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def reset_each_step(A, B, C):  # the tiled kernel with acc set to 0 at every step; its M, K, N its own
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range((K + T - 1) // T):
        acc = float32(0.0)
        sA[ty, tx] = A[row, t * T + tx] if row < M and t * T + tx < K else float32(0.0)
        sB[ty, tx] = B[t * T + ty, col] if t * T + ty < K and col < N else float32(0.0)
        cuda.syncthreads()  # tiles complete
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # tiles read
    if row < M and col < N:
        C[row, col] = acc


@pytest.mark.parametrize("kernel, tile", [(half_the_block, 4), (reset_each_step, 4), (reset_each_step, 8)],
                         ids=["a guard's bound", "T, tile=4", "T, tile=8"])
def test_a_constant_a_guard_s_bound_and_the_kernel_s_own_sizes_are_not_named(capsys, kernel, tile):
    assert not check(kernel, tile=tile, seed=0, limit_loads=False)
    assert "from globals outside it" not in capsys.readouterr().out
