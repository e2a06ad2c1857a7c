import numpy as np
import pytest
from conftest import operands
from numba import cuda  # a global, as in a notebook: the simulator swaps module globals only

import tiledlab

SHAPES = [  # (M, K, N, T): square, odd, tiny, edge-heavy and degenerate shapes
    (5, 23, 7, 4), (8, 8, 8, 3), (1, 1, 1, 1), (33, 17, 65, 8), (64, 1, 64, 16), (16, 16, 16, 16),
    (7, 40, 3, 32),
]


@pytest.mark.parametrize("kernel", ["naive", "tiled"])
@pytest.mark.parametrize("M,K,N,T", SHAPES)
def test_matches_numpy(rng, kernel, M, K, N, T):
    A, B = operands(rng, M, K, N)
    C = tiledlab.matmul(A, B, kernel=kernel, tile=T)
    assert C.shape == (M, N) and C.dtype == np.float32
    np.testing.assert_allclose(C, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_non_contiguous_inputs_are_copied_not_misread(rng):
    A, B = operands(rng, 12, 10, 9)
    At = np.asfortranarray(A)
    Bs = np.ascontiguousarray(np.repeat(B, 2, axis=1))[:, ::2]  # a strided view equal to B
    assert not Bs.flags.c_contiguous
    np.testing.assert_allclose(tiledlab.matmul(At, Bs, "tiled", 4), A @ B, rtol=1e-5, atol=1e-5)


def test_specialize_binds_tile_width():
    k8, k8_again, k4 = (tiledlab.specialize(tiledlab.tiled, t) for t in (8, 8, 4))
    assert k8 is k8_again and k8 is not k4
    assert k8.py_func.__globals__["T"] == 8 and k4.py_func.__globals__["T"] == 4


def test_student_kernel_runs_through_matmul(rng):
    @cuda.jit
    def rows_times_cols(A, B, C):
        row, col = cuda.grid(2)[1], cuda.grid(2)[0]
        if row < C.shape[0] and col < C.shape[1]:
            acc = 0.0
            for k in range(A.shape[1]):
                acc += A[row, k] * B[k, col]
            C[row, col] = acc

    A, B = operands(rng, 6, 5, 4)
    np.testing.assert_allclose(tiledlab.matmul(A, B, rows_times_cols, 4), A @ B, rtol=1e-5, atol=1e-5)
