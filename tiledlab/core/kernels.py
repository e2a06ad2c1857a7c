"""The two kernels of the lesson. Every notebook shows, counts, times and tests exactly these.

The kernel contract: every kernel here, every student kernel and every kernel the counting lab rewrites keeps
these rules, and the code that relies on them enforces them (refusing what it cannot count):
1. Arguments `(A, B, C)` in that order, computing C = A @ B (M×K, K×N, M×N, float32, row-major); counts are
   keyed by position: the first argument is "A", whatever its name.
2. Compile-time constants (the tile width `T`) are module globals, frozen when numba compiles:
   `specialize(kernel, T=8)` builds the same source with T = 8. A kernel closes over no enclosing function's names.
3. Every element access is 2-D, `X[i, j]`, for A, B, C and shared arrays alike.
4. One `cuda.shared.array` declaration per line (the simulator keys shared arrays by line: two would be one).
5. Launch: T×T threads per block, one thread per element of C, `threadIdx.x` → column; a kernel that covers C
   otherwise says so with `@launch_geometry(...)` (core.kernel), which also names its constants.
6. No tuple or augmented store into a shared array: the counting lab counts one store per statement.
The register-tiled kernels (`regtile`, `unrolled`; `registry` names them all) keep the same rules.
"""
from numba import cuda, float32

T = 16  # tile width: a T×T block of threads computes one T×T tile of C (specialize() picks others)


@cuda.jit
def naive(A, B, C):
    # threadIdx.x → column, so neighbouring threads of a warp touch neighbouring addresses of B and C.
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]  # two global loads for every multiply-add
        C[row, col] = acc


@cuda.jit
def tiled(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * T + ty
    col = cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range((K + T - 1) // T):
        k0 = t * T
        # Cooperative load: each thread brings one element of A's tile and one of B's;
        # positions outside the matrices read as zero, so the edges need no special case below.
        sA[ty, tx] = A[row, k0 + tx] if row < M and k0 + tx < K else float32(0.0)
        sB[ty, tx] = B[k0 + ty, col] if k0 + ty < K and col < N else float32(0.0)
        cuda.syncthreads()  # the whole tile must be in shared memory before anyone reads it
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # nobody may overwrite the tile while a neighbour still reads it
    if row < M and col < N:
        C[row, col] = acc
