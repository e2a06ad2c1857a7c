"""Worked solutions to the kernel exercises. Each kernel takes (A, B, C); T is bound by tiledlab to the
tile width of the check, as in the notebooks."""
from numba import cuda, float32

from tiledlab.core.formulas import shared_traffic
from tiledlab.core import Rule, launch_geometry
from tiledlab.core.kernels import tiled as tile_both  # 5.1: the answer is the lesson's own kernel

T = 4
TM = 2  # 7.1: results per thread


@cuda.jit
def two_per_thread(A, B, C):  # 1.1: a value of A read once from global memory, used twice from a register
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1] and col % 2 == 0:
        right = col + 1 < C.shape[1]  # the last column may have no partner
        acc0 = float32(0.0)
        acc1 = float32(0.0)
        for k in range(A.shape[1]):
            a = A[row, k]
            acc0 += a * B[k, col]
            if right:
                acc1 += a * B[k, col + 1]
        C[row, col] = acc0
        if right:
            C[row, col + 1] = acc1


@cuda.jit
def tile_a_only(A, B, C):  # 2.1: stage only A's tile in shared memory; B still comes from global memory
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


@launch_geometry(T=4, T2=lambda T: 2 * T)
@cuda.jit
def two_tiles_per_phase(A, B, C):  # 3.1: 2T values of k per pair of barriers, same global loads
    sA = cuda.shared.array((T, T2), float32)
    sB = cuda.shared.array((T2, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * T + ty
    col = cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range((K + 2 * T - 1) // (2 * T)):
        for h in range(2):  # each thread brings two elements of each tile
            k0 = (2 * t + h) * T
            sA[ty, h * T + tx] = A[row, k0 + tx] if row < M and k0 + tx < K else float32(0.0)
            sB[h * T + ty, tx] = B[k0 + ty, col] if k0 + ty < K and col < N else float32(0.0)
        cuda.syncthreads()  # both tiles complete before anyone reads them
        for k in range(2 * T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # nobody overwrites the tiles while a neighbour still reads them
    if row < M and col < N:
        C[row, col] = acc


@cuda.jit
def blocked_loop(A, B, C):  # 6.1: the k loop in chunks of T, no shared memory: same loads as naive
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < C.shape[0] and col < C.shape[1]:
        K = A.shape[1]
        acc = float32(0.0)
        for t in range((K + T - 1) // T):
            for k in range(t * T, min(t * T + T, K)):
                acc += A[row, k] * B[k, col]
        C[row, col] = acc


@launch_geometry(threads=lambda T, TM: (T, T // TM), requires=[Rule(lambda T, TM: T % TM == 0, "TM rows per thread")],
                 T=4, TM=TM)
@cuda.jit
def column_tile(A, B, C):  # 7.1: a thread computes TM results of one column; one read of sB feeds TM of them
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    acc = cuda.local.array(TM, float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row0 = cuda.blockIdx.y * T + ty * TM  # this thread's rows: row0 … row0 + TM - 1
    col = cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    for i in range(TM):
        acc[i] = float32(0.0)
    for t in range((K + T - 1) // T):
        k0 = t * T
        for i in range(TM):  # T·T/TM threads fill the T×T tiles: TM elements of each per thread
            r = ty * TM + i
            sA[r, tx] = A[row0 + i, k0 + tx] if row0 + i < M and k0 + tx < K else float32(0.0)
            sB[r, tx] = B[k0 + r, col] if k0 + r < K and col < N else float32(0.0)
        cuda.syncthreads()  # both tiles complete before anyone reads them
        for k in range(T):
            b = sB[k, tx]  # one shared read, kept in a register for all TM results
            for i in range(TM):
                acc[i] += sA[ty * TM + i, k] * b
        cuda.syncthreads()  # nobody overwrites the tiles while a neighbour still reads them
    for i in range(TM):
        if row0 + i < M and col < N:
            C[row0 + i, col] = acc[i]


def two_per_thread_loads(M, K, N, T):
    """A once per pair of columns, B once per multiply-add."""
    return M * K * -(-N // 2) + M * N * K


def tile_a_only_loads(M, K, N, T):
    """A once per block column, B once per multiply-add."""
    return M * K * -(-N // T) + M * N * K


def column_tile_reads(M, K, N, T):
    """T×T tiles, TM results per thread: TM + 1 shared reads per k for TM multiply-adds."""
    return shared_traffic(M, K, N, T, T, T, TM)["reads"]


# exercise → (solution, keyword arguments of tiledlab.counting.exercises.check)
EXERCISES = {
    "1.1": (two_per_thread, {"max_loads": two_per_thread_loads}),
    "2.1": (tile_a_only, {"max_loads": tile_a_only_loads}),
    "3.1": (two_tiles_per_phase, {}),
    "5.1": (tile_both, {}),
    "6.1": (blocked_loop, {"limit_loads": False}),
}
EXERCISES["7.1"] = (column_tile, {"max_shared_reads": column_tile_reads})
