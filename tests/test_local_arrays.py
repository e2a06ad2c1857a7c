"""A cuda.local.array read before its thread stored it: FRESH (NaN) on the simulator, whatever numpy's memory held
before, and named by check() as the cause of a wrong product only where C was stored NaN by a kernel declaring one."""
import pytest
from conftest import source_line
from numba import cuda, float32  # globals, as in a notebook

import tiledlab
from tiledlab.counting.exercises import check

pytestmark = pytest.mark.skipif(not tiledlab.SIMULATOR, reason="a GPU's local arrays start with whatever was there")
T = 4
CAUSE = "is read before this thread stored it"


@cuda.jit
def unset_acc(A, B, C):  # exercise 4.3's stub: acc never set to 0
    acc = cuda.local.array(1, float32)
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        for k in range(A.shape[1]):
            acc[0] += A[row, k] * B[k, col]
        C[row, col] = acc[0]


@cuda.jit
def zeroed_acc(A, B, C):
    acc = cuda.local.array(1, float32)
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc[0] = 0.0
        for k in range(A.shape[1]):
            acc[0] += A[row, k] * B[k, col]
        C[row, col] = acc[0]


@cuda.jit
def zeroed_acc_last_row_unstored(A, B, C):
    acc = cuda.local.array(1, float32)
    col, row = cuda.grid(2)
    if row < C.shape[0] - 1 and col < C.shape[1]:  # the last row of C is never stored
        acc[0] = 0.0
        for k in range(A.shape[1]):
            acc[0] += A[row, k] * B[k, col]
        C[row, col] = acc[0]


@cuda.jit
def local_tiles(A, B, C):  # the tiles declared with cuda.local.array: each thread stores one element of its own
    sA = cuda.local.array((T, T), float32)
    sB = cuda.local.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range((K + T - 1) // T):
        sA[ty, tx] = A[row, t * T + tx] if row < M and t * T + tx < K else float32(0.0)
        sB[ty, tx] = B[t * T + ty, col] if t * T + ty < K and col < N else float32(0.0)
        cuda.syncthreads()  # tiles complete (were they shared)
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # tiles read
    if row < M and col < N:
        C[row, col] = acc


def test_an_accumulator_never_set_to_zero_is_named_with_its_line(capsys):
    assert not check(unset_acc, tile=T, limit_loads=False)
    said = capsys.readouterr().out
    line = source_line(unset_acc, "cuda.local.array")
    assert f"a local array (acc at line {line}) {CAUSE}" in said and "acc[i, j] = 0" in said, said


def test_tiles_declared_local_are_named_and_sent_to_shared_memory(capsys):
    assert not check(local_tiles, tile=T, limit_loads=False)
    said = capsys.readouterr().out
    lines = [source_line(local_tiles, f"{name} = cuda.local.array") for name in ("sA", "sB")]
    assert f"(sA at line {lines[0]}, sB at line {lines[1]}) {CAUSE}" in said, said
    assert "a tile the block's threads share goes in cuda.shared.array" in said, said


def test_a_local_array_set_before_use_passes(capsys):
    assert check(zeroed_acc, tile=T, limit_loads=False), capsys.readouterr().out


def test_an_element_of_C_never_stored_is_not_blamed_on_a_local_array(capsys):
    assert not check(zeroed_acc_last_row_unstored, tile=T, limit_loads=False)
    said = capsys.readouterr().out
    assert "Wrong result" in said and CAUSE not in said, said


def test_the_chinese_edition_names_the_local_array_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("TILEDLAB_LANG", "zh")
    assert not check(unset_acc, tile=T, limit_loads=False)
    said = capsys.readouterr().out
    line = source_line(unset_acc, "cuda.local.array")
    assert f"有一个局部数组（第 {line} 行的 acc）的元素在本线程写入它之前就被读取了" in said, said
