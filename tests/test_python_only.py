"""Python the simulator runs and numba's GPU compiler refuses is the kernel's fault, refused by its line on both
backends (contract.Fault), never passed by check(). Each form below failed numba-cuda 0.30.4's compile for sm_90
(a hostile review, 2026-12-07); the forms it builds (a def or lambda inside the kernel, type(), iter(), next(), isinstance(),
print of text, a global array read) are counted as before."""
import numpy as np
import pytest
from conftest import operands, source_line
from numba import cuda, float32

from tiledlab.core import contract
from tiledlab.counting import count_loads
from tiledlab.counting.exercises import check

T = 4
OFFSETS = [0, 1]
MEMO = {}
SEEN = np.zeros(4, np.float32)
TABLE = np.ones(4, np.float32)


def mul(a, b):  # no @cuda.jit(device=True)
    return a * b


@cuda.jit
def plain_helper(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += mul(A[row, k], B[k, col])  # GPU-less
        C[row, col] = acc


@cuda.jit
def tries(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            try:  # GPU-less
                acc += A[row, k] * B[k, col]
            except ZeroDivisionError:
                acc = float32(0.0)
        C[row, col] = acc


@cuda.jit
def numpy_accumulator(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = np.zeros(1, np.float32)  # GPU-less
        for k in range(A.shape[1]):
            acc[0] += A[row, k] * B[k, col]
        C[row, col] = acc[0]


@cuda.jit
def formats(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = A[row, 0] * B[0, col]
        if row == 99:
            print(f"C {C[row, col]}")  # GPU-less


@cuda.jit
def string_method(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1] and "acc".upper() == "ACC":  # GPU-less
        C[row, col] = A[row, 0] * B[0, col]


@cuda.jit
def global_list(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = A[row, OFFSETS[0]] * B[0, col]  # GPU-less


@cuda.jit
def global_dict_cache(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            if (row, k) not in MEMO:  # GPU-less
                MEMO[(row, k)] = A[row, k]
            acc += MEMO[(row, k)] * B[k, col]
        C[row, col] = acc


@cuda.jit
def global_array_cache(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        SEEN[0] = A[row, 0]  # GPU-less
        C[row, col] = SEEN[0] * B[0, col]


@cuda.jit
def returns_its_sum(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = A[row, 0] * B[0, col]
        return C[row, col]  # GPU-less


@pytest.mark.parametrize("kernel", [plain_helper, tries, numpy_accumulator, formats, string_method,
                                    global_list, global_dict_cache, global_array_cache, returns_its_sum],
                         ids=lambda k: k.__name__)
def test_python_a_gpu_cannot_build_is_the_kernels_fault_by_its_line(rng, capsys, kernel):
    line = source_line(kernel, "# GPU-less")
    with pytest.raises(contract.Fault, match=rf"^line {line}: .*numba cannot compile .* in a GPU kernel"):
        count_loads(kernel, *operands(rng, 4, 4, 4), T)
    assert check(kernel, tile=T) is False
    out = capsys.readouterr().out
    assert f"line {line}: " in out and "cannot count" not in out and "Traceback" not in out, out


@cuda.jit
def what_numba_builds(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col] * TABLE[0]
        if row == 99:
            print("acc", acc)
        C[row, col] = acc


def test_what_numba_builds_is_counted(rng):
    A, B = operands(rng, 5, 6, 7)
    c = count_loads(what_numba_builds, A, B, T)
    np.testing.assert_allclose(c.C, A @ B, rtol=1e-5, atol=1e-5)
    assert (c.A, c.B) == (5 * 6 * 7, 5 * 6 * 7)


@cuda.jit("void(float64[:, :], float64[:, :], float64[:, :])")
def typed_for_float64(A, B, C):  # the lab rebuilds from the Python: the signature, which float32 arrays fail, is lost
    row, col = cuda.grid(2)[1], cuda.grid(2)[0]
    if row < C.shape[0] and col < C.shape[1]:
        acc = 0.0
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def test_a_signature_for_other_arrays_than_float32_is_refused_by_its_line(capsys):
    assert check(typed_for_float64, tile=4, limit_loads=False) is False
    said = capsys.readouterr().out
    assert "compiles it for float64 arrays only" in said and "leave the signature out" in said, said
