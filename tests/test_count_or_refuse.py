"""Count or refuse: every load of a kernel is counted exactly, or the kernel is refused with the line.

Each hostile kernel below is an acceptance case: a way to load A, B or C, or to pass a barrier, that
the counting rewrite could miss. Each is followed exactly or refused with a ValueError naming its line.
"""
import ast
import linecache
import re
import sys

import numpy as np
import pytest
from conftest import operands, simulator_only, source_line
from numba import cuda, float32, int32  # globals, as in a notebook: the simulator swaps module globals only

from tiledlab.core import formulas
from tiledlab.counting import count_loads, countable, rewrite
from tiledlab.counting.exercises import check, predict

T = 4
cu = cuda  # numba's cuda module under another name


# --- 1. uses of A, B, C and shared arrays other than X[i, j] and X.shape --------------------------------

@cuda.jit
def alias(A, B, C):  # a naive kernel that loads A through another name
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    a = A
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += a[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit(device=True)
def ld(X, i, j):
    return X[i, j]


@cuda.jit
def device_helper(A, B, C):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += ld(A, row, k) * ld(B, k, col)
        C[row, col] = acc


@cuda.jit
def nested_def(A, B, C):
    def at(A, i, j):
        return A[i, j]
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += at(A, row, k) * at(B, k, col)
        C[row, col] = acc


@cuda.jit
def tuple_unpacking(A, B, C):
    x, y = A, B
    C[0, 0] = x[0, 0] * y[0, 0]


@cuda.jit
def atomic_into_C(A, B, C):
    old = cuda.atomic.add(C, (0, 0), A[0, 0])  # its old value: a read of C the count could not place


@cuda.jit
def atomic_and_store(A, B, C):
    cuda.atomic.add(C, (0, 0), A[0, 0])
    C[0, 1] = B[0, 0]


@cuda.jit
def atomic_into_a_row(A, B, C):
    cuda.atomic.add(C, 0, A[0, 0])


@cuda.jit
def in_a_list(A, B, C):
    both = [A, B]
    C[0, 0] = both[0][0, 0]


@cuda.jit
def in_a_tuple(A, B, C):
    both = (A, B)
    C[0, 0] = both[1][0, 0]


@cuda.jit
def with_a_lambda(A, B, C):
    at = lambda i, j: A[i, j]  # noqa: E731
    C[0, 0] = at(0, 0)


@cuda.jit
def iterates(A, B, C):
    acc = float32(0.0)
    for row in A:
        acc += row[0]
    C[0, 0] = acc


@cuda.jit
def a_row(A, B, C):
    r = A[0]
    C[0, 0] = r[0]


@cuda.jit
def a_slice(A, B, C):
    r = A[0, :]
    C[0, 0] = r[0]


@cuda.jit
def an_attribute(A, B, C):
    At = A.T
    C[0, 0] = At[0, 0]


@cuda.jit
def shared_alias(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sA[0, 0] = A[0, 0]
    s = sA
    C[0, 0] = s[0, 0]


@cuda.jit
def local_cuda_alias(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    c = cuda
    sA[0, 0] = A[0, 0]
    c.syncthreads()  # a barrier the count must not miss
    C[0, 0] = sA[0, 0]


@cuda.jit
def global_cuda_alias(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sA[0, 0] = A[0, 0]
    cu.syncthreads()  # the module-level alias of cuda
    C[0, 0] = sA[0, 0]


@cuda.jit
def uses_global(A, B, C):
    global T
    C[0, 0] = A[0, 0]


@cuda.jit
def stores_into_A(A, B, C):
    A[0, 0] = B[0, 0]
    C[0, 0] = A[0, 0]


@cuda.jit
def two_C_stores_in_one_statement(A, B, C):
    C[0, 0], C[0, 1] = A[0, 0], A[0, 1]


@cuda.jit(device=True)
def barrier():
    cuda.syncthreads()


@cuda.jit
def barrier_in_a_helper(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sA[0, 0] = A[0, 0]
    barrier()
    C[0, 0] = sA[0, 0]


def _not_numbas_cuda():
    """A kernel whose global `cuda` is not numba's cuda module (a look-alike that forwards to it)."""
    class LookAlike:
        def __getattr__(self, name):
            return getattr(cuda, name)

    source = ("def foreign_cuda(A, B, C):\n"
              "    sA = cuda.shared.array((4, 4), float32)\n"
              "    sA[0, 0] = A[0, 0]\n"
              "    cuda.syncthreads()\n"
              "    C[0, 0] = sA[0, 0]\n")
    name = "<test foreign cuda>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    namespace = {"cuda": LookAlike(), "float32": float32}
    exec(compile(source, name, "exec"), namespace)
    return cuda.jit(namespace["foreign_cuda"])


REFUSED = [  # (kernel, the code the message quotes, what it says)
    (alias, "a = A", r"only as A\[i, j\]"),
    (device_helper, "ld(A, row, k)", r"passing A to ld"),
    (nested_def, "def at(A, i, j):", r"function defined inside the kernel"),
    (tuple_unpacking, "x, y = (A, B)", r"only as A\[i, j\]"),
    (atomic_into_C, "old = cuda.atomic.add(C, (0, 0), A[0, 0])", r"a statement of its own"),
    (atomic_and_store, "C[0, 1] = B[0, 0]", r"added into with cuda.atomic.add at line \d+"),
    (atomic_into_a_row, "cuda.atomic.add(C, 0, A[0, 0])", r"one element of C"),
    (in_a_list, "[A, B]", r"numba cannot build a list"),  # a GPU cannot build it: refused first
    (in_a_tuple, "both = (A, B)", r"only as A\[i, j\]"),
    (with_a_lambda, "lambda i, j: A[i, j]", r"function defined inside the kernel"),
    (iterates, "for row in A:", r"only as A\[i, j\]"),
    (a_row, "A[0]", r"A\[i, j\]"),
    (a_slice, "A[0, :]", r"a slice"),
    (an_attribute, "A.T", r"A.shape"),
    (shared_alias, "s = sA", r"only as sA\[i, j\]"),
    (local_cuda_alias, "c = cuda", r"cuda\.syncthreads\(\)"),
    (global_cuda_alias, "cu.syncthreads()", r"numba's cuda module under another name"),
    (uses_global, "global T", r"global"),
    (stores_into_A, "A[0, 0] = B[0, 0]", r"A is an input"),
    (two_C_stores_in_one_statement, "C[0, 0], C[0, 1] = (A[0, 0], A[0, 1])", r"one global store per statement"),
    (barrier_in_a_helper, "barrier()", r"helper barrier uses cuda"),
]


@pytest.mark.parametrize("kernel,code,why", REFUSED, ids=[k.__name__ for k, *_ in REFUSED])
def test_an_access_the_count_could_miss_is_refused_with_its_line(rng, kernel, code, why):
    A, B = operands(rng, 4, 4, 4)
    with pytest.raises(ValueError) as refused:
        count_loads(kernel, A, B, T)
    message = str(refused.value)
    as_written = (code, code.replace("= (", "= ").rstrip(")"))  # the message quotes unparsed code: x, y = (A, B)
    assert message.startswith(f"line {source_line(kernel, *as_written)}: "), message
    assert code in message and re.search(why, message), message


def test_a_kernel_whose_cuda_is_not_numbas_is_refused(rng):
    A, B = operands(rng, 4, 4, 4)
    declaration = re.escape("line 2: 'sA = cuda.shared.array((4, 4), float32)'")
    with pytest.raises(ValueError, match=declaration + ".*not numba's cuda module"):
        count_loads(_not_numbas_cuda(), A, B, T)


def test_check_refuses_the_aliased_naive_kernel_for_the_tiled_exercise(capsys):
    assert not check(alias, tile=4)
    assert "line " in capsys.readouterr().out


def test_two_shared_arrays_on_one_line_are_refused_by_the_count_too(rng):
    from test_rewrite import two_on_one_line
    A, B = operands(rng, 4, 4, 4)
    with pytest.raises(ValueError, match=r"line \d+: 2 cuda.shared.array declarations on one line"):
        count_loads(two_on_one_line, A, B, T)


def closure_kernel():
    width = 4

    @cuda.jit
    def closed_over(A, B, C):
        C[0, 0] = A[0, 0] * width
    return closed_over


def test_a_kernel_that_closes_over_a_value_is_refused(rng):
    A, B = operands(rng, 4, 4, 4)
    with pytest.raises(ValueError, match=r"kernel closed_over uses width from the function it was defined in"):
        count_loads(closure_kernel(), A, B, T)


@cuda.jit
def helper_free_of_cuda_is_fine(A, B, C):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc = fma(acc, A[row, k], B[k, col])
        C[row, col] = acc


@cuda.jit(device=True)
def fma(acc, a, b):
    return acc + a * b


@cuda.jit
def sides_by_len_and_size(A, B, C):  # len(A) is A.shape[0], A.size A.shape[0] * A.shape[1]: no element is read
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    M = len(A)
    if row < M and col < C.size // len(C):
        acc = float32(0.0)
        for k in range(A.size // M):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def test_len_and_size_read_no_element_and_are_counted_through(rng):
    """numba-cuda 0.30.4 compiles this kernel for sm_90 (tests/arch_compile.lowered)."""
    M, K, N = 5, 6, 7
    A, B = operands(rng, M, K, N)
    c = count_loads(sides_by_len_and_size, A, B, T)
    assert (c.A, c.B) == (M * N * K, M * N * K)
    np.testing.assert_allclose(c.C, A @ B, rtol=1e-5, atol=1e-5)


def test_a_range_of_len_of_an_array_is_a_side_and_needs_no_guard():
    tree = ast.parse("def k(A, B, C):\n    r = range(10 ** 12)\n    for k in range(len(B)):\n        pass\n"
                     "    for k in range(len(r)):\n        pass\n    for k in range(B.size):\n        pass\n").body[0]
    first, *others = [n for n in ast.walk(tree) if isinstance(n, ast.For)]
    assert countable.unguarded(tree, {}, ("A", "B", "C")) == {first}  # len(r), B.size: may be long, guarded


def test_a_helper_that_takes_only_numbers_is_counted_through(rng):
    M, K, N = 5, 6, 7
    A, B = operands(rng, M, K, N)
    c = count_loads(helper_free_of_cuda_is_fine, A, B, T)
    assert (c.A, c.B) == (M * N * K, M * N * K)
    np.testing.assert_allclose(c.C, A @ B, rtol=1e-5, atol=1e-5)


# --- 2. every barrier form is a barrier ----------------------------------------------------------------

@cuda.jit
def tiled_with_barrier_forms(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range((K + T - 1) // T):
        sA[ty, tx] = A[row, t * T + tx] if row < M and t * T + tx < K else float32(0.0)
        sB[ty, tx] = B[t * T + ty, col] if t * T + ty < K and col < N else float32(0.0)
        cuda.syncthreads_count(int32(row < M))  # tiles complete before use (numba wants an int32 predicate)
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        everyone = cuda.syncthreads_and(1)  # nobody overwrites the tiles while a neighbour reads them
        acc += float32(0.0) * everyone
    if row < M and col < N:
        C[row, col] = acc


@cuda.jit
def tiled_with_or_and_count(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range((K + T - 1) // T):
        sA[ty, tx] = A[row, t * T + tx] if row < M and t * T + tx < K else float32(0.0)
        sB[ty, tx] = B[t * T + ty, col] if t * T + ty < K and col < N else float32(0.0)
        cuda.syncthreads_or(0)  # tiles complete before use
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        n = cuda.syncthreads_count(1)  # nobody overwrites the tiles while a neighbour reads them
        acc += float32(0.0) * n
    if row < M and col < N:
        C[row, col] = acc


@cuda.jit
def barrier_in_a_condition(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sA[0, 0] = A[0, 0]
    if cuda.syncthreads_or(1):
        C[0, 0] = sA[0, 0]


@pytest.mark.parametrize("kernel", [tiled_with_barrier_forms, tiled_with_or_and_count])
def test_every_barrier_form_is_a_barrier(rng, kernel):
    M, K, N = 8, 12, 8
    A, B = operands(rng, M, K, N)
    c = count_loads(kernel, A, B, T)
    assert not any(c.hazards.values()), c.hazards
    assert {"A": c.A, "B": c.B} == formulas.tiled_loads(M, K, N, T)
    np.testing.assert_allclose(c.C, A @ B, rtol=1e-5, atol=1e-5)


def test_a_barrier_inside_an_expression_is_refused(rng):
    A, B = operands(rng, 4, 4, 4)
    with pytest.raises(ValueError, match=r"line \d+: .*cuda.syncthreads_or\(1\).*statement of its own"):
        count_loads(barrier_in_a_condition, A, B, T)


# --- 3. every reader of a shared element takes part in the hazard check -------------------------------

@cuda.jit
def read_then_overwrite(A, B, C):
    s = cuda.shared.array((2, 2), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    v = s[0, 0]  # every thread reads it ...
    if tx == 1 and ty == 1:
        s[0, 0] = v  # ... and the last one overwrites it with no barrier between: a write-after-read race
    C[ty, tx] = A[ty, tx]


@simulator_only
def test_a_write_after_two_readers_is_a_hazard(rng):
    A, B = operands(rng, 2, 2, 2)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(100)  # each simulated thread runs to its end before the next starts: (0, 0) first
    try:
        c = count_loads(read_then_overwrite, A, B, 2)
    finally:
        sys.setswitchinterval(interval)
    assert c.hazards["write_after_read"] >= 1, c.hazards


@cuda.jit
def all_write_one_element(A, B, C):
    s = cuda.shared.array((2, 2), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[0, 0] = A[ty, tx]  # every thread writes the same element, no barrier between: write-after-write
    C[ty, tx] = A[ty, tx]


def test_write_after_write_is_counted(rng):
    A, B = operands(rng, 2, 2, 2)
    c = count_loads(all_write_one_element, A, B, 2)
    assert c.hazards["write_after_write"] == 3 and c.hazards["read_after_write"] == 0, c.hazards
    assert not check(all_write_one_element, tile=2, limit_loads=False)


# --- 4. the second count: an array that records every element read -------------------------------------

@cuda.jit
def naive_for_a_broken_rewrite(A, B, C):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def naive_for_a_broken_store(A, B, C):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@simulator_only
def test_the_second_count_catches_a_load_the_rewrite_skips(rng, monkeypatch):
    load = rewrite._Rewrite._load

    def skipping_B(self, name, i, j, line):  # a broken rewrite: B's loads go uncounted
        if name == self.inputs[1]:
            return ast.Subscript(value=ast.Name(id=name, ctx=ast.Load()), slice=ast.Tuple([i, j], ast.Load()),
                                 ctx=ast.Load())
        return load(self, name, i, j, line)

    monkeypatch.setattr(rewrite._Rewrite, "_load", skipping_B)
    A, B = operands(rng, 3, 4, 5)
    with pytest.raises(RuntimeError, match=r"B\[0, 0\]: the rewrite counted 0 loads, the recording array 3"):
        count_loads(naive_for_a_broken_rewrite, A, B, T)


@simulator_only
def test_the_second_count_catches_a_store_the_rewrite_skips(rng, monkeypatch):
    def plain_store(self, name, i, j, value, line):  # a broken rewrite: stores to C go uncounted
        target = ast.Subscript(value=ast.Name(id=name, ctx=ast.Load()), slice=ast.Tuple([i, j], ast.Load()),
                               ctx=ast.Store())
        return ast.Assign(targets=[target], value=value)

    monkeypatch.setattr(rewrite._Rewrite, "_global_store", plain_store)
    A, B = operands(rng, 3, 4, 5)
    with pytest.raises(RuntimeError, match=r"stores to C\[0, 0\]: the rewrite counted 0, the recording array 1"):
        count_loads(naive_for_a_broken_store, A, B, T)


@simulator_only
def test_the_second_count_catches_a_rewrite_that_counts_too_many(rng, monkeypatch):
    twice = rewrite.HELPER_SOURCE.replace("cuda.atomic.add(counts, (i, j), 1)", "cuda.atomic.add(counts, (i, j), 2)")
    assert twice != rewrite.HELPER_SOURCE
    monkeypatch.setattr(rewrite, "HELPER_SOURCE", twice)  # a broken rewrite: every load counted twice
    A, B = operands(rng, 3, 4, 5)
    with pytest.raises(RuntimeError, match=r"A\[0, 0\]: the rewrite counted 10 loads, the recording array 5"):
        count_loads("naive", A, B, T)


@cuda.jit
def stores_into_A_unseen(A, B, C):
    A[0, 0] = B[0, 0]
    C[0, 0] = A[0, 0]


@simulator_only
def test_the_second_count_catches_a_store_into_an_input(rng, monkeypatch):
    from tiledlab.counting import countable
    subscript = countable._Scan._Subscript
    monkeypatch.setattr(countable._Scan, "_Subscript",  # a broken check: stores into A pass
                        lambda self, node: None if isinstance(node.ctx, ast.Store) else subscript(self, node))
    store = rewrite._Rewrite.visit_Assign
    monkeypatch.setattr(rewrite._Rewrite, "visit_Assign",  # and the rewrite leaves them as written
                        lambda self, node: node if rewrite._name(node.targets[0]) == "A" else store(self, node))
    A, B = operands(rng, 4, 4, 4)
    with pytest.raises(RuntimeError, match=r"stores to A\[0, 0\]: the rewrite counted 0, the recording array 16"):
        count_loads(stores_into_A_unseen, A, B, T)


@simulator_only
@pytest.mark.parametrize("kernel", ["naive", "tiled"])
def test_both_counts_agree_and_the_result_is_a_plain_array(rng, kernel):
    A, B = operands(rng, 5, 6, 7)
    c = count_loads(kernel, A, B, T)
    assert type(c.C) is np.ndarray and (c.C_stores == 1).all()


# --- 5. stores to C: each element by one thread -----------------------------------------------------------

@cuda.jit
def also_writes_the_neighbour(A, B, C):  # right answer, but a block's last column also writes the next block's first
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    M, K = A.shape
    N = B.shape[1]
    last = cuda.threadIdx.x == cuda.blockDim.x - 1
    for c in range(col, min(col + (2 if last else 1), N)):
        if row < M:
            acc = float32(0.0)
            for k in range(K):
                acc += A[row, k] * B[k, c]
            C[row, c] = acc


@cuda.jit
def accumulates_in_C(A, B, C):  # each thread stores its own element K + 1 times: correct, and no race
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = float32(0.0)
        for k in range(A.shape[1]):
            C[row, col] += A[row, k] * B[k, col]


def test_stores_to_C_are_counted_per_element(rng):
    M, K, N = 5, 3, 6
    A, B = operands(rng, M, K, N)
    assert (count_loads(accumulates_in_C, A, B, T).C_stores == K + 1).all()
    c = count_loads(also_writes_the_neighbour, A, B, T)
    assert c.C_stores[:, T].tolist() == [2] * M and (np.delete(c.C_stores, T, axis=1) == 1).all()
    (i, j, first, other), *_ = c.C_races  # C[0, 4]: by thread (0, 3) of block (0, 0) and (0, 0) of block (0, 1)
    assert (i, j) == (0, T) and {first, other} == {(0, 0, 0, T - 1), (0, 1, 0, 0)}
    wide = count_loads(also_writes_the_neighbour, *operands(rng, M, K, 10), T)  # 3×2 blocks: a race in each
    races = {(i, j, frozenset((first, other))) for i, j, first, other in wide.C_races}  # ... names its blocks
    assert (M - 1, 2 * T, frozenset({(1, 1, 0, T - 1), (1, 2, 0, 0)})) in races


def test_check_fails_a_kernel_that_writes_another_blocks_element(capsys):
    assert not check(also_writes_the_neighbour, tile=4, limit_loads=False)
    out = capsys.readouterr().out
    assert "C[0, 4] is stored by two threads" in out and "race between blocks" in out
    assert "thread (ty=0, tx=3) of block (by=0, bx=0)" in out and "thread (ty=0, tx=0) of block (by=0, bx=1)" in out


def test_check_passes_a_thread_that_stores_its_own_element_again(capsys):
    assert check(accumulates_in_C, tile=4, limit_loads=False)
    assert "stored more than once by the thread that owns it" in capsys.readouterr().out


@cuda.jit
def adds_each_product_atomically(A, B, C):  # one thread per element, K atomic adds into C: right only on a zeroed C
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        for k in range(A.shape[1]):
            cuda.atomic.add(C, (row, col), A[row, k] * B[k, col])


def test_check_says_atomic_adds_into_c_need_a_zeroed_c_and_cost_global_traffic(capsys):
    assert check(adds_each_product_atomically, tile=4, limit_loads=False)
    out = capsys.readouterr().out
    assert "added into with cuda.atomic.add up to 20 times" in out and "starts at zero" in out, out


# --- 6. names: limit_loads, and numpy numbers are numbers ------------------------------------------------

def test_limit_loads_is_what_the_exercise_enforces():
    from tiledlab.core.kernels import naive
    assert not check(naive, tile=4, limit_loads=True)
    assert check(naive, tile=4, limit_loads=False)


@pytest.mark.parametrize("prediction", [np.int64(2048), np.int32(2048), np.float32(2048.0), np.float64(2048)])
def test_predict_takes_numpy_numbers(prediction, capsys):
    assert predict(prediction, 2048)
    assert predict((prediction, np.int64(3)), (2048, 3))


@pytest.mark.parametrize("prediction", [True, np.bool_(True), "2048", b"2048"])
def test_predict_refuses_what_is_not_a_number(prediction, capsys):
    assert predict(prediction, 1) is False
    assert "Give a number" in capsys.readouterr().out


# --- 7. the load limit of an exercise is the formula, not more -------------------------------------------

@cuda.jit
def tiled_plus_one_load(A, B, C):  # the tiled kernel, and one extra load of A per thread
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range((K + T - 1) // T):
        sA[ty, tx] = A[row, t * T + tx] if row < M and t * T + tx < K else float32(0.0)
        sB[ty, tx] = B[t * T + ty, col] if t * T + ty < K and col < N else float32(0.0)
        cuda.syncthreads()  # tiles complete before use
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # nobody overwrites the tiles while a neighbour reads them
    if row < M and col < N:
        C[row, col] = acc + float32(0.0) * A[row, 0]


def test_one_load_per_thread_over_the_limit_fails(capsys):
    assert not check(tiled_plus_one_load, tile=4)
    out = capsys.readouterr().out
    assert "16×16·16×16, tile=4: 2,304 (naive needs 8,192; this exercise allows 2,048)" in out
    assert "more than the 2,048 this exercise allows" in out
