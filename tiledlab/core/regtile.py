"""Register tiling, written by hand: the first rungs of the ladder below shared memory.

In the tiled kernel every multiply-add reads two values from shared memory, and on the H200 those reads limit it.
A thread that computes several elements of C in registers makes each shared read feed several multiply-adds:
1. `regtile_1d`: TM elements of a column; per k, sB[k, tx] read once and used TM times: (TM + 1)/TM reads per FMA.
2. `regtile_2d`: a TM×TN block; per k, TM values of A and TN of B form an outer product: (TM + TN)/(TM·TN).
3. `regtile_vec`: the same, tiles laid out so that four values a thread needs are adjacent and 16-byte aligned:
   one 128-bit read (LDS.128) per four, a quarter of the instructions.
A block computes a BM×BN tile of C in steps of BK with (BN/TN)×(BM/TM) threads, which load its tiles together as
in the tiled kernel; edges are guarded as in the lesson. The next rungs are written by a program: see `unrolled`.
"""
from numba import cuda, float32

from .card import VEC
from .formulas import thread_tiles, threads_per_block
from .kernel import launch_geometry
from .rules import Rule
from ..i18n import N_

DERIVED = {  # from the constants given per kernel below, bound with them per build, like T
    "NTHREADS": threads_per_block,
    "TX": lambda BN, TN: BN // TN,                   # threads along x: blockDim.x
    "A_ROWS": lambda NTHREADS, BK: NTHREADS // BK,    # rows of A's BM×BK tile one pass of the block fills
    "A_PASSES": lambda BM, BK, NTHREADS: BM * BK // NTHREADS,  # passes (elements per thread) for A's tile
    "B_ROWS": lambda NTHREADS, BN: NTHREADS // BN,    # rows of B's BK×BN tile one pass fills
    "B_PASSES": lambda BK, BN, NTHREADS: BK * BN // NTHREADS,  # passes for B's tile
}
REQUIRES = (
    Rule(lambda BM, TM: BM % TM == 0, N_("a thread computes TM of the block's BM rows")),
    Rule(lambda BN, TN: BN % TN == 0, N_("a thread computes TN of the block's BN columns")),
    Rule(lambda NTHREADS, BM, BK: NTHREADS % BK == 0 and BM * BK % NTHREADS == 0,
         N_("the block's threads load A's BM×BK tile in whole passes of NTHREADS // BK rows")),
    Rule(lambda NTHREADS, BN, BK: NTHREADS % BN == 0 and BK * BN % NTHREADS == 0,
         N_("the block's threads load B's BK×BN tile in whole passes of NTHREADS // BN rows")),
)


def block_tile(BM, BN):
    return (BM, BN)  # a block computes a BM×BN tile of C


def register_tiled(requires=(), idea="", **constants):
    """The geometry all three kernels share: a BM×BN tile of C per block, (BN/TN)×(BM/TM) threads."""
    return launch_geometry(block=block_tile, threads=thread_tiles, requires=REQUIRES + tuple(requires), idea=idea,
                           family="ladder", **constants, **DERIVED)


@register_tiled(BM=64, BN=64, BK=8, TM=8, TN=1,
                requires=[Rule(lambda TN: TN == 1, N_("a thread computes one column of C"))],
                idea="a thread computes TM = 8 elements of one column: (TM + 1)/TM shared reads per FMA")
@cuda.jit
def regtile_1d(A, B, C):
    # blockDim = (BN, BM // TM): thread (ty, tx) computes column tx, rows ty*TM … ty*TM + TM - 1 of the tile.
    sA = cuda.shared.array((BM, BK), float32)
    sB = cuda.shared.array((BK, BN), float32)
    acc = cuda.local.array(TM, float32)  # TM results; a small local array indexed by unrolled loops lives in registers
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tid = ty * TX + tx
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    M, K = A.shape
    N = B.shape[1]
    for i in range(TM):
        acc[i] = float32(0.0)
    for k0 in range(0, K, BK):
        # Cooperative load, as in the tiled kernel; outside A and B, zeros.
        for p in range(A_PASSES):  # each pass fills A_ROWS rows; neighbouring threads read neighbouring k
            m = p * A_ROWS + tid // BK
            k = tid % BK
            sA[m, k] = A[row0 + m, k0 + k] if row0 + m < M and k0 + k < K else float32(0.0)
        for p in range(B_PASSES):  # each pass fills B_ROWS rows; neighbouring threads read neighbouring columns
            k = p * B_ROWS + tid // BN
            n = tid % BN
            sB[k, n] = B[k0 + k, col0 + n] if k0 + k < K and col0 + n < N else float32(0.0)
        cuda.syncthreads()  # the whole tile must be in shared memory before anyone reads it
        for k in range(BK):
            b = sB[k, tx]  # one shared read of B, used TM times from a register
            for i in range(TM):
                acc[i] += sA[ty * TM + i, k] * b
        cuda.syncthreads()  # nobody may overwrite the tiles while a neighbour still reads them
    col = col0 + tx
    for i in range(TM):
        row = row0 + ty * TM + i
        if row < M and col < N:
            C[row, col] = acc[i]


@register_tiled(BM=128, BN=128, BK=8, TM=8, TN=8,
                idea="a thread computes an 8×8 block: (TM + TN)/(TM·TN) = 1/4 shared read per FMA")
@cuda.jit
def regtile_2d(A, B, C):
    # blockDim = (BN // TN, BM // TM): thread (ty, tx) computes the TM×TN block of the tile at
    # rows ty*TM …, columns tx*TN ….
    sA = cuda.shared.array((BM, BK), float32)
    sB = cuda.shared.array((BK, BN), float32)
    acc = cuda.local.array((TM, TN), float32)  # the thread's TM×TN results, in registers
    a = cuda.local.array(TM, float32)  # step k's values of A for the thread's TM rows
    b = cuda.local.array(TN, float32)  # step k's values of B for its TN columns
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tid = ty * TX + tx
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    M, K = A.shape
    N = B.shape[1]
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = float32(0.0)
    for k0 in range(0, K, BK):
        for p in range(A_PASSES):  # each pass fills A_ROWS rows; neighbouring threads read neighbouring k
            m = p * A_ROWS + tid // BK
            k = tid % BK
            sA[m, k] = A[row0 + m, k0 + k] if row0 + m < M and k0 + k < K else float32(0.0)
        for p in range(B_PASSES):  # each pass fills B_ROWS rows; neighbouring threads read neighbouring columns
            k = p * B_ROWS + tid // BN
            n = tid % BN
            sB[k, n] = B[k0 + k, col0 + n] if k0 + k < K and col0 + n < N else float32(0.0)
        cuda.syncthreads()  # the whole tile must be in shared memory before anyone reads it
        for k in range(BK):
            for i in range(TM):
                a[i] = sA[ty * TM + i, k]
            for j in range(TN):
                b[j] = sB[k, tx * TN + j]
            for i in range(TM):  # TM + TN shared reads feed TM·TN multiply-adds: an outer product
                for j in range(TN):
                    acc[i, j] += a[i] * b[j]
        cuda.syncthreads()  # nobody may overwrite the tiles while a neighbour still reads them
    for i in range(TM):
        row = row0 + ty * TM + i
        for j in range(TN):
            col = col0 + tx * TN + j
            if row < M and col < N:
                C[row, col] = acc[i, j]


# A thread's TM rows are TM/4 groups of 4 neighbouring rows, BM/(TM/4) apart, its TN columns likewise; with sA
# transposed (sA[k, m]) a group's 4 values sit side by side. numba fuses the 4 reads into one 128-bit read when
# the arrays are 16-byte aligned, no index can be negative, and rows are padded by PAD floats (with rows of
# exactly 128 floats it fuses fewer). Neighbouring threads read neighbouring groups: no bank conflicts.
@register_tiled(BM=128, BN=128, BK=8, TM=8, TN=8, PAD=4, BM_PAD=lambda BM, PAD: BM + PAD,
                BN_PAD=lambda BN, PAD: BN + PAD,
                requires=[Rule(lambda TM, TN: TM % 4 == 0 and TN % 4 == 0,
                               N_("a thread's rows and columns come in groups of 4 (VEC), one 128-bit read each")),
                          Rule(lambda PAD: PAD % 4 == 0, N_("padded rows must stay 16-byte aligned"))],
                idea="A's tile transposed, aligned, padded: every shared read is one 128-bit load of 4 values")
@cuda.jit
def regtile_vec(A, B, C):
    sA = cuda.shared.array((BK, BM_PAD), float32, alignment=16)  # A's tile transposed: sA[k, m]
    sB = cuda.shared.array((BK, BN_PAD), float32, alignment=16)
    acc = cuda.local.array((TM, TN), float32)
    a = cuda.local.array(TM, float32)
    b = cuda.local.array(TN, float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tid = ty * TX + tx
    row0 = cuda.blockIdx.y * BM
    col0 = cuda.blockIdx.x * BN
    M, K = A.shape
    N = B.shape[1]
    for i in range(TM):
        for j in range(TN):
            acc[i, j] = float32(0.0)
    for k0 in range(0, K, BK):
        for p in range(A_PASSES):  # each pass fills A_ROWS rows; neighbouring threads read neighbouring k
            m = p * A_ROWS + tid // BK
            k = tid % BK
            sA[k, m] = A[row0 + m, k0 + k] if row0 + m < M and k0 + k < K else float32(0.0)
        for p in range(B_PASSES):  # each pass fills B_ROWS rows; neighbouring threads read neighbouring columns
            k = p * B_ROWS + tid // BN
            n = tid % BN
            sB[k, n] = B[k0 + k, col0 + n] if k0 + k < K and col0 + n < N else float32(0.0)
        cuda.syncthreads()  # the whole tile must be in shared memory before anyone reads it
        for k in range(BK):
            for i in range(TM):  # rows in groups of 4: one 128-bit read per group
                a[i] = sA[k, (i // VEC) * (BM // (TM // VEC)) + ty * VEC + i % VEC]
            for j in range(TN):
                b[j] = sB[k, (j // VEC) * (BN // (TN // VEC)) + tx * VEC + j % VEC]
            for i in range(TM):
                for j in range(TN):
                    acc[i, j] += a[i] * b[j]
        cuda.syncthreads()  # nobody may overwrite the tiles while a neighbour still reads them
    for i in range(TM):
        row = row0 + (i // VEC) * (BM // (TM // VEC)) + ty * VEC + i % VEC
        for j in range(TN):
            col = col0 + (j // VEC) * (BN // (TN // VEC)) + tx * VEC + j % VEC
            if row < M and col < N:
                C[row, col] = acc[i, j]
