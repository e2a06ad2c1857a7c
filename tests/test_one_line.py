"""Inputs that once gave a raw traceback or a silent pass (issue 36), each answered in one line that names what to
change: names looked up while a kernel runs, a barrier reached through anything but `cuda`, 3-D or fractional
geometry, a lambda kernel, positional-only parameters, a single Rule, shared arrays declared by keyword."""
import dataclasses
import importlib
import sys

import numpy as np
import pytest

import tiledlab
from conftest import source_line
from numba import cuda, float32  # globals, as in a notebook

from tiledlab.core import Rule, launch_geometry, matmul
from tiledlab.counting import count_loads
from tiledlab.counting.exercises import check

T = 4
A = np.ones((8, 8), np.float32)


@cuda.jit
def via_locals(A, B, C):
    sB = cuda.shared.array((T, T), float32)
    sB[cuda.threadIdx.y, cuda.threadIdx.x] = B[0, 0]
    cuda.syncthreads()  # stored
    C[0, 0] = locals()["sB"][0, 0]


@cuda.jit
def via_globals(A, B, C):
    globals()["cuda"].syncthreads()
    C[0, 0] = A[0, 0]


@cuda.jit
def via_import(A, B, C):
    importlib.import_module("numba.cuda").syncthreads()
    C[0, 0] = A[0, 0]


@cuda.jit
def via_frame(A, B, C):
    C[0, 0] = sys._getframe().f_locals["A"][0, 0]


@pytest.mark.parametrize("kernel,code,why", [
    (via_locals, 'locals()["sB"][0, 0]', r"locals\(\) looks names up while the kernel runs"),
    (via_globals, 'globals()["cuda"].syncthreads()', r"looks names up|write cuda.syncthreads with the module"),
    (via_import, 'importlib.import_module("numba.cuda").syncthreads()', r"write cuda.syncthreads with the module"),
    (via_frame, 'sys._getframe().f_locals["A"]', r"looks names up while the kernel runs"),
], ids=lambda v: getattr(v, "__name__", None))
def test_a_name_looked_up_while_the_kernel_runs_is_refused_by_line(capsys, kernel, code, why):
    with pytest.raises(ValueError, match=why) as refused:
        count_loads(kernel, A, A, T)
    assert str(refused.value).startswith(f"line {source_line(kernel, code)}: ")
    assert check(kernel, tile=T) is False
    said = capsys.readouterr().out
    assert said.startswith("tiledlab cannot count this kernel: line ") and said.count("\n") == 1, said


@launch_geometry(T=4, threads=lambda T: (T, T, 2))
@cuda.jit
def three_d(A, B, C):
    C[cuda.threadIdx.y, cuda.threadIdx.x] = A[0, 0]


@launch_geometry(T=4, threads=lambda T: (T / 2, T))
@cuda.jit
def half_threads(A, B, C):
    C[0, 0] = A[0, 0]


@pytest.mark.parametrize("kernel", [three_d, half_threads], ids=["3-D", "fractional"])
def test_a_block_other_than_two_whole_numbers_is_refused(capsys, kernel):
    with pytest.raises(ValueError, match=r"tiledlab launches 2-D blocks: two whole numbers each"):
        matmul(A, A, kernel)
    assert check(kernel, tile=T) is False
    assert "2-D blocks" in capsys.readouterr().out


def test_a_lambda_kernel_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"this kernel is a lambda.*def name\(A, B, C\)"):
        count_loads(cuda.jit(lambda A, B, C: None), A, A, T)


@cuda.jit
def positional_only(A, B, C, /):
    C[0, 0] = A[0, 0]


def test_positional_only_parameters_are_named_as_written():
    with pytest.raises(ValueError, match=r"positional_only\(A, B, C, /\) must take exactly three arguments \(A, B, "
                                         r"C\), as plain parameters"):
        matmul(A, A, positional_only, T)


def test_requires_takes_one_rule_or_a_list():
    one = launch_geometry(T=4, requires=Rule(lambda T: T > 1, "T > 1"))
    assert callable(one)
    with pytest.raises(ValueError, match="requires= takes Rule objects"):
        launch_geometry(T=4, requires="T > 1")


@cuda.jit
def shared_by_keyword(A, B, C):
    s = cuda.shared.array(dtype=float32, shape=(T, T))
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty, tx] = A[ty, tx]
    cuda.syncthreads()  # every element stored
    C[ty, tx] = s[tx, ty]


def test_a_shared_array_declared_by_keyword_is_counted():
    c = count_loads(shared_by_keyword, A[:4, :4].copy(), A[:4, :4].copy(), T)
    assert (c.A, int(c.shared_stores.sum()), int(c.shared_reads.sum())) == (16, 16, 16)


def test_a_gpu_compilers_float_index_error_is_said_at_its_line(monkeypatch, capsys):
    """On a GPU numba refuses a float index while compiling, with ANSI colours, its own paths and no line of the
    kernel's: the lab finds the line in the kernel and says what the simulator says."""
    from test_hazards import float_index_at_run_time
    from tiledlab.counting import count

    gpu_error = ("\x1b[1mNo implementation of function Function(<built-in function getitem>) found for signature:\n"
                 " >>> getitem(array(float32, 2d, C), Tuple(int64, float64))\n  NumbaTypeError: \x1b[1mUnsupported array "
                 "index type float64 in Tuple(int64, float64)\x1b[0m\n  raised from /opt/numba_cuda/typing/arraydecl.py:129")

    class TypingError(Exception):
        pass

    def compile_fails(*args):
        raise TypingError(gpu_error)
    real = count.instrumented

    def instrumented(bound):  # its kernel fails when launched, as a GPU's fails to compile at its first launch
        return dataclasses.replace(real(bound), kernel=type("K", (), {"__getitem__": lambda self, config: compile_fails})())
    monkeypatch.setattr(count, "instrumented", instrumented)
    with pytest.raises(count.LaunchFailed) as failed:
        count_loads(float_index_at_run_time, A, A, T)
    line = source_line(float_index_at_run_time, "C[0, 0] = A[0, k]")
    assert str(failed.value).startswith(f"line {line}: 'C[0, 0] = A[0, k]': the kernel failed here: an index is not "
                                        "a whole number") and "\x1b" not in str(failed.value)


def test_a_gpu_compilers_refusal_of_a_vote_is_said_as_on_the_simulator(monkeypatch):
    """numba's GPU compiler refuses cuda.syncthreads_or(True/False) with its own words; the lab says what the
    simulator says (test_review_probes), at the kernel's line."""
    import test_review_probes
    from tiledlab.counting import count
    kernel = test_review_probes.vote_of_a_helpers_condition
    line = source_line(kernel, "# GPU-less")
    gpu_error = ("\x1b[1mNo implementation of function Function(<intrinsic syncthreads_or>) found for signature:\n \n"
                 " >>> syncthreads_or(bool)\n \nThere are 2 candidate implementations:\n\x1b[0m\n")  # as numba says it:
    # no line of the kernel's

    def compile_fails(*args):
        raise TypeError(gpu_error)
    real = count.instrumented
    monkeypatch.setattr(count, "instrumented", lambda bound: dataclasses.replace(
        real(bound), kernel=type("K", (), {"__getitem__": lambda self, config: compile_fails})()))
    with pytest.raises(count.LaunchFailed) as failed:
        count_loads(kernel, A[:4, :4].copy(), A[:4, :4].copy(), T)
    assert str(failed.value).startswith(f"line {line}: ") and "numba cannot compile cuda.syncthreads_or of a " \
        "condition (True or False)" in str(failed.value) and "\x1b" not in str(failed.value), failed.value


@cuda.jit
def bound_past_64_bits(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1] * 2 ** 62):  # 2**66 at K = 16: 0 on a GPU
            acc += A[row, k % A.shape[1]] * B[k % A.shape[1], col]
        C[row, col] = acc


def test_a_number_past_64_bits_is_said_at_its_line(capsys):
    """On the simulator Python's integers do not wrap: said as such. On a GPU the bound wraps (2**66 is 0 at
    K = 16, 2**62 at K = 9): the product is wrong at the first odd shape, and the count never waits for 2**62 passes."""
    assert check(bound_past_64_bits, tile=T) is False
    said = capsys.readouterr().out
    if tiledlab.SIMULATOR:
        assert f"line {source_line(bound_past_64_bits, '# 2**66')}: " in said and "not fit in 64 bits" in said, said
    else:
        assert said.startswith("Wrong result") or "would go round this loop" in said, said


@cuda.jit
def stores_at_a_float(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col / 1] = A[row, 0]


def test_a_float_index_in_a_store_names_the_store(capsys):
    assert check(stores_at_a_float, tile=T, limit_loads=False) is False
    said = capsys.readouterr().out
    assert f"line {source_line(stores_at_a_float, 'C[row, col / 1] = A[row, 0]')}: " in said, said


@cuda.jit(device=True)
def peek(k, tx):  # a device function, or numba's refusal of a plain Python one comes first
    return sys._getframe(1).f_locals["sB"][k, tx]


@cuda.jit
def reads_through_a_helper(A, B, C):
    sB = cuda.shared.array((T, T), float32)
    sB[cuda.threadIdx.y, cuda.threadIdx.x] = B[cuda.threadIdx.y, cuda.threadIdx.x]
    cuda.syncthreads()  # stored
    C[0, 0] = peek(0, 0)


def test_a_helper_that_looks_names_up_is_refused_by_its_call():
    with pytest.raises(ValueError, match=r"peek → sys._getframe\(1\).f_locals looks names up"):
        count_loads(reads_through_a_helper, A, A, T)
