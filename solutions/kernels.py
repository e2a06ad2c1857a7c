"""Exercise solutions. Each kernel takes (A, B, C); T is bound by tiledlab for the tile width."""
from numba import cuda, float32

from tiledlab.core.kernels import tiled as tile_both  # 03 and 05: the answer is the lesson's own kernel

T = 4


@cuda.jit
def one_thread_per_element(A, B, C):  # 01: the naive kernel, written from scratch
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def tile_a_only(A, B, C):  # 02: stage only A's tile in shared memory; B still comes from global memory
    sA = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * T + ty
    col = cuda.blockIdx.x * T + tx
    M, K = A.shape
    acc = float32(0.0)
    for t in range((K + T - 1) // T):
        sA[ty, tx] = A[row, t * T + tx] if row < M and t * T + tx < K else float32(0.0)
        cuda.syncthreads()  # sA complete before use
        for k in range(T):
            if t * T + k < K and col < C.shape[1]:
                acc += sA[ty, k] * B[t * T + k, col]
        cuda.syncthreads()  # sA no longer needed before it is overwritten
    if row < M and col < C.shape[1]:
        C[row, col] = acc


@cuda.jit
def tile_b_only(A, B, C):  # 04: stage only B's tile in shared memory; A still comes from global memory
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * T + ty
    col = cuda.blockIdx.x * T + tx
    K, N = B.shape
    acc = float32(0.0)
    for t in range((K + T - 1) // T):
        sB[ty, tx] = B[t * T + ty, col] if t * T + ty < K and col < N else float32(0.0)
        cuda.syncthreads()  # sB complete before use
        for k in range(T):
            if t * T + k < K and row < C.shape[0]:
                acc += A[row, t * T + k] * sB[k, tx]
        cuda.syncthreads()  # sB no longer needed before it is overwritten
    if row < C.shape[0] and col < N:
        C[row, col] = acc


@cuda.jit
def blocked_loop(A, B, C):  # 06: the k loop in chunks of T, no shared memory: same loads as naive
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < C.shape[0] and col < C.shape[1]:
        K = A.shape[1]
        acc = float32(0.0)
        for t in range((K + T - 1) // T):
            for k in range(t * T, min(t * T + T, K)):
                acc += A[row, k] * B[k, col]
        C[row, col] = acc


def tile_b_only_loads(M, K, N, T):
    """B once per block row, A once per multiply-add."""
    return K * N * -(-M // T) + M * N * K


def tile_a_only_loads(M, K, N, T):
    """A once per block column, B once per multiply-add."""
    return M * K * -(-N // T) + M * N * K


# exercise → (solution, keyword arguments of tiledlab.check.check)
EXERCISES = {
    "01 naive from scratch": (one_thread_per_element, {"tiling": False}),
    "02 tile only A": (tile_a_only, {"max_loads": tile_a_only_loads}),
    "03 tiled from scratch": (tile_both, {}),
    "04 tile only B": (tile_b_only, {"max_loads": tile_b_only_loads}),
    "05 restore the missing barrier": (tile_both, {}),
    "06 loop blocking alone (not tiling)": (blocked_loop, {"tiling": False}),
}
