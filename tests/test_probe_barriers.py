"""Probes of the static checks that refuse kernels which never finish on a GPU (contract.enforce: barriers.apart,
_endless). Cases marked xfail(strict) are still open: what a static reading cannot follow (a step in a branch never
taken, which the count stops); the others were found and fixed in review."""
import ast
import re
import textwrap

import numpy as np
import pytest
from conftest import operands, source_line
from numba import cuda, float32, int32

from tiledlab.core import contract
from tiledlab.core.launch import matmul
from tiledlab.counting import count_loads

T = 4


# ---------- correct kernels: must not be refused ----------
@cuda.jit
def base(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * T + ty
    col = cuda.blockIdx.x * T + tx
    acc = float32(0.0)
    for t in range((A.shape[1] + T - 1) // T):
        k0 = t * T
        if row < A.shape[0] and k0 + tx < A.shape[1]:
            sA[ty, tx] = A[row, k0 + tx]
        else:
            sA[ty, tx] = 0.0
        if k0 + ty < B.shape[0] and col < B.shape[1]:
            sB[ty, tx] = B[k0 + ty, col]
        else:
            sB[ty, tx] = 0.0
        cuda.syncthreads()
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@cuda.jit
def sync_first_if_t_gt_0(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    acc = float32(0.0)
    for t in range((A.shape[1] + T - 1) // T):
        if t > 0:
            cuda.syncthreads()  # guard the tiles before overwriting them
        k0 = t * T
        sA[ty, tx] = A[row, k0 + tx] if row < A.shape[0] and k0 + tx < A.shape[1] else 0.0
        sB[ty, tx] = B[k0 + ty, col] if k0 + ty < B.shape[0] and col < B.shape[1] else 0.0
        cuda.syncthreads()
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@cuda.jit
def double_buffer(A, B, C):
    sA0 = cuda.shared.array((T, T), float32)
    sB0 = cuda.shared.array((T, T), float32)
    sA1 = cuda.shared.array((T, T), float32)
    sB1 = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    acc = float32(0.0)
    for t in range((A.shape[1] + T - 1) // T):
        k0 = t * T
        a = A[row, k0 + tx] if row < A.shape[0] and k0 + tx < A.shape[1] else float32(0.0)
        b = B[k0 + ty, col] if k0 + ty < B.shape[0] and col < B.shape[1] else float32(0.0)
        if t % 2 == 0:
            sA0[ty, tx] = a
            sB0[ty, tx] = b
            cuda.syncthreads()
            for k in range(T):
                acc += sA0[ty, k] * sB0[k, tx]
        else:
            sA1[ty, tx] = a
            sB1[ty, tx] = b
            cuda.syncthreads()
            for k in range(T):
                acc += sA1[ty, k] * sB1[k, tx]
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@cuda.jit
def while_tile_loop_tuple_step(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    acc = float32(0.0)
    k0, t = 0, 0
    while k0 < A.shape[1]:
        sA[ty, tx] = A[row, k0 + tx] if row < A.shape[0] and k0 + tx < A.shape[1] else 0.0
        sB[ty, tx] = B[k0 + ty, col] if k0 + ty < B.shape[0] and col < B.shape[1] else 0.0
        cuda.syncthreads()
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
        k0, t = k0 + T, t + 1
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc




@cuda.jit
def while_step_in_branch_and_flag(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        k = 0
        going = True
        while k < A.shape[1] and going:
            acc += A[row, k] * B[k, col]
            if k + 1 < A.shape[1]:
                k += 1
            else:
                going = False
        j = 0
        while j < 3:
            for _ in range(1):
                j += 1
        C[row, col] = acc


@cuda.jit
def reused_name_i(A, B, C):
    # i first walks this thread's share of a tile load, then counts the tile steps
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    for i in range(ty * T + tx, T * T, T * T):  # zero the tiles, one element per thread
        sA[i // T, i % T] = 0.0
        sB[i // T, i % T] = 0.0
    acc = float32(0.0)
    for i in range((A.shape[1] + T - 1) // T):
        if i > 0:
            cuda.syncthreads()
        k0 = i * T
        sA[ty, tx] = A[row, k0 + tx] if row < A.shape[0] and k0 + tx < A.shape[1] else 0.0
        sB[ty, tx] = B[k0 + ty, col] if k0 + ty < B.shape[0] and col < B.shape[1] else 0.0
        cuda.syncthreads()
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@cuda.jit
def block_exit_by_syncthreads_or(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    anyone = cuda.syncthreads_or(1 if row < C.shape[0] and col < C.shape[1] else 0)  # alike in the whole block
    if anyone:
        acc = float32(0.0)
        for t in range((A.shape[1] + T - 1) // T):
            k0 = t * T
            sA[ty, tx] = A[row, k0 + tx] if row < A.shape[0] and k0 + tx < A.shape[1] else 0.0
            sB[ty, tx] = B[k0 + ty, col] if k0 + ty < B.shape[0] and col < B.shape[1] else 0.0
            cuda.syncthreads()
            for k in range(T):
                acc += sA[ty, k] * sB[k, tx]
            cuda.syncthreads()
        if row < C.shape[0] and col < C.shape[1]:
            C[row, col] = acc


@cuda.jit
def block_row_from_grid(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col, row = cuda.grid(2)
    first_row = row - ty  # the block's first row: the same for all its threads
    acc = float32(0.0)
    for t in range((A.shape[1] + T - 1) // T):
        if first_row >= 0:  # always true
            k0 = t * T
            sA[ty, tx] = A[row, k0 + tx] if row < A.shape[0] and k0 + tx < A.shape[1] else 0.0
            sB[ty, tx] = B[k0 + ty, col] if k0 + ty < B.shape[0] and col < B.shape[1] else 0.0
            cuda.syncthreads()
            for k in range(T):
                acc += sA[ty, k] * sB[k, tx]
            cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@cuda.jit
def list_unpack_block(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    bx, tx = cuda.blockIdx.x, cuda.threadIdx.x
    [by, ty] = cuda.blockIdx.y, cuda.threadIdx.y
    row, col = by * T + ty, bx * T + tx
    acc = float32(0.0)
    for t in range((A.shape[1] + T - 1) // T):
        k0 = t * T
        sA[ty, tx] = A[row, k0 + tx] if row < A.shape[0] and k0 + tx < A.shape[1] else 0.0
        sB[ty, tx] = B[k0 + ty, col] if k0 + ty < B.shape[0] and col < B.shape[1] else 0.0
        if by % 2 == 0:
            cuda.syncthreads()
        else:
            cuda.syncthreads()
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@cuda.jit
def uniform_value_read(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    acc = float32(0.0)
    for t in range((A.shape[1] + T - 1) // T):
        k0 = t * T
        sA[ty, tx] = A[row, k0 + tx] if row < A.shape[0] and k0 + tx < A.shape[1] else 0.0
        sB[ty, tx] = B[k0 + ty, col] if k0 + ty < B.shape[0] and col < B.shape[1] else 0.0
        cuda.syncthreads()
        corner = sA[0, 0]  # one value for the whole block
        if corner == corner:
            for k in range(T):
                acc += sA[ty, k] * sB[k, tx]
            cuda.syncthreads()
        else:
            cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@cuda.jit
def early_exit_whole_block(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    if cuda.blockIdx.y * T >= C.shape[0] or cuda.blockIdx.x * T >= C.shape[1]:
        return
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    acc = float32(0.0)
    t = 0
    while t < (A.shape[1] + T - 1) // T:
        k0 = t * T
        sA[ty, tx] = A[row, k0 + tx] if row < A.shape[0] and k0 + tx < A.shape[1] else 0.0
        sB[ty, tx] = B[k0 + ty, col] if k0 + ty < B.shape[0] and col < B.shape[1] else 0.0
        cuda.syncthreads()
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
        t += 1
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


# ---------- hanging kernels: must be refused ----------
@cuda.jit
def elif_chain(A, B, C):
    s = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty, tx] = A[ty, tx]
    if cuda.blockIdx.x > 100:
        pass
    elif tx == 0:
        cuda.syncthreads()  # H-first
    else:
        cuda.syncthreads()  # H-other
    C[ty, tx] = s[ty, tx]


@cuda.jit
def flag_set_in_branch(A, B, C):
    s = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty, tx] = A[ty, tx]
    last = False
    if tx == T - 1:
        last = True
    if last:
        cuda.syncthreads()  # H-first
    cuda.syncthreads()  # H-other
    C[ty, tx] = s[ty, tx]


@cuda.jit
def counted_by_while(A, B, C):
    s = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty, tx] = A[ty, tx]
    n = 0
    while n < tx:
        n += 1
    if n == 0:
        cuda.syncthreads()  # H-first
    cuda.syncthreads()  # H-other
    C[ty, tx] = s[ty, tx]


@cuda.jit
def break_before_barrier_after(A, B, C):
    s = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    for t in range(2):
        s[ty, tx] = A[ty, tx]
        if tx == 0:
            break
        cuda.syncthreads()  # H-first
    cuda.syncthreads()  # H-other
    C[ty, tx] = s[ty, tx]


@cuda.jit
def continue_between_barriers(A, B, C):
    s = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    for t in range(2):
        s[ty, tx] = A[ty, tx]
        cuda.syncthreads()  # H-first
        if tx == 0:
            continue
        cuda.syncthreads()  # H-other
    C[ty, tx] = s[ty, tx]


@cuda.jit
def local_array_flag(A, B, C):
    s = cuda.shared.array((T, T), float32)
    f = cuda.local.array(1, int32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty, tx] = A[ty, tx]
    f[0] = tx
    if f[0] == 0:
        cuda.syncthreads()  # H-first
    cuda.syncthreads()  # H-other
    C[ty, tx] = s[ty, tx]


@cuda.jit
def thread_while_then_after(A, B, C):
    s = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty, tx] = A[ty, tx]
    k = 0
    while k < tx:  # H-branch
        cuda.syncthreads()  # H-first
        k += 1
    cuda.syncthreads()  # H-other
    C[ty, tx] = s[ty, tx]


@cuda.jit
def helper_variable_tuple(A, B, C):
    s = cuda.shared.array((T, T), float32)
    ids = (cuda.blockIdx.x, cuda.threadIdx.x)
    tx, ty = ids[1], cuda.threadIdx.y
    s[ty, tx] = A[ty, tx]
    first = (tx == 0, ty == 0)
    if first[0]:
        cuda.syncthreads()  # H-first
    else:
        cuda.syncthreads()  # H-other
    C[ty, tx] = s[ty, tx]


@cuda.jit
def for_target_after_break(A, B, C):
    s = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty, tx] = A[ty, tx]
    k = 0
    for k in range(T):
        if k == tx:
            break
    if k == 0:
        cuda.syncthreads()  # H-first
    cuda.syncthreads()  # H-other
    C[ty, tx] = s[ty, tx]


@cuda.jit
def step_in_branch_never_taken(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        k = 0
        while k < A.shape[1]:  # E-line
            acc += A[row, k] * B[k, col]
            if k < 0:
                k += 1
        C[row, col] = acc


@cuda.jit
def break_of_inner_loop_only(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        k = 0
        while k < A.shape[1]:  # E-line
            for j in range(T):
                if j == 1:
                    break
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def forgot_step_with_min(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        k = 0
        while k < min(A.shape[1], B.shape[0]):  # E-line
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def step_by_zero(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        k = 0
        while k < A.shape[1]:  # E-line
            acc += A[row, k] * B[k, col]
            k += 0
        C[row, col] = acc


@cuda.jit
def forgot_step_with_global(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        k = 0
        while k < T:  # E-line
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def refusal(kernel):
    """The contract's refusal of `kernel`, checked statically (nothing runs: some of these never finish), or None."""
    fn = kernel.py_func
    try:
        contract.enforce(contract.syntax_tree(fn, fn.__name__), fn.__name__)
    except ValueError as refused:
        return str(refused)
    return None


def snippet_refusal(src):
    try:
        contract.enforce(ast.parse(textwrap.dedent(src)).body[0], "k")
    except ValueError as refused:
        return str(refused)
    return None


def bug(reason):
    return pytest.mark.xfail(strict=True, reason=reason)


@pytest.mark.parametrize("kernel", [
    base, sync_first_if_t_gt_0, double_buffer, while_tile_loop_tuple_step,
    while_step_in_branch_and_flag, uniform_value_read, early_exit_whole_block, block_row_from_grid,
    reused_name_i,
    block_exit_by_syncthreads_or,
    list_unpack_block,
], ids=lambda k: k.__name__)
def test_correct_kernels_run(rng, kernel):
    A, B = operands(rng, 6, 7, 5)
    assert refusal(kernel) is None
    np.testing.assert_allclose(matmul(A, B, kernel, T), A @ B, rtol=1e-5, atol=1e-5)
    assert not count_loads(kernel, A, B, T).hazards["divergent_barrier"]


@pytest.mark.parametrize("kernel", [
    elif_chain, thread_while_then_after, helper_variable_tuple,
    flag_set_in_branch,
    counted_by_while,
    for_target_after_break,
    break_before_barrier_after,
    continue_between_barriers,
    local_array_flag,
], ids=lambda k: k.__name__)
def test_kernels_threads_may_wait_apart_are_refused_by_line(kernel):
    why = refusal(kernel)
    assert why and "sent apart by line" in why, why
    first = source_line(kernel, "# H-first")
    assert why.startswith(f"line {first}: "), why


@pytest.mark.parametrize("kernel", [
    forgot_step_with_global,
    pytest.param(step_in_branch_never_taken, marks=bug("miss: k += 1 under `if k < 0` counts as a step (the count "
                                                       "stops the loop and names it: test_never_finishes)")),
    break_of_inner_loop_only,
    forgot_step_with_min,
    step_by_zero,
], ids=lambda k: k.__name__)
def test_endless_loops_are_refused_by_line(kernel):
    why = refusal(kernel)
    assert why and "never finishes" in why, why
    assert why.startswith(f"line {source_line(kernel, '# E-line')}: 'while "), why


ENDLESS = {
    "true_break_of_inner_loop": """
        def k(A, B, C):
            while True:
                for j in range(2):
                    break
    """,
    "step_only_in_else": """
        def k(A, B, C):
            k = 0
            while k < 4:
                C[0, 0] = 1.0
            else:
                k += 1
    """,
    "bound_from_a_local_tuple": """
        def k(A, B, C):
            dims = A.shape
            k = 0
            while k < dims[1]:
                C[0, 0] = 1.0
    """,
}


@pytest.mark.parametrize("src", [pytest.param(s, id=n) for n, s in ENDLESS.items()])
def test_endless_snippets_are_refused(src):
    why = snippet_refusal(src)
    assert why and "never finishes" in why, why


APART = {
    "barrier_as_a_conditional_expression": """
        def k(A, B, C):
            tx = cuda.threadIdx.x
            n = cuda.syncthreads_count(1) if tx == 0 else cuda.syncthreads_count(0)
    """,
    "barrier_behind_and": """
        def k(A, B, C):
            ok = cuda.threadIdx.x == 0 and cuda.syncthreads_or(1)
            cuda.syncthreads()
    """,
    "per_lane_mask": """
        def k(A, B, C):
            if cuda.lanemask_lt() == 0:
                cuda.syncthreads()
            cuda.syncthreads()
    """,
}


@pytest.mark.parametrize("src", [pytest.param(s, id=n) for n, s in APART.items()])
def test_apart_snippets_are_refused(src):
    why = snippet_refusal(src)
    assert why and "sent apart" in why, why


FINE = {
    "uniform_syncthreads_count": """
        def k(A, B, C):
            n = cuda.syncthreads_count(1 if cuda.threadIdx.x < 2 else 0)
            if n > 1:
                cuda.syncthreads()
    """,
    "loop_else_every_thread_reaches": """
        def k(A, B, C):
            for k in range(cuda.threadIdx.x):
                C[0, 0] = 1.0
            else:
                cuda.syncthreads()
            cuda.syncthreads()
    """,
    "name_reset_before_a_uniform_loop": """
        def k(A, B, C):
            n = cuda.threadIdx.x
            C[0, n] = 1.0
            n = 0
            while n < 4:
                cuda.syncthreads()
                n += 1
            cuda.syncthreads()
    """,
}


@pytest.mark.parametrize("src", [pytest.param(s, id=n) for n, s in FINE.items()])
def test_uniform_snippets_are_not_refused(src):
    assert snippet_refusal(src) is None


def test_a_barrier_before_the_branch_is_not_said_to_be_waited_at_the_same_time():
    why = snippet_refusal("""
        def k(A, B, C):
            cuda.syncthreads()
            if cuda.threadIdx.x == 0:
                cuda.syncthreads()
    """)
    assert why is None or not re.search(r"line 3: .*at the same time", why), why


def test_a_barrier_inside_an_expression_all_threads_evaluate_alike_is_not_refused():
    assert snippet_refusal("""
        def k(A, B, C):
            n = cuda.syncthreads_count(1) if A.shape[0] > 4 else cuda.syncthreads_count(0)
            ok = A.shape[1] > 2 and cuda.syncthreads_or(1)
            cuda.syncthreads()
    """) is None
