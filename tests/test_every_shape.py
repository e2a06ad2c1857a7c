"""check() at every shape: kernels students really write that are right where every tile is whole and wrong
where one is partial, or wrong in a way only a cause can explain. Each must fail, saying what, where and what to
do; each right kernel must still pass. (Issue 36: check() counted only at shapes without a partial tile.)"""
import re

import numpy as np
import pytest
from numba import cuda, float32  # globals, as in a notebook

from tiledlab.core import launch_geometry
from tiledlab.counting.exercises import COUNT_SHAPES, check, count_shapes

T = 4


@cuda.jit
def leftover_from_global(A, B, C):  # tiles of whole steps; the K % T leftover read straight from global memory
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range(K // T):
        sA[ty, tx] = A[row, t * T + tx] if row < M else float32(0.0)
        sB[ty, tx] = B[t * T + ty, col] if col < N else float32(0.0)
        cuda.syncthreads()  # tiles complete
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # tiles read
    if row < M and col < N:
        for k in range(K // T * T, K):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def clamped_rows(A, B, C):  # rows past the edge clamped to the last row instead of guarded
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    M, K = A.shape
    N = B.shape[1]
    row, col = min(cuda.blockIdx.y * T + ty, M - 1), cuda.blockIdx.x * T + tx
    acc = float32(0.0)
    for t in range((K + T - 1) // T):
        sA[ty, tx] = A[row, t * T + tx] if t * T + tx < K else float32(0.0)
        sB[ty, tx] = B[t * T + ty, col] if t * T + ty < K and col < N else float32(0.0)
        cuda.syncthreads()  # tiles complete
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # tiles read
    if col < N:
        C[row, col] = acc


@cuda.jit
def barriers_in_the_row_guard(A, B, C):  # exercise 2.1 with both barriers inside `if row < M`
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    if row < M:
        acc = float32(0.0)
        for t in range((K + T - 1) // T):
            sA[ty, tx] = A[row, t * T + tx] if t * T + tx < K else float32(0.0)
            sB[ty, tx] = B[t * T + ty, col] if t * T + ty < K and col < N else float32(0.0)
            cuda.syncthreads()  # tiles complete: not for rows past M
            for k in range(T):
                acc += sA[ty, k] * sB[k, tx]
            cuda.syncthreads()  # tiles read
        if col < N:
            C[row, col] = acc


@cuda.jit
def drops_the_partial_step(A, B, C):  # range(K // T): K's last, partial tile is lost
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range(K // T):
        sA[ty, tx] = A[row, t * T + tx] if row < M else float32(0.0)
        sB[ty, tx] = B[t * T + ty, col] if col < N else float32(0.0)
        cuda.syncthreads()  # tiles complete
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # tiles read
    if row < M and col < N:
        C[row, col] = acc


@cuda.jit
def swapped_store(A, B, C):  # sA[tx, ty] where the tile is read as sA[ty, k]
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range((K + T - 1) // T):
        sA[tx, ty] = A[row, t * T + tx] if row < M and t * T + tx < K else float32(0.0)
        sB[ty, tx] = B[t * T + ty, col] if t * T + ty < K and col < N else float32(0.0)
        cuda.syncthreads()  # tiles complete
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # tiles read
    if row < M and col < N:
        C[row, col] = acc


@cuda.jit
def stores_each_step(A, B, C):  # C[row, col] = this step's sum, stored once per step: only the last stays
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    for t in range((K + T - 1) // T):
        sA[ty, tx] = A[row, t * T + tx] if row < M and t * T + tx < K else float32(0.0)
        sB[ty, tx] = B[t * T + ty, col] if t * T + ty < K and col < N else float32(0.0)
        cuda.syncthreads()  # tiles complete
        acc = float32(0.0)
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        if row < M and col < N:
            C[row, col] = acc
        cuda.syncthreads()  # tiles read


@cuda.jit
def first_block_loads_the_panel(A, B, C):  # block (0, 0) stores B in shared memory; the others read it there
    sB = cuda.shared.array((16, 16), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    if cuda.blockIdx.x == 0 and cuda.blockIdx.y == 0:
        for k in range(ty, K, T):
            for c in range(tx, N, T):
                sB[k, c] = B[k, c]
    cuda.syncthreads()  # the panel is stored
    if row < M and col < N:
        acc = float32(0.0)
        for k in range(K):
            acc += A[row, k] * sB[k, col]
        C[row, col] = acc


T2 = 2 * T


@cuda.jit
def reads_the_wrong_half(A, B, C):  # exercise 5.1 with two buffers: stores at s·T + ty, reads without the offset
    sA = cuda.shared.array((T2, T), float32)
    sB = cuda.shared.array((T2, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range((K + T - 1) // T):
        s = t % 2
        sA[s * T + ty, tx] = A[row, t * T + tx] if row < M and t * T + tx < K else float32(0.0)
        sB[s * T + ty, tx] = B[t * T + ty, col] if t * T + ty < K and col < N else float32(0.0)
        cuda.syncthreads()  # this step's tiles complete
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
    if row < M and col < N:
        C[row, col] = acc


def out(capsys):
    return capsys.readouterr().out


def test_the_counted_shapes_have_a_partial_block_in_every_dimension():
    for tile in (2, 4, 8, 16):
        partial = count_shapes("tiled", tile)[len(COUNT_SHAPES):]
        assert len(partial) == 3 and all(n % tile for shape in partial for n in shape), (tile, partial)
        assert all(n < tile for n in partial[-1]), partial  # one partial block, one partial step
    assert count_shapes("tiled", 4)[:len(COUNT_SHAPES)] == COUNT_SHAPES


def test_the_lesson_kernel_passes_at_every_counted_shape(capsys):
    from tiledlab import tiled
    assert check(tiled, tile=4), out(capsys)
    said = out(capsys)
    assert "13×19·19×11, tile=4: 1,577" in said  # the tiled formula at a partial shape


def test_leftover_columns_from_global_memory_exceed_the_loads(capsys):
    assert not check(leftover_from_global, tile=4)
    said = out(capsys)
    assert re.search(r"13×19·19×11, tile=4: [\d,]+ \(naive needs [\d,]+; this exercise allows 1,577\)", said), said
    assert "more than the 1,577 this exercise allows" in said


def test_clamped_rows_are_a_race_on_C(capsys):
    assert not check(clamped_rows, tile=4)
    said = out(capsys)
    assert re.search(r"C\[12, \d+\] is stored by two threads", said), said


def test_barriers_inside_the_row_guard_are_named(capsys):
    assert not check(barriers_in_the_row_guard, tile=4)
    said = out(capsys)
    assert "Take the barrier out of the condition" in said and "is reached by thread" in said, said


def test_a_lost_partial_step_is_named(capsys):
    assert not check(drops_the_partial_step, tile=4, limit_loads=False)
    said = out(capsys)
    assert "whose last tile step is partial" in said and "⌈K/T⌉" in said, said


def test_a_swapped_store_names_the_operand(capsys):
    assert not check(swapped_store, tile=4, limit_loads=False)
    said = out(capsys)
    assert "A's values reach the wrong place" in said and "Look at sA" in said, said
    assert re.search(r"line \d+: 'sA\[tx, ty\]'\) and the one it is read at \(line \d+: 'sA\[ty, k\]'", said), said


def test_a_store_per_step_names_the_stores(capsys):
    assert not check(stores_each_step, tile=4, limit_loads=False)
    said = out(capsys)
    assert re.search(r"C\[\d+, \d+\] is stored \d+ times by the thread that owns it", said), said


def test_shared_memory_a_block_did_not_store_is_named(capsys):
    assert not check(first_block_loads_the_panel, tile=4, limit_loads=False)
    said = out(capsys)
    assert "no thread of the block had stored" in said and re.search(r"reads sB\[\d+, \d+\] at line \d+", said), said


def test_exercise_5_1_never_advises_the_barrier_it_forbids(capsys):
    import nbformat
    import pathlib
    cell = next(c.source for c in nbformat.read(pathlib.Path(__file__).parents[1] / "notebooks" /
                                                "05_line_by_line.ipynb", as_version=4).cells
                if c.source.startswith("# Exercise 5.1"))
    import linecache
    linecache.cache["<exercise 5.1>"] = (len(cell), None, cell.splitlines(True), "<exercise 5.1>")
    exec(compile(cell, "<exercise 5.1>", "exec"), {"__name__": "exercise_5_1"})
    said = out(capsys)
    assert "barrier hazards" in said and "second buffer" in said and "s·T" in said, said
    assert "add a cuda.syncthreads()" not in said and "is missing" not in said


def test_the_wrong_half_is_told_within_the_exercises_rules(capsys):
    assert not check(reads_the_wrong_half, tile=4, barriers_per_step=1)
    said = out(capsys)
    assert "add a cuda.syncthreads()" not in said and ("s·T" in said or "store every element" in said), said


# --- variants: without_write_back keeps the computation, once, and drops every store into C ------------------

@cuda.jit
def accumulates_in_C(A, B, C):
    row, col = cuda.blockIdx.y * T + cuda.threadIdx.y, cuda.blockIdx.x * T + cuda.threadIdx.x
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = 0.0
        for k in range(A.shape[1]):
            C[row, col] += A[row, k] * B[k, col]


def test_without_write_back_drops_accumulated_stores_and_counts_the_loads_once():
    from tiledlab.counting import count_loads
    from tiledlab.counting.variants import without_write_back
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((4, 4), dtype=np.float32), rng.standard_normal((4, 4), dtype=np.float32)
    full, dropped = count_loads(accumulates_in_C, A, B, T), count_loads(without_write_back(accumulates_in_C), A, B, T)
    assert int(full.C_stores.sum()) == 4 * 4 * (1 + 4) and int(dropped.C_stores.sum()) == 0
    assert (dropped.A, dropped.B, int(dropped.maps["C"].sum())) == (full.A, full.B, int(full.maps["C"].sum()))
    plain = count_loads(without_write_back("tiled"), A, B, T)
    assert plain.total == count_loads("tiled", A, B, T).total and int(plain.C_stores.sum()) == 0


@cuda.jit
def adds_into_C_written_out(A, B, C):  # C[i, j] = C[i, j] + v: the += of accumulates_in_C, written out
    row, col = cuda.blockIdx.y * T + cuda.threadIdx.y, cuda.blockIdx.x * T + cuda.threadIdx.x
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = 0.0
        for k in range(A.shape[1]):
            C[row, col] = C[row, col] + A[row, k] * B[k, col]


def test_without_write_back_drops_a_written_out_accumulation_too():
    from tiledlab.counting import count_loads
    from tiledlab.counting.variants import without_write_back
    A = np.ones((4, 4), np.float32)
    dropped = count_loads(without_write_back(adds_into_C_written_out), A, A, T)
    assert int(dropped.C_stores.sum()) == 0 and dropped.total == 2 * 4 ** 3


# --- from a review of this round: each a kernel a student could write -----------------------------------------

@cuda.jit
def forgot_the_one_barrier(A, B, C):  # exercise 5.1: two buffers, and no barrier at all
    sA = cuda.shared.array((T2, T), float32)
    sB = cuda.shared.array((T2, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range((K + T - 1) // T):
        s = (t % 2) * T
        sA[s + ty, tx] = A[row, t * T + tx] if row < M and t * T + tx < K else float32(0.0)
        sB[s + ty, tx] = B[t * T + ty, col] if t * T + ty < K and col < N else float32(0.0)
        for k in range(T):
            acc += sA[s + ty, k] * sB[s + k, tx]
    if row < M and col < N:
        C[row, col] = acc


def test_a_kernel_below_the_exercises_barriers_is_told_to_add_one(capsys):
    assert not check(forgot_the_one_barrier, tile=4, barriers_per_step=1)
    said = out(capsys)
    assert "add a cuda.syncthreads()" in said and "second buffer" not in said, said


@cuda.jit
def loops_per_column(A, B, C):  # each thread loops only over the tiles its own column needs: passes differ
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range((K - tx + T - 1) // T + 1):
        sA[ty, tx] = A[row, t * T + tx] if row < M and t * T + tx < K else float32(0.0)
        sB[ty, tx] = B[t * T + ty, col] if t * T + ty < K and col < N else float32(0.0)
        cuda.syncthreads()  # tiles complete
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # tiles read
    if row < M and col < N:
        C[row, col] = acc


def test_a_barrier_reached_a_different_number_of_times_says_so(capsys):
    assert not check(loops_per_column, tile=4)
    said = out(capsys)
    assert re.search(r"is reached \d+ times by thread .* but \d+ times by thread", said), said
    assert "different numbers of passes" in said and "finished without reaching it" not in said


@cuda.jit
def accumulates_without_zero(A, B, C):  # C[row, col] += ... with no C[row, col] = 0 first
    row, col = cuda.blockIdx.y * T + cuda.threadIdx.y, cuda.blockIdx.x * T + cuda.threadIdx.x
    if row < C.shape[0] and col < C.shape[1]:
        for k in range(A.shape[1]):
            C[row, col] += A[row, k] * B[k, col]


def test_C_read_before_it_is_stored_is_named(capsys):
    assert not check(accumulates_without_zero, tile=4, limit_loads=False)
    said = out(capsys)
    assert "before anything was stored into it" in said and "set to 0" in said, said


@launch_geometry(block=lambda T: (T, T // 2), T=4, H=lambda T: T // 2)  # a T×T block for a T×T/2 tile of C
@cuda.jit
def two_threads_add(A, B, C):  # two threads per element of C, each adding half of K with cuda.atomic.add
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col, part = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * H + tx % H, tx // H
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(part, A.shape[1], 2):
            acc += A[row, k] * B[k, col]
        cuda.atomic.add(C, (row, col), acc)


def test_adds_by_several_threads_are_no_repeated_store(capsys):
    assert check(two_threads_add, tile=4, limit_loads=False)
    assert "stored more than once by the thread that owns it" not in out(capsys)


@cuda.jit
def whole_rows_of_a(A, B, C):  # exercise 2.1 with the block's rows of A kept whole: right only while K ≤ 32
    sA = cuda.shared.array((T, 32), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    for k in range(tx, K, T):
        if row < M:
            sA[ty, k] = A[row, k]
    cuda.syncthreads()  # the rows complete
    if row < M and col < N:
        acc = float32(0.0)
        for k in range(K):
            acc += sA[ty, k] * B[k, col]
        C[row, col] = acc


def test_a_shared_buffer_sized_for_small_matrices_is_written_past_its_end(capsys):
    """Every fixed shape has K ≤ 23 at tile 4: without a shape past the largest shared extent this kernel passed."""
    assert count_shapes(whole_rows_of_a, 4)[-3:] == [(37, 5, 5), (5, 37, 5), (5, 5, 37)]  # thin: not a 37³ cube
    assert check(whole_rows_of_a, tile=4, limit_loads=False) is False
    said = capsys.readouterr().out
    # whichever thread gets there first
    assert re.search(r"stores sA\[\d, 32\], outside sA \(4×32", said) and "A 5×37 · B 37×5" in said, said


@cuda.jit
def stale_columns_of_a(A, B, C):  # sA's columns past K left unstored (sB's rows there zero): right while K ≥ T
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range((K + T - 1) // T):
        if t * T + tx < K:
            sA[ty, tx] = A[row, t * T + tx] if row < M else float32(0.0)
        sB[ty, tx] = B[t * T + ty, col] if t * T + ty < K and col < N else float32(0.0)
        cuda.syncthreads()  # the tiles stored
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # the tiles read
    if row < M and col < N:
        C[row, col] = acc


@pytest.mark.parametrize("seed", range(4))
def test_a_read_never_stored_only_when_k_is_below_the_tile_fails_at_every_seed(capsys, seed):
    """Only at K < T does the first step read elements of sA no thread stored: a counted shape is that small."""
    assert check(stale_columns_of_a, tile=4, seed=seed) is False
    said = capsys.readouterr().out
    assert "A 3×3 · B 3×2, tile=4: 16 reads of shared elements no thread of the block had stored" in said, said


@cuda.jit
def guarded_without_zeros(A, B, C):  # loads guarded, no zeros stored past the edges: threads past N read unstored sB
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for k0 in range(0, K, T):
        if row < M and k0 + tx < K:
            sA[ty, tx] = A[row, k0 + tx]
        if k0 + ty < K and col < N:
            sB[ty, tx] = B[k0 + ty, col]
        cuda.syncthreads()  # the tiles stored
        for k in range(min(T, K - k0)):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # the tiles read
    if row < M and col < N:
        C[row, col] = acc


DISCARDED = "That thread stores no element of C, so the value it reads there is thrown away"


def test_an_unstored_read_by_a_thread_that_stores_no_c_is_said_to_be_thrown_away(capsys):
    """Hostile review 50, F1: right on a GPU, as what the threads past N read never reaches C; still refused (a value
    read there could steer a branch or an index), with what makes it right: skip those reads, or store zeros."""
    assert check(guarded_without_zeros, tile=4) is False
    said = capsys.readouterr().out
    assert "thread (ty=0, tx=1) reads sB[0, 1]" in said and f"{DISCARDED}; still, let every thread read only what " \
        "its block stored: skip that thread's reads (guard them as its store of C is guarded), or store zeros in " \
        "the tile's elements past the edges of A and B." in said, said
    assert check(stale_columns_of_a, tile=4, seed=0) is False  # a thread that stores C reads what no thread stored
    said = capsys.readouterr().out
    assert "no thread of the block had stored" in said and DISCARDED not in said, said


@pytest.mark.parametrize("kernel", ["tiled", "naive"])
def test_no_larger_shape_where_the_shapes_already_pass_every_shared_extent(kernel):
    assert all(max(shape) < 37 for shape in count_shapes(kernel, 4))


@cuda.jit
def skips_small_a(A, B, C):  # no shared memory; a careless "optimisation" drops the small values of A
    col, row = cuda.grid(2)
    M, K = A.shape
    N = B.shape[1]
    if row < M and col < N:
        acc = float32(0.0)
        for k in range(K):
            a = A[row, k]
            if a < 0.5:
                continue
            acc += a * B[k, col]
        C[row, col] = acc


def test_a_kernel_without_shared_memory_is_not_told_of_a_shared_tile(capsys):
    assert check(skips_small_a, tile=4, limit_loads=False, seed=1) is False
    said = capsys.readouterr().out
    assert "Look at every read of A in the kernel" in said and "shared tile" not in said


def test_exercise_3_1_refuses_the_plain_tiled_kernel_by_its_barriers(capsys):
    """Two tiles of K per pair of barriers: the lesson's kernel (a pair per tile) loads the same, but passes twice
    the barriers; the exercise's own kernel passes at K = 20 and 19, where the steps of 2T end in a partial one."""
    from solutions.kernels import EXERCISES
    from tiledlab import tiled
    kernel, options = EXERCISES["3.1"]
    assert options == {"barriers_per_step": 2, "tiles_per_step": 2}
    assert check(tiled, tile=4, **options) is False
    said = out(capsys)
    assert re.search(r"a thread passes \d+ cuda.syncthreads\(\) in \d+ steps of 2 tiles of K each; this exercise "
                     r"allows 2 per step", said), said
    assert check(kernel, tile=4, **options), out(capsys)


TILE = 16  # a tile width under a name of its own


@cuda.jit
def tiles_named_otherwise(A, B, C):  # notebook 2's tiled kernel with T spelled TILE
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * TILE + ty, cuda.blockIdx.x * TILE + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range((K + TILE - 1) // TILE):
        sA[ty, tx] = A[row, t * TILE + tx] if row < M and t * TILE + tx < K else float32(0.0)
        sB[ty, tx] = B[t * TILE + ty, col] if t * TILE + ty < K and col < N else float32(0.0)
        cuda.syncthreads()  # the tiles stored
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # the tiles read
    if row < M and col < N:
        C[row, col] = acc


def test_tiles_sized_without_t_are_said_so_not_blamed_on_unstored_reads(capsys):
    """check() launches T×T threads with T = tile: tiles of another width get advice that fixes them."""
    assert check(tiles_named_otherwise, tile=4) is False
    said = out(capsys)
    assert said.startswith("tiles_named_otherwise declares shared tiles but never reads T") and "tile (4)" in said
    assert "no thread of the block had stored" not in said, said


@cuda.jit
def stages_A_but_idle_rows_read_B(A, B, C):  # exercise 2.1 right, but threads of rows past M still read B
    sA = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * T + ty
    col = cuda.blockIdx.x * T + tx
    M, K = A.shape
    acc = float32(0.0)
    for t in range((K + T - 1) // T):
        sA[ty, tx] = A[row, t * T + tx] if row < M and t * T + tx < K else float32(0.0)
        cuda.syncthreads()
        for k in range(T):
            if t * T + k < K and col < C.shape[1]:
                acc += sA[ty, k] * B[t * T + k, col]
        cuda.syncthreads()
    if row < M and col < C.shape[1]:
        C[row, col] = acc


def test_loads_over_budget_from_threads_that_store_no_c_are_said_so_not_sent_to_shared_memory(capsys):
    """At 13×19·19×11 (a partial block in M) the rows past M still read B: the loads over the budget are theirs, and
    the hint says so, where "stage tiles in cuda.shared.array" would point at what the kernel already does."""
    from tiledlab.core import formulas

    def budget(M, K, N, T):
        return formulas.block_tile_loads(M, K, N, T, T)["A"] + formulas.naive_loads(M, K, N)["B"]
    assert not check(stages_A_but_idle_rows_read_B, tile=4, max_loads=budget, seed=0)
    said = out(capsys)
    assert "679 of them are made by threads that store no element of C" in said and "stage tiles" not in said, said


@pytest.mark.parametrize("M, K, N", [(13, 19, 11), (5, 3, 9)])
def test_idle_loads_are_the_loads_of_the_threads_outside_c(M, K, N):
    """The lesson's tiled kernel maps thread (row, col) to C[row, col]: the threads that store nothing are those past
    M or N, and their loads (A and B tiles they fill for the block) are what the count calls idle."""
    from tiledlab.counting import count_loads
    rng = np.random.default_rng(0)
    c = count_loads("tiled", rng.random((M, K), np.float32), rng.random((K, N), np.float32), tile=4)
    rows, cols = np.indices(c.thread_loads.shape)
    assert c.idle_loads == c.thread_loads[(rows >= M) | (cols >= N)].sum() > 0
