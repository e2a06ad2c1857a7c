"""Kernels that add into C with cuda.atomic.add (split-K): C starts at zero, each add is a load and a store of C,
threads adding into one element do not race, and both counts agree."""
import numpy as np
from numba import cuda, float32

from conftest import operands
from tiledlab.core import launch_geometry, matmul
from tiledlab.core.registry import KERNELS
from tiledlab.counting.count import count_loads

S = 3  # the parts K is split into


@launch_geometry(T=4)
@cuda.jit
def split_k(A, B, C):
    row = cuda.blockIdx.y * T + cuda.threadIdx.y
    col = cuda.blockIdx.x * T + cuda.threadIdx.x
    M, K = A.shape
    N = B.shape[1]
    if row < M and col < N:
        for s in range(S):
            acc = float32(0.0)
            for k in range(s, K, S):
                acc += A[row, k] * B[k, col]
            cuda.atomic.add(C, (row, col), acc)


def test_split_k_computes_the_product_from_a_zeroed_C(rng):
    A, B = operands(rng, 9, 7, 5)
    np.testing.assert_allclose(matmul(A, B, split_k, 4), A @ B, rtol=1e-5, atol=1e-5)


def test_each_add_is_a_load_and_a_store_of_C_and_no_race(rng):
    M, K, N = 9, 7, 5
    c = count_loads(split_k, *operands(rng, M, K, N), 4)
    assert (c.A, c.B) == (M * K * N, M * K * N)  # the naive kernel's loads, in S parts
    assert (c.maps["C"] == S).all() and (c.C_stores == S).all()
    assert c.C_races == []


def test_only_a_kernel_that_adds_into_C_starts_from_zero():
    assert split_k.bind().accumulates
    assert not KERNELS["tiled"].bind().accumulates
