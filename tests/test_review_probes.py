"""A hostile review of the loop guards and the GPU-build refusals (stop 49), each case as the reviewer wrote it.

Hangs: a local name shadowing a small global, names that double one another (and the classifier's own time), a for
loop over something other than range(...). A false pass: a helper reached through a module. False refusals: `and`
of whole numbers in a vote, a list iterated over, a long range a break leaves, a break in a nested loop's else or a
match case. Misses that hang a GPU's block: a local array stored at a per-thread index, through an alias or a helper,
and a match on a per-thread value."""
import time
import types

import numpy as np
import pytest
from conftest import operands, source_line
from numba import cuda, float32, int32

from tiledlab.core import contract
from tiledlab.counting import count_loads
from tiledlab.counting.exercises import check

T = 4
steps = 4  # a global the kernel below shadows with a local of its own


@cuda.jit
def local_shadows_global(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        steps = A.shape[1] * 100000000
        for j in range(steps):  # long
            acc += float32(0.0)
        C[row, col] = acc


@cuda.jit
def names_double_one_another(A, B, C):
    row, col = cuda.grid(2)
    K = A.shape[1]
    d1 = K + K
    d2 = d1 + d1
    d3 = d2 + d2
    d4 = d3 + d3
    d5 = d4 + d4
    d6 = d5 + d5
    d7 = d6 + d6
    d8 = d7 + d7
    d9 = d8 + d8
    d10 = d9 + d9
    d11 = d10 + d10
    d12 = d11 + d11
    d13 = d12 + d12
    d14 = d13 + d13
    d15 = d14 + d14
    d16 = d15 + d15
    d17 = d16 + d16
    d18 = d17 + d17
    d19 = d18 + d18
    d20 = d19 + d19
    d21 = d20 + d20
    d22 = d21 + d21
    d23 = d22 + d22
    d24 = d23 + d23
    acc = float32(0.0)
    for j in range(d24):  # long
        acc += float32(0.0)
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@cuda.jit
def enumerates_a_long_range(A, B, C):
    row, col = cuda.grid(2)
    acc = float32(0.0)
    for i, k in enumerate(range(A.shape[1] * 1000000000)):  # long
        acc += float32(k)
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@cuda.jit
def a_range_kept_in_a_name(A, B, C):
    row, col = cuda.grid(2)
    acc = float32(0.0)
    r = range(A.shape[1] * 1000000000)
    for k in r:  # long
        acc += float32(k)
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@pytest.mark.parametrize("kernel", [local_shadows_global, names_double_one_another, enumerates_a_long_range,
                                    a_range_kept_in_a_name], ids=lambda k: k.__name__)
def test_a_loop_that_would_run_away_is_stopped_and_named(rng, kernel):
    start = time.perf_counter()
    with pytest.raises(ValueError, match=rf"^line {source_line(kernel, '# long')}: .*(would go|went) round this loop"):
        count_loads(kernel, *operands(rng, 4, 4, 4), T)
    assert time.perf_counter() - start < 30  # it hung before; the classifier alone took 34 s at 24 names


@cuda.jit(device=True)
def counts_far(x):
    for i, k in enumerate(range(1000000000000)):  # a helper's loop the count could not leave
        x += 1.0
    return x


@cuda.jit
def calls_a_far_counting_helper(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = counts_far(A[row, 0])


def test_a_helper_looping_over_anything_but_a_short_range_is_refused(rng):
    with pytest.raises(ValueError, match=r"the helper counts_far loops \('for i, k in enumerate"):
        count_loads(calls_a_far_counting_helper, *operands(rng, 4, 4, 4), T)


@cuda.jit(device=True)
def mul(a, b):
    if (p := a * b) > 0:  # GPU-less
        return p
    return p


probe_helpers = types.ModuleType("probe_helpers")  # a module of device functions, called as probe_helpers.mul
probe_helpers.mul = mul


@cuda.jit
def helper_through_a_module(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = probe_helpers.mul(A[row, 0], B[0, col])


@cuda.jit
def vote_of_a_name_of_a_condition(A, B, C):
    row, col = cuda.grid(2)
    inside = row < C.shape[0]
    anyone = inside
    if cuda.syncthreads_or(anyone) and row < C.shape[0] and col < C.shape[1]:  # GPU-less
        C[row, col] = A[row, 0]


@cuda.jit
def vote_of_a_conditional_condition(A, B, C):
    row, col = cuda.grid(2)
    if cuda.syncthreads_or(row < C.shape[0] if col < 100 else False) and col < C.shape[1]:  # GPU-less
        C[row, col] = A[row, 0]


@cuda.jit
def vote_of_bool(A, B, C):
    row, col = cuda.grid(2)
    n = cuda.syncthreads_count(bool(row))  # GPU-less
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = A[row, 0] + n


@pytest.mark.parametrize("kernel, fn", [(helper_through_a_module, mul), (vote_of_a_name_of_a_condition, None),
                                        (vote_of_a_conditional_condition, None), (vote_of_bool, None)],
                         ids=lambda k: getattr(k, "__name__", ""))
def test_what_a_gpu_cannot_build_is_refused_however_it_is_reached(rng, capsys, kernel, fn):
    with pytest.raises(contract.Fault, match=rf"^line {source_line(fn or kernel, '# GPU-less')}: "):
        count_loads(kernel, *operands(rng, 4, 4, 4), T)
    assert not check(kernel, tile=4)
    assert "cannot count" not in capsys.readouterr().out


@cuda.jit(device=True)
def positive(x):
    return x > 0


@cuda.jit
def vote_of_a_helpers_condition(A, B, C):
    row, col = cuda.grid(2)
    n = cuda.syncthreads_or(positive(row))  # GPU-less
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = A[row, 0] + n


@cuda.jit
def vote_of_an_unpacked_condition(A, B, C):
    row, col = cuda.grid(2)
    low, high = row < 2, col < 2
    n = cuda.syncthreads_and(low)  # GPU-less
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = A[row, 0] + n + high


@cuda.jit
def vote_of_a_float(A, B, C):
    row, col = cuda.grid(2)
    inside = row < C.shape[0] and col < C.shape[1]
    n = cuda.syncthreads_count(A[0, 0] * 1)  # GPU-less
    if inside:
        C[row, col] = A[row, 0] + n


@pytest.mark.parametrize("kernel", [vote_of_a_helpers_condition, vote_of_an_unpacked_condition, vote_of_a_float],
                         ids=lambda k: k.__name__)
def test_a_vote_of_anything_but_a_whole_number_fails_by_its_line_as_on_a_gpu(rng, capsys, kernel):
    """What numba's GPU compiler refuses (a vote of True/False or of a float), the simulator refuses at run time."""
    line = source_line(kernel, "# GPU-less")
    said = r"numba cannot compile cuda.syncthreads_\w+ of a (condition|float value)"
    with pytest.raises(Exception, match=rf"^line {line}: .*{said}"):
        count_loads(kernel, *operands(rng, 4, 4, 4), T)
    assert not check(kernel, tile=4)
    out = capsys.readouterr().out
    assert f"line {line}" in out and "numba cannot compile" in out and "Traceback" not in out, out


@cuda.jit
def vote_of_whole_numbers(A, B, C):
    row, col = cuda.grid(2)
    inside = 1 if row < C.shape[0] else 0
    inside2 = 1 if col < C.shape[1] else 0
    n = cuda.syncthreads_count(inside and inside2)  # whole numbers: numba builds it
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = A[row, 0] * 0 + n


@cuda.jit
def iterates_a_list(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for s in [0.0, 1.0]:  # numba builds a list display it only iterates over
            acc += s
        if col in [0, 1]:
            acc += 1.0
        C[row, col] = acc + A[row, 0] * 0


@cuda.jit
def a_long_range_left_by_a_break(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(1 << 30):
            if k >= A.shape[1]:
                break
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def break_in_a_nested_loops_else(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        done = 0
        while done == 0:
            for k in range(A.shape[1]):
                acc += A[row, k] * B[k, col]
            else:
                break  # leaves the while
        C[row, col] = acc


@cuda.jit
def break_in_a_match_case(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        k = 0
        while True:
            match A.shape[1] - k:
                case 0:
                    break
            acc += A[row, k] * B[k, col]
            k += 1
        C[row, col] = acc


def test_what_numba_builds_and_what_ends_is_counted(rng):
    M, K, N = 5, 6, 7
    A, B = operands(rng, M, K, N)
    assert (count_loads(vote_of_whole_numbers, A, B, T).C >= 1).all()  # each in-range thread counts itself
    for kernel in (a_long_range_left_by_a_break, break_in_a_nested_loops_else, break_in_a_match_case):
        c = count_loads(kernel, A, B, T)
        np.testing.assert_allclose(c.C, A @ B, rtol=1e-5, atol=1e-5)
        assert (c.A, c.B) == (M * N * K, M * N * K), kernel.__name__
    np.testing.assert_allclose(count_loads(iterates_a_list, A, B, T).C[:, 2:], 1.0)


@cuda.jit
def flag_at_a_thread_index(A, B, C):
    s = cuda.shared.array((T, T), float32)
    flag = cuda.local.array(2, int32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty, tx] = A[ty, tx]
    flag[0] = 0
    flag[1] = 0
    flag[tx % 2] = 1
    if flag[0] == 1:
        cuda.syncthreads()  # H-first
    else:
        cuda.syncthreads()
    C[ty, tx] = s[ty, tx]


@cuda.jit
def flag_through_an_alias(A, B, C):
    s = cuda.shared.array((T, T), float32)
    flag = cuda.local.array(1, int32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty, tx] = A[ty, tx]
    other = flag
    other[0] = tx
    if flag[0] == 0:
        cuda.syncthreads()  # H-first
    else:
        cuda.syncthreads()
    C[ty, tx] = s[ty, tx]


@cuda.jit(device=True)
def put(a, v):
    a[0] = v


@cuda.jit
def flag_stored_by_a_helper(A, B, C):
    s = cuda.shared.array((T, T), float32)
    flag = cuda.local.array(1, int32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty, tx] = A[ty, tx]
    put(flag, tx)
    if flag[0] == 0:
        cuda.syncthreads()  # H-first
    else:
        cuda.syncthreads()
    C[ty, tx] = s[ty, tx]


@cuda.jit
def match_on_the_thread(A, B, C):
    s = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty, tx] = A[ty, tx]
    match tx:
        case 0:
            cuda.syncthreads()  # H-first
        case _:
            cuda.syncthreads()
    C[ty, tx] = s[ty, tx]


@pytest.mark.parametrize("kernel", [flag_at_a_thread_index, flag_through_an_alias, flag_stored_by_a_helper,
                                    match_on_the_thread], ids=lambda k: k.__name__)
def test_threads_sent_to_two_barriers_are_refused_before_anything_runs(kernel):
    fn = kernel.py_func
    with pytest.raises(contract.Hangs, match=rf"^line {source_line(kernel, '# H-first')}: .*sent apart"):
        contract.enforce(contract.syntax_tree(fn, fn.__name__), fn.__name__, fn.__globals__)
