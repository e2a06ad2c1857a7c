"""The kernel contract, enforced by the counting rewrite: count what it can, refuse the rest by line."""
import numpy as np
import pytest
from conftest import operands
from numba import cuda, float32  # globals, as in a notebook: the simulator swaps module globals only

import tiledlab
from tiledlab.counting import count_loads
from tiledlab.counting.buffers import TRACE_FIELDS, CountingBuffers
from tiledlab.counting.exercises import check
from tiledlab.counting.rewrite import instrumented_source

T = 4


@cuda.jit
def accumulate_in_shared(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    if row < C.shape[0] and col < C.shape[1]:
        sA[ty, tx] = float32(0.0)
        for k in range(A.shape[1]):
            sA[ty, tx] += A[row, k] * B[k, col]  # one shared read, one shared store, two global loads
        C[row, col] = sA[ty, tx]


@cuda.jit
def accumulate_in_C(A, B, C):
    row, col = cuda.grid(2)[1], cuda.grid(2)[0]
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = float32(0.0)
        for k in range(A.shape[1]):
            C[row, col] += A[row, k] * B[k, col]  # reads C as well: three global loads per step


@cuda.jit
def tuple_store(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    sA[ty, tx], sB[ty, tx] = A[ty, tx], B[ty, tx]
    cuda.syncthreads()  # tiles complete before use
    C[ty, tx] = sA[ty, tx] + sB[ty, tx]


@cuda.jit
def aliased_shared(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    alias = sA
    alias[0, 0] = A[0, 0]
    C[0, 0] = alias[0, 0]


@cuda.jit
def two_on_one_line(A, B, C):
    sA = cuda.shared.array((T, T), float32); sB = cuda.shared.array((T, T), float32)  # noqa: E702
    sA[0, 0] = A[0, 0]
    sB[0, 0] = B[0, 0]
    C[0, 0] = sA[0, 0] + sB[0, 0]


@cuda.jit
def renamed(X, Y, Z):  # a correct naive kernel whose arguments are not called A, B, C
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < Z.shape[0] and col < Z.shape[1]:
        acc = float32(0.0)
        for k in range(X.shape[1]):
            acc += X[row, k] * Y[k, col]
        Z[row, col] = acc


@cuda.jit
def four_arguments(A, B, C, D):
    C[0, 0] = A[0, 0]


def test_augmented_shared_write_is_counted(rng):
    M, K, N = 8, 5, 8
    A, B = operands(rng, M, K, N)
    c = count_loads(accumulate_in_shared, A, B, T)
    np.testing.assert_allclose(c.C, A @ B, rtol=1e-5, atol=1e-5)
    assert (c.shared_stores == 1 + K).all() and (c.shared_reads == K + 1).all()
    assert c.total == 2 * M * N * K
    assert "sA[ty, tx] +=" not in instrumented_source(accumulate_in_shared)


def test_augmented_global_write_counts_its_read(rng):
    M, K, N = 4, 3, 4
    A, B = operands(rng, M, K, N)
    c = count_loads(accumulate_in_C, A, B, T)
    np.testing.assert_allclose(c.C, A @ B, rtol=1e-5, atol=1e-5)
    assert int(c.maps["C"].sum()) == M * N * K and c.total == 2 * M * N * K


@pytest.mark.parametrize("kernel,message", [
    (tuple_store, r"line \d+: .*one shared-memory store per statement"),
    (aliased_shared, r"line \d+: .*only as sA\[i, j\]"),
])
def test_what_cannot_be_counted_is_refused_with_its_line(rng, kernel, message):
    A, B = operands(rng, 4, 4, 4)
    with pytest.raises(ValueError, match=message):
        count_loads(kernel, A, B, T)


def test_two_shared_arrays_on_one_line_are_refused_before_launch(rng):
    A, B = operands(rng, 4, 4, 4)
    with pytest.raises(ValueError, match=r"line \d+: 2 cuda.shared.array declarations on one line"):
        tiledlab.matmul(A, B, two_on_one_line, T)


def test_kernels_take_exactly_A_B_C(rng):
    A, B = operands(rng, 4, 4, 4)
    with pytest.raises(ValueError, match=r"exactly three arguments \(A, B, C\)"):
        tiledlab.matmul(A, B, four_arguments, T)


def test_counts_are_keyed_by_position_not_name(rng):
    A, B = operands(rng, 5, 7, 3)
    c = count_loads(renamed, A, B, T)
    assert (c.A, c.B) == (5 * 3 * 7, 5 * 3 * 7) and int(c.maps["C"].sum()) == 0
    assert check(renamed, tile=4, limit_loads=False)


def test_one_description_builds_and_reads_the_buffers():
    buffers = CountingBuffers({"sA": (4, 4), "sB": (4, 4)})
    names = buffers.parameters
    assert names[:3] == ["_tl_count_A", "_tl_count_B", "_tl_count_C"]
    assert names[-4:] == ["_tl_wrote_sA", "_tl_read_sA", "_tl_wrote_sB", "_tl_read_sB"]
    assert len(set(names)) == len(names)


def test_trace_has_named_fields(rng):
    A, B = operands(rng, 4, 4, 4)
    t = count_loads("tiled", A, B, 4, trace=True).trace
    assert t.dtype.names == TRACE_FIELDS
    assert set(t.operand) == {0, 1} and (t.seq >= 0).all() and len(t) == 2 * 4**3 // 4


@cuda.jit
def computed_shape(A, B, C):
    sA = cuda.shared.array((T, 2 * T), float32)
    sA[0, 0] = A[0, 0]
    C[0, 0] = sA[0, 0]


def test_a_shape_numba_cannot_compile_for_a_gpu_is_refused_here_too(rng):
    A, B = operands(rng, 4, 4, 4)
    with pytest.raises(ValueError, match=r"line \d+: array shape \(T, 2 \* T\).*constant of its own"):
        tiledlab.matmul(A, B, computed_shape, T)
