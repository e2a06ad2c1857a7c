"""Worked solutions to the kernel exercises. Each kernel takes (A, B, C); T is bound by tiledlab to the
tile width of the check, as in the notebooks."""
from numba import cuda, float32

from tiledlab.core.formulas import block_tile_loads, shared_reads_per_fma, shared_traffic, tiled_loads
from tiledlab.core import Rule, launch_geometry

T = 4
TM = 2  # 7.1: results per thread


@launch_geometry(threads=lambda T: (T // 2, T), requires=[Rule(lambda T: T % 2 == 0, "two columns per thread")], T=4)
@cuda.jit
def two_per_thread(A, B, C):  # 1.1: thread coarsening, two neighbouring columns per thread, T/2 threads along x
    col = 2 * (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x)  # this thread's columns: col, col + 1
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        right = col + 1 < C.shape[1]  # the last column may have no partner
        acc0 = float32(0.0)
        acc1 = float32(0.0)
        for k in range(A.shape[1]):
            a = A[row, k]  # one global load, used for both columns from a register
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
            if t * T + k < K and row < M and col < C.shape[1]:  # rows past M need no B
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


@launch_geometry(T=4, T2=lambda T: 2 * T)
@cuda.jit
def one_barrier(A, B, C):  # 5.1: two buffers, alternate steps: one barrier per tile step is enough
    sA = cuda.shared.array((T2, T), float32)
    sB = cuda.shared.array((T2, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * T + ty
    col = cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range((K + T - 1) // T):
        s = (t % 2) * T  # the half of sA and sB this step fills: the other one holds the step before
        sA[s + ty, tx] = A[row, t * T + tx] if row < M and t * T + tx < K else float32(0.0)
        sB[s + ty, tx] = B[t * T + ty, col] if t * T + ty < K and col < N else float32(0.0)
        cuda.syncthreads()  # this step's tiles complete before use; and every thread is done with step t - 1
        for k in range(T):
            acc += sA[s + ty, k] * sB[s + k, tx]
    if row < M and col < N:
        C[row, col] = acc


@launch_geometry(block=lambda T: (T, 2 * T), T=4, T2=lambda T: 2 * T)
@cuda.jit
def wide_tile(A, B, C):  # 3.3: a T×2T tile of C per block of T×T threads: A's tile serves 2T columns
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T2), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * T + ty
    col = cuda.blockIdx.x * T2 + tx  # this thread's columns: col and col + T (a warp's loads stay contiguous)
    M, K = A.shape
    N = B.shape[1]
    acc0 = float32(0.0)
    acc1 = float32(0.0)
    for t in range((K + T - 1) // T):
        k0 = t * T
        sA[ty, tx] = A[row, k0 + tx] if row < M and k0 + tx < K else float32(0.0)
        sB[ty, tx] = B[k0 + ty, col] if k0 + ty < K and col < N else float32(0.0)
        sB[ty, tx + T] = B[k0 + ty, col + T] if k0 + ty < K and col + T < N else float32(0.0)
        cuda.syncthreads()  # both tiles complete before anyone reads them
        for k in range(T):
            a = sA[ty, k]
            acc0 += a * sB[k, tx]
            acc1 += a * sB[k, tx + T]
        cuda.syncthreads()  # nobody overwrites the tiles while a neighbour still reads them
    if row < M and col < N:
        C[row, col] = acc0
    if row < M and col + T < N:
        C[row, col + T] = acc1


@launch_geometry(block=lambda T: (2 * T, 2 * T), T=4, T2=lambda T: 2 * T)
@cuda.jit
def big_tile(A, B, C):  # 4.3: a 2T×2T tile of C per block of T×T threads, four results per thread
    sA = cuda.shared.array((T2, T), float32)
    sB = cuda.shared.array((T, T2), float32)
    acc = cuda.local.array((2, 2), float32)  # rows row, row + T × columns col, col + T
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * T2 + ty
    col = cuda.blockIdx.x * T2 + tx
    M, K = A.shape
    N = B.shape[1]
    for i in range(2):
        for j in range(2):
            acc[i, j] = float32(0.0)
    for t in range((K + T - 1) // T):
        k0 = t * T
        for h in range(2):  # T×T threads fill 2T×T and T×2T tiles: two elements of each per thread
            sA[ty + h * T, tx] = A[row + h * T, k0 + tx] if row + h * T < M and k0 + tx < K else float32(0.0)
            sB[ty, tx + h * T] = B[k0 + ty, col + h * T] if k0 + ty < K and col + h * T < N else float32(0.0)
        cuda.syncthreads()  # both tiles complete before anyone reads them
        for k in range(T):
            for i in range(2):
                for j in range(2):
                    acc[i, j] += sA[ty + i * T, k] * sB[k, tx + j * T]
        cuda.syncthreads()  # nobody overwrites the tiles while a neighbour still reads them
    for i in range(2):
        for j in range(2):
            if row + i * T < M and col + j * T < N:
                C[row + i * T, col + j * T] = acc[i, j]


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


@launch_geometry(threads=lambda T, TM, TN: (T // TN, T // TM),
                 requires=[Rule(lambda T, TM, TN: T % TM == 0 and T % TN == 0, "a thread computes TM×TN of the T×T tile")],
                 T=4, TM=2, TN=2)
@cuda.jit
def outer_product(A, B, C):  # 7.3: a TM×TN block of C per thread: TM + TN shared reads feed TM·TN multiply-adds
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    acc = cuda.local.array((TM, TN), float32)
    a = cuda.local.array(TM, float32)  # step k's values of A for the thread's TM rows
    b = cuda.local.array(TN, float32)  # and of B for its TN columns
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row0 = cuda.blockIdx.y * T + ty * TM  # this thread's rows row0 …, columns col0 …
    col0 = cuda.blockIdx.x * T + tx * TN
    M, K = A.shape
    N = B.shape[1]
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = float32(0.0)
    for t in range((K + T - 1) // T):
        k0 = t * T
        for i in range(TM):  # (T/TM)·(T/TN) threads fill the T×T tiles: TM·TN elements of each per thread
            for j in range(TN):
                r = ty * TM + i
                c = tx * TN + j
                sA[r, c] = A[row0 + i, k0 + c] if row0 + i < M and k0 + c < K else float32(0.0)
                sB[r, c] = B[k0 + r, col0 + j] if k0 + r < K and col0 + j < N else float32(0.0)
        cuda.syncthreads()  # both tiles complete before anyone reads them
        for k in range(T):
            for i in range(TM):
                a[i] = sA[ty * TM + i, k]
            for j in range(TN):
                b[j] = sB[k, tx * TN + j]
            for i in range(TM):  # the outer product: every value read once, used TN (or TM) times
                for j in range(TN):
                    acc[i, j] += a[i] * b[j]
        cuda.syncthreads()  # nobody overwrites the tiles while a neighbour still reads them
    for i in range(TM):
        for j in range(TN):
            if row0 + i < M and col0 + j < N:
                C[row0 + i, col0 + j] = acc[i, j]


def two_per_thread_loads(M, K, N, T):
    """A once per pair of columns, B once per multiply-add."""
    return M * K * -(-N // 2) + M * N * K


def tile_a_only_loads(M, K, N, T):
    """A once per block column, B once per multiply-add."""
    return M * K * -(-N // T) + M * N * K


def column_tile_reads(M, K, N, T):
    """T×T tiles, TM results per thread: TM + 1 shared reads per k for TM multiply-adds."""
    return shared_traffic(M, K, N, T, T, T, TM)["reads"]


def wide_tile_loads(M, K, N, T):
    """A T×2T block tile: A once per pair of block columns, B once per block row."""
    return sum(block_tile_loads(M, K, N, T, 2 * T).values())


def big_tile_loads(M, K, N, T):
    """What the tiled kernel would load with tiles of 2T: a 2T×2T block tile."""
    return sum(tiled_loads(M, K, N, 2 * T).values())


HALF_THE_TILED_READS = shared_reads_per_fma(1, 1) / 2  # 7.3: one shared read per multiply-add


# exercise → (solution, keyword arguments of tiledlab.counting.exercises.check)
EXERCISES = {
    "1.1": (two_per_thread, {"max_loads": two_per_thread_loads}),
    "2.1": (tile_a_only, {"max_loads": tile_a_only_loads, "from_global": "B"}),
    "3.1": (two_tiles_per_phase, {"barriers_per_step": 2, "tiles_per_step": 2}),
    "3.3": (wide_tile, {"max_loads": wide_tile_loads}),
    "4.3": (big_tile, {"max_loads": big_tile_loads}),
    "5.1": (one_barrier, {"barriers_per_step": 1}),
    "6.1": (blocked_loop, {"limit_loads": False, "shared_memory": False}),
}
EXERCISES["7.1"] = (column_tile, {"max_shared_reads": column_tile_reads})
EXERCISES["7.3"] = (outer_product, {"max_shared_reads_per_fma": HALF_THE_TILED_READS})
