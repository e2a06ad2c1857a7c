"""Kernels that never finish on a GPU are refused by their lines before anything runs, on both backends.

Threads of one block sent by a condition to two different barriers hang a GPU's block (on an H100 the lab's
count of `a_barrier_in_each_branch` never finished) while the simulator lets them meet: the contract refuses such a
kernel by both lines, before anything runs, on both backends. One barrier skipped by some threads is left to the
count (a divergent-barrier hazard, tests/test_hazards.py), and a condition every thread of the block shares is fine.
A while loop that nothing inside changes or leaves (a forgotten k += 1) spins forever on both: refused by its line;
one the static reading misses is left by the count after more passes than the arrays have elements, and named (a
loop that needs more is told to be a for loop, which may go round as often as the product has multiply-adds). A
for loop over a range longer than that is refused by its line before its first pass, and a device function the
kernel calls may not loop at all unless its range is as short as the arrays' sides."""
import ast
import re
import textwrap
import time

import numpy as np
import pytest
from conftest import operands, source_line
from numba import cuda, float32

from tiledlab.core import barriers, launch_geometry
from tiledlab.core.launch import matmul
from tiledlab.counting import count_loads
from tiledlab.counting.exercises import check
from test_hazards import a_barrier_in_each_branch
from test_probe_barriers import step_in_branch_never_taken  # the static reading misses it

T = 4


@cuda.jit
def waits_inside_then_after(A, B, C):
    s = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty, tx] = A[ty, tx]
    if tx == 0:
        cuda.syncthreads()  # the first column waits here
    cuda.syncthreads()  # the others already here
    C[ty, tx] = s[ty, tx]


@cuda.jit
def a_loop_of_its_own_length(A, B, C):
    s = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * T + ty
    for k in range(row):  # each row of threads its own number of passes
        s[ty, tx] = A[ty, tx]
        cuda.syncthreads()  # inside the loop
    cuda.syncthreads()  # after it
    C[ty, tx] = s[ty, tx]


@cuda.jit
def apart_through_a_value_read(A, B, C):
    s = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty, tx] = A[ty, tx]
    v = A[ty, tx]  # a value each thread reads for itself
    if v > 0:
        cuda.syncthreads()  # the positive ones
    else:
        cuda.syncthreads()  # the rest
    C[ty, tx] = s[ty, tx]


@cuda.jit
def both_arms_alike_for_the_block(A, B, C):
    s = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty, tx] = A[cuda.blockIdx.y * T + ty, tx]
    if cuda.blockIdx.x % 2 == 0:  # one value for every thread of a block: they go together
        cuda.syncthreads()
    else:
        cuda.syncthreads()
    for k in range(A.shape[1] // T):  # as many passes for every thread
        cuda.syncthreads()
    C[cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx] = s[ty, tx] * float32(A.shape[1] == 4)


@pytest.mark.parametrize("kernel, first, other, branch", [
    (a_barrier_in_each_branch, "# half the block waits here", "# and half here", "if tx == 0:"),
    (waits_inside_then_after, "# the first column waits here", "# the others already here", "if tx == 0:"),
    (a_loop_of_its_own_length, "# inside the loop", "# after it", "for k in range(row):"),
    (apart_through_a_value_read, "# the positive ones", "# the rest", "if v > 0:"),
], ids=lambda v: getattr(v, "__name__", None))
def test_barriers_threads_may_wait_at_apart_are_refused_by_both_lines(rng, kernel, first, other, branch):
    lines = [source_line(kernel, w) for w in (first, other, branch)]
    words = (f"line {lines[0]}: 'cuda.syncthreads()': threads of one block can wait here and at the "
             f"cuda.syncthreads() of line {lines[1]} at the same time, sent apart by line {lines[2]}")
    with pytest.raises(ValueError, match=re.escape(words)):
        count_loads(kernel, *operands(rng, 4, 4, 4), T)
    with pytest.raises(ValueError, match="the block hangs"):
        matmul(*operands(rng, 4, 4, 4), kernel, T)


def test_check_says_so_in_one_line_and_runs_nothing(capsys):
    assert not check(a_barrier_in_each_branch, tile=4, limit_loads=False)
    out = capsys.readouterr().out
    assert "sent apart by line" in out and "Traceback" not in out, out


def test_a_condition_the_whole_block_shares_is_not_refused(rng):
    A, B = operands(rng, 8, 4, 8)
    c = count_loads(both_arms_alike_for_the_block, A, B, T)
    assert not c.hazards["divergent_barrier"], c.hazards


@cuda.jit
def careful(A, B, C):  # the tiled kernel with a guard every thread of its T×T block passes, around its barrier too
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
        if tx < T and ty < T:  # true in every thread
            sA[ty, tx] = A[row, k0 + tx] if row < M and k0 + tx < K else float32(0.0)
            sB[ty, tx] = B[k0 + ty, col] if k0 + ty < K and col < N else float32(0.0)
            cuda.syncthreads()  # tiles complete before use
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # nobody overwrites the tiles while a neighbour reads them
    if row < M and col < N:
        C[row, col] = acc


def test_a_guard_every_thread_of_the_block_passes_sends_none_apart(rng, capsys):
    assert check(careful, tile=4), capsys.readouterr().out
    A, B = operands(rng, 5, 9, 7)
    np.testing.assert_allclose(matmul(A, B, careful, T), A @ B, rtol=1e-5, atol=1e-5)


@cuda.jit
def half_guard(A, B, C):
    tx = cuda.threadIdx.x
    if tx < T // 2:  # every thread of a T/2 × T block, half of a T × T one
        cuda.syncthreads()  # inside
    cuda.syncthreads()  # after
    C[cuda.threadIdx.y, tx] = A[0, 0]


@pytest.mark.parametrize("columns, refused", [(T // 2, False), (T, True)])
def test_a_guard_is_read_against_the_block_the_kernel_declares(columns, refused):
    kernel = launch_geometry(threads=lambda T: (columns, T), T=T)(half_guard)
    if refused:
        with pytest.raises(ValueError, match=f"sent apart by line {source_line(half_guard, 'if tx < T // 2:')}"):
            kernel.checked_code(kernel.bind())
    else:
        kernel.checked_code(kernel.bind())


ALIKE = {  # (threads along x and y, a test every thread of the block passes or none does)
    "both_indices_within": ((4, 4), "tx < T and ty < T"),
    "half_the_columns": ((2, 4), "tx < T // 2"),
    "never_negative": ((4, 4), "tx >= 0"),
    "chained_with_the_block_size": ((4, 4), "0 <= cuda.threadIdx.x < cuda.blockDim.x"),
    "reversed": ((4, 4), "T > cuda.threadIdx.y"),
    "no_thread": ((4, 4), "tx >= T"),
    "one_row_of_threads": ((4, 1), "ty == 0"),
}
APART = {  # a test that differs between the block's threads
    "half_the_columns_of_a_square_block": ((4, 4), "tx < T // 2"),
    "all_but_the_last": ((4, 4), "tx < T - 1"),
    "two_indices": ((4, 4), "tx < ty"),
    "an_index_given_twice": ((4, 4), "tx2 < T"),
    "a_constant_shadowed": ((4, 4), "tx < S"),
}


def guarded(test):
    return ast.parse(textwrap.dedent(f"""
        def k(A, B, C):
            tx = cuda.threadIdx.x
            ty = cuda.threadIdx.y
            tx2 = cuda.threadIdx.x
            tx2 = tx2 * 2
            S = ty
            if {test}:
                cuda.syncthreads()
            cuda.syncthreads()
    """)).body[0]


@pytest.mark.parametrize("threads, test", ALIKE.values(), ids=ALIKE)
def test_a_thread_index_compared_alike_in_the_whole_block_is_no_split(threads, test):
    assert barriers.apart(guarded(test), threads, {"T": 4, "S": 4}) is None
    assert barriers.apart(guarded(test)), "without the block's extent, the test is taken to vary"


@pytest.mark.parametrize("threads, test", APART.values(), ids=APART)
def test_a_thread_index_compared_unalike_in_the_block_is_still_refused(threads, test):
    assert barriers.apart(guarded(test), threads, {"T": 4, "S": 4})


@cuda.jit
def forgot_the_step(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        k = 0
        while k < A.shape[1]:  # k never moves
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def forever(A, B, C):
    while True:  # nothing leaves
        C[0, 0] = A[0, 0]


@cuda.jit
def steps_or_leaves(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        k = 0
        while k < A.shape[1]:
            acc += A[row, k] * B[k, col]
            k += 1
        n = 0
        while True:
            n += 1
            if n > 2:
                break
        C[row, col] = acc


@pytest.mark.parametrize("kernel, line, names", [
    (forgot_the_step, "# k never moves", "changes k and"),
    (forever, "# nothing leaves", "changes its condition and"),
], ids=lambda v: getattr(v, "__name__", None))
def test_a_loop_nothing_changes_or_leaves_is_refused_by_line(rng, capsys, kernel, line, names):
    want = f"line {source_line(kernel, line)}: 'while "
    with pytest.raises(ValueError, match=re.escape(want)):
        count_loads(kernel, *operands(rng, 4, 4, 4), T)
    assert not check(kernel, tile=4)
    out = capsys.readouterr().out
    assert out.startswith(want) and names in out and "never finishes" in out and "cannot count" not in out, out


def test_a_loop_that_steps_or_breaks_runs(rng):
    A, B = operands(rng, 5, 7, 6)
    np.testing.assert_allclose(matmul(A, B, steps_or_leaves, T), A @ B, rtol=1e-5, atol=1e-5)


# What the static reading misses, the count stops: each while loop of the counting build is left after more passes
# than A, B, C and the shared arrays have elements (and 256); the launch names its line and thread.

@cuda.jit
def one_thread_walks_all_of_c(A, B, C):
    x, y = cuda.grid(2)
    if x == 0 and y == 0:  # one thread, one loop, one pass per element of C, each a dot product
        e = 0
        while e < C.shape[0] * C.shape[1]:
            i, j = e // C.shape[1], e % C.shape[1]
            acc = float32(0.0)
            k = 0
            while k < A.shape[1]:
                acc += A[i, k] * B[k, j]
                k += 1
            C[i, j] = acc
            e += 1


@cuda.jit
def one_thread_walks_every_multiply_add(A, B, C):
    x, y = cuda.grid(2)
    if x == 0 and y == 0:  # one pass per multiply-add of the whole product, in one loop
        M, K, N = A.shape[0], A.shape[1], B.shape[1]
        for e in range(M * N * K):
            i, j, k = e // (N * K), e // K % N, e % K
            if k == 0:
                C[i, j] = 0.0
            C[i, j] += A[i, k] * B[k, j]


@cuda.jit
def step_of_a_quotient(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        step = T // 8  # 0 at T = 4: only running it shows
        k = 0
        while k < A.shape[1]:  # E-line
            acc += A[row, k] * B[k, col]
            k += step
        C[row, col] = acc


@pytest.mark.parametrize("kernel", [step_in_branch_never_taken, step_of_a_quotient], ids=lambda k: k.__name__)
def test_a_loop_that_never_ends_is_left_by_the_count_and_named(rng, capsys, kernel):
    A, B = operands(rng, 3, 5, 4)
    passes = A.size + B.size + 3 * 4 + 256  # no shared arrays
    want = f"line {source_line(kernel, '# E-line')}: 'while "
    with pytest.raises(ValueError, match=re.escape(want)) as said:
        count_loads(kernel, A, B, T)
    assert f"more than {passes:,} times" in str(said.value) and "thread (ty=" in str(said.value)
    assert not check(kernel, tile=4)
    out = capsys.readouterr().out
    assert want in out and "never ends" in out and "cannot count" not in out, out


@cuda.jit
def steps_around_a_range_never(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        t = 0
        while t < A.shape[1]:  # E-outer
            for k in range(A.shape[1]):
                acc += A[row, k] * B[k, col]
            if acc > 1e30:  # never: the outer loop never ends, its inner one always does
                t += 1
        C[row, col] = acc


@cuda.jit
def both_loops_never_end(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        t = 0
        while t < A.shape[1]:
            k = 0
            while k < A.shape[1]:  # E-inner
                acc += A[row, k] * B[k, col]
                if acc > 1e30:
                    k += 1
            if acc > 1e30:
                t += 1
        C[row, col] = acc


@pytest.mark.parametrize("kernel, line, said", [
    (steps_around_a_range_never, "# E-outer", "this loop and the loops inside it more than {most:,} times in all"),
    (both_loops_never_end, "# E-inner", "this loop more than {passes:,} times"),
], ids=lambda v: getattr(v, "__name__", None))
def test_nested_loops_that_never_end_are_left_within_the_passes_of_one(rng, kernel, line, said):
    """A thread's passes through the loops inside a guarded one count in all: nested loops that never end are left
    after `_tl_most` passes of the thread, not `_tl_passes` passes of the inner loop at each pass of the outer."""
    A, B = operands(rng, 3, 5, 4)
    passes = A.size + B.size + 3 * 4 + 256
    most = passes + A.size * B.shape[1]
    want = f"line {source_line(kernel, line)}: 'while "
    started = time.perf_counter()
    with pytest.raises(ValueError, match=re.escape(want)) as refused:
        count_loads(kernel, A, B, T)
    assert said.format(passes=passes, most=most) in str(refused.value), refused.value
    assert time.perf_counter() - started < 20


@cuda.jit
def never_ends_at_k_4(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        k = 0
        while k < A.shape[1]:  # E-line
            acc += A[row, k] * B[k, col]
            k += 1 if A.shape[1] != 4 else 0  # stuck only where K = 4: a shape check() runs, not one it counted
        C[row, col] = acc


def test_a_loop_that_never_ends_at_one_shape_check_runs_is_said_not_waited_for(capsys):
    """check() counts (its loops guarded) at every shape before it runs the kernel there: before, it waited forever
    at A 1×4 (a plain launch cannot be left)."""
    started = time.perf_counter()
    assert check(never_ends_at_k_4, tile=4) is False
    out = capsys.readouterr().out
    assert out.startswith(f"A 1×4 · B 4×1, tile=4: line {source_line(never_ends_at_k_4, '# E-line')}: 'while "), out
    assert time.perf_counter() - started < 60


def test_a_loop_as_long_as_c_is_counted_exactly(rng):
    A, B = operands(rng, 7, 9, 11)  # 77 passes of the outer loop by one thread, 9 of each inner one
    c = count_loads(one_thread_walks_all_of_c, A, B, T)
    np.testing.assert_allclose(c.C, A @ B, rtol=1e-5, atol=1e-5)
    assert (c.A, c.B) == (7 * 11 * 9, 7 * 11 * 9)


def test_a_for_loop_of_one_pass_per_multiply_add_is_counted_exactly(rng):
    """More passes than the arrays have elements: a for loop, which may go round once per multiply-add."""
    for M, K, N in ((1, 1, 1), (3, 4, 5), (8, 8, 8)):
        A, B = operands(rng, M, K, N)
        c = count_loads(one_thread_walks_every_multiply_add, A, B, T)
        np.testing.assert_allclose(c.C, A @ B, rtol=1e-5, atol=1e-5)
        assert (c.A, c.B) == (M * K * N, M * K * N)


@cuda.jit
def five_passes_per_multiply_add(A, B, C):
    x, y = cuda.grid(2)
    if x == 0 and y == 0:
        for e in range(A.shape[0] * B.shape[1] * A.shape[1] * 5):  # within 60 + 47 + 256 at 3×4×5
            C[0, 0] = A[0, 0]


@cuda.jit
def seven_passes_per_multiply_add(A, B, C):
    x, y = cuda.grid(2)
    if x == 0 and y == 0:
        for e in range(A.shape[0] * B.shape[1] * A.shape[1] * 7):  # past it
            C[0, 0] = A[0, 0]


@cuda.jit
def ranges_past_any_count(A, B, C):
    row, col = cuda.grid(2)
    for i in range(10 ** 12):  # the outer loop is left at once
        for j in range(10 ** 12):
            C[row, col] = A[row, 0]


def test_a_range_longer_than_the_product_is_refused_before_it_runs(rng, capsys):
    """The limit: the multiply-adds, the arrays' elements and 256 (363 at 3×4×5, no shared arrays)."""
    A, B = operands(rng, 3, 4, 5)
    assert count_loads(five_passes_per_multiply_add, A, B, T).A == 300
    with pytest.raises(ValueError, match=rf"^line {source_line(seven_passes_per_multiply_add, '# past it')}: .*"
                                         r"would go round this loop 420 times: more than the 363 passes"):
        count_loads(seven_passes_per_multiply_add, A, B, T)
    with pytest.raises(ValueError, match=rf"^line {source_line(ranges_past_any_count, 'range(10 ** 12)')}: .*"
                                         r"1,000,000,000,000 times"):
        count_loads(ranges_past_any_count, A, B, T)  # at once, not after 10 ** 24 passes
    assert not check(ranges_past_any_count, tile=4)
    out = capsys.readouterr().out
    assert "wrong bound" in out and "cannot count" not in out and "Traceback" not in out, out


@cuda.jit(device=True)
def power(x, n):
    y = 1.0
    while n > 0:  # the count cannot leave a loop inside a helper
        y *= x
        n -= 1
    return y


@cuda.jit
def calls_a_looping_helper(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = power(A[row, 0], col)


def test_a_loop_inside_a_helper_is_refused_by_the_call(rng, capsys):
    with pytest.raises(ValueError, match=rf"^line {source_line(calls_a_looping_helper, 'power(A')}: .*the helper "
                                         r"power loops \('while n > 0:'\): .*write the loop in the kernel"):
        count_loads(calls_a_looping_helper, *operands(rng, 4, 4, 4), T)


@cuda.jit
def tile_loop_while_not_K(A, B, C):  # k0 += 4 steps over K = 5: 0, 4, 8, ... never equals it
    row, col = cuda.grid(2)[1], cuda.grid(2)[0]
    acc = float32(0.0)
    k0 = 0
    while k0 != A.shape[1]:
        for k in range(4):
            if k0 + k < A.shape[1] and row < C.shape[0] and col < C.shape[1]:
                acc += A[row, k0 + k] * B[k0 + k, col]
        k0 += 4
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


def test_a_loop_whose_test_is_not_equal_is_told_it_can_step_over_its_end(rng):
    with pytest.raises(ValueError, match=r"while k0 != A\.shape\[1\]:.*Its test is !=: .*compare with < instead"):
        count_loads(tile_loop_while_not_K, *operands(rng, 3, 5, 4), 4)
