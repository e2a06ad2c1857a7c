"""The lesson's two kernels with unsigned indices: the fair pair for measuring what tiling buys.

`naive_unsigned` and `tiled_unsigned` are `kernels.naive` and `kernels.tiled` line for line (the same
edge guards, loads, barriers and results); only their index arithmetic differs. Why it matters:
numba treats a signed index as possibly negative and wraps it like Python (`A[-1, 0]` is the last
row), so every array access with a signed index gets a compare, an add and a select. The lesson's
kernels index with signed integers (`cuda.threadIdx.x` and `range` counters are signed), and in the
naive kernel's loop that fix-up costs more than its two loads and one multiply-add. An unsigned index
cannot be negative, so numba adds nothing.

Why uint64 (and not uint32): numba computes integer arithmetic in at least 64 bits, so uint32 + uint32
is already uint64, and a signed operand makes the result signed: uint64 + 1 (an int64 literal) is
int64, and so is anything with the global `T`. So every value that reaches an index is uint64 from
the start: positions cast with `uint64(...)`, the tile width as `uint64(T)`, loop counters in `while`
loops (numba's `range` counts in int64) stepped by `ONE`. No signed value reaches A, B, C, sA or sB.
"""
from numba import cuda, float32, uint64

T = 16  # tile width, as in kernels.py (specialize() picks others)
ONE = uint64(1)  # the loop step: a bare 1 is an int64 and would make the counter signed


@cuda.jit
def naive_unsigned(A, B, C):
    # threadIdx.x → column, so neighbouring threads of a warp touch neighbouring addresses of B and C.
    col = uint64(cuda.blockIdx.x) * uint64(cuda.blockDim.x) + uint64(cuda.threadIdx.x)
    row = uint64(cuda.blockIdx.y) * uint64(cuda.blockDim.y) + uint64(cuda.threadIdx.y)
    if row < uint64(C.shape[0]) and col < uint64(C.shape[1]):
        acc = float32(0.0)
        K = uint64(A.shape[1])
        k = uint64(0)
        while k < K:
            acc += A[row, k] * B[k, col]  # two global loads for every multiply-add
            k += ONE
        C[row, col] = acc


@cuda.jit
def tiled_unsigned(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tile = uint64(T)
    tx = uint64(cuda.threadIdx.x)
    ty = uint64(cuda.threadIdx.y)
    row = uint64(cuda.blockIdx.y) * tile + ty
    col = uint64(cuda.blockIdx.x) * tile + tx
    M, K = uint64(A.shape[0]), uint64(A.shape[1])
    N = uint64(B.shape[1])
    acc = float32(0.0)
    k0 = uint64(0)
    while k0 < K:  # one trip per tile of K: (K + T - 1) // T of them, as in `tiled`
        # Cooperative load: each thread brings one element of A's tile and one of B's;
        # positions outside the matrices read as zero, so the edges need no special case below.
        sA[ty, tx] = A[row, k0 + tx] if row < M and k0 + tx < K else float32(0.0)
        sB[ty, tx] = B[k0 + ty, col] if k0 + ty < K and col < N else float32(0.0)
        cuda.syncthreads()  # the whole tile must be in shared memory before anyone reads it
        k = uint64(0)
        while k < tile:
            acc += sA[ty, k] * sB[k, tx]
            k += ONE
        cuda.syncthreads()  # nobody may overwrite the tile while a neighbour still reads it
        k0 += tile
    if row < M and col < N:
        C[row, col] = acc
