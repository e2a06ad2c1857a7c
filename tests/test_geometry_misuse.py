"""launch_geometry misused (hostile review 50, N1–N3, M3): each mistake is one line that says what to write instead,
raised where launch_geometry is called or, for a geometry function's result, printed once by check()."""
import numpy as np
import pytest
from numba import cuda, float32  # globals, as in a notebook

from tiledlab.core import Rule, launch_geometry, matmul
from tiledlab.counting.exercises import check

T = 4
A = np.ones((8, 8), np.float32)


def naive(A, B, C):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@pytest.mark.parametrize("geometry, said", [
    (dict(threads=lambda T: T * T), r"naive: threads gives one number, 16, with T=4; tiledlab launches 2-D blocks: "
                                    r"return two, \(x, y\).*a 1-D block of n threads is \(n, 1\)"),
    (dict(block=lambda T: T), r"naive: block gives one number, 4, with T=4; .*return two, \(rows, cols\)"),
], ids=["threads", "block"])
def test_a_geometry_of_one_number_is_one_line_from_check(capsys, geometry, said):
    kernel = launch_geometry(T=4, **geometry)(cuda.jit(naive))
    with pytest.raises(ValueError, match=said):
        matmul(A, A, kernel)
    assert check(kernel, tile=T, limit_loads=False) is False
    out = capsys.readouterr().out
    assert out.startswith("tiledlab cannot count this kernel: naive: ") and out.count("\n") == 1, out


@pytest.mark.parametrize("arguments, said", [
    (dict(T=4, threads=(4, 4)), r"threads= takes a function of the constants, as in threads=lambda T: \(T, T\); "
                                r"got \(4, 4\)"),
    (dict(threads=lambda T: (T, T)), r"threads reads T, which launch_geometry was not given: add T=\.\.\. to "),
    (dict(), r"the lesson's T×T block reads T, .*add T=\.\.\. to @launch_geometry"),
    (dict(T=4, requires=[Rule(lambda T, Q: True, "q")]), r"the rule 'q' reads Q, .*add Q=\.\.\. to "),
    (dict(T=4, min_blocks="2"), r"min_blocks must be a whole number of at least 1, got '2'"),
    (dict(T="4"), r"T must be a whole number of at least 0, got '4'"),
], ids=["threads-not-a-function", "no-T", "nothing", "rule-unknown-constant", "min_blocks-str", "T-str"])
def test_launch_geometry_refuses_its_wrong_arguments_when_called(arguments, said):
    with pytest.raises(ValueError, match=said):
        launch_geometry(**arguments)


def test_launch_geometry_without_parentheses_says_to_call_it():
    with pytest.raises(ValueError, match=r"call launch_geometry with the kernel's constants, as in "
                                         r"@launch_geometry\(T=4\), above @cuda.jit"):
        launch_geometry(cuda.jit(naive))


def test_cuda_jit_above_launch_geometry_says_to_swap_them():
    with pytest.raises(ValueError, match=r"put @launch_geometry\(\.\.\.\) above @cuda.jit"):
        cuda.jit(launch_geometry(T=4)(naive))
