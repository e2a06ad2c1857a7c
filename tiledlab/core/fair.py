"""The lesson's two kernels with unsigned indices: the fair pair for measuring what tiling buys.

They are `kernels.naive` and `kernels.tiled` line for line but for the index arithmetic. numba wraps a signed
index like Python (`A[-1, 0]` is the last row) with a compare, an add and a select per access, which in the naive
kernel's loop costs more than its loads; an unsigned index needs none. uint32, as a CUDA C programmer would write
(data/h200/bench.csv times these): numba sums in at least 64 bits, so counters are cast back, `k = uint32(k + ONE)`
(a signed operand would make the sum signed again), in `while` loops, since numba's `range` counts in int64.
"""
from numba import cuda, float32, uint32

T = 16  # tile width, as in kernels.py (specialize() picks others)
ONE = uint32(1)  # the loop step: a bare 1 is an int64 and would make the counter signed


@cuda.jit
def naive_unsigned(A, B, C):
    # threadIdx.x → column, so neighbouring threads of a warp touch neighbouring addresses of B and C.
    col = uint32(cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x)
    row = uint32(cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y)
    if row < uint32(C.shape[0]) and col < uint32(C.shape[1]):
        acc = float32(0.0)
        K = uint32(A.shape[1])
        k = uint32(0)
        while k < K:
            acc += A[row, k] * B[k, col]  # two global loads for every multiply-add
            k = uint32(k + ONE)
        C[row, col] = acc


@cuda.jit
def tiled_unsigned(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tile = uint32(T)
    tx = uint32(cuda.threadIdx.x)
    ty = uint32(cuda.threadIdx.y)
    row = uint32(cuda.blockIdx.y * tile + ty)
    col = uint32(cuda.blockIdx.x * tile + tx)
    M, K = uint32(A.shape[0]), uint32(A.shape[1])
    N = uint32(B.shape[1])
    acc = float32(0.0)
    k0 = uint32(0)
    while k0 < K:  # one trip per tile of K: (K + T - 1) // T of them, as in `tiled`
        # Cooperative load: each thread brings one element of A's tile and one of B's;
        # positions outside the matrices read as zero, so the edges need no special case below.
        sA[ty, tx] = A[row, k0 + tx] if row < M and k0 + tx < K else float32(0.0)
        sB[ty, tx] = B[k0 + ty, col] if k0 + ty < K and col < N else float32(0.0)
        cuda.syncthreads()  # the whole tile must be in shared memory before anyone reads it
        k = uint32(0)
        while k < tile:
            acc += sA[ty, k] * sB[k, tx]
            k = uint32(k + ONE)
        cuda.syncthreads()  # nobody may overwrite the tile while a neighbour still reads it
        k0 = uint32(k0 + tile)
    if row < M and col < N:
        C[row, col] = acc
