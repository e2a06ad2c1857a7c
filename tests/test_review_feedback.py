"""A hostile review of the feedback (stop 51, N4–N6), each case as the reviewer wrote it: a kernel in a cell run by
%%time (its source not kept) refused in one line when checked, not at decoration; a kernel's failure said without
the simulator's words (tid=… ctaid=…, FakeCUDAModule), at the line that failed, alike on a GPU's compiler and in
Chinese; and the cause of three common wrong results: a stub that stores nothing, row and col swapped by
cuda.grid(2), float16 tiles whose values print alike."""
import numpy as np
import pytest
from conftest import source_line
from numba import cuda, float32  # globals, as in a notebook
from numba.types import float16

from tiledlab.core import launch_geometry
from tiledlab.counting import count_loads
from tiledlab.counting.count import said
from tiledlab.counting.exercises import check

T = 4


@pytest.fixture
def zh(monkeypatch):
    monkeypatch.setenv("TILEDLAB_LANG", "zh")


def checked(capsys, kernel, **options):
    assert check(kernel, **{"tile": T, "seed": 0, "limit_loads": False, **options}) is False
    return capsys.readouterr().out


# --- N4: %%time runs the cell's code as "<timed exec>", which linecache does not hold --------------------------------
TIMED_CELL = '''
@launch_geometry(T=4)
@cuda.jit
def two_per_thread(A, B, C):
    row, col = cuda.grid(2)
    C[row, col] = A[row, 0]

@cuda.jit
def plain(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = A[row, 0]
'''


@pytest.fixture
def timed_cell():
    """The kernels of a cell IPython's %%time ran: defined without a traceback, whatever the decorators."""
    scope = {"cuda": cuda, "launch_geometry": launch_geometry}
    exec(compile(TIMED_CELL, "<timed exec>", "exec"), scope)
    return scope


@pytest.mark.parametrize("name", ["two_per_thread", "plain"])
def test_a_kernel_in_a_cell_run_by_time_is_refused_in_one_line_naming_the_magic(capsys, timed_cell, name):
    out = checked(capsys, timed_cell[name])
    assert out.count("\n") == 1 and "a cell magic (%%time, %%timeit)" in out and "%time check(...)" in out, out
    assert "typed at the Python prompt" not in out
    with pytest.raises(ValueError, match="a cell magic"):
        count_loads(timed_cell[name], np.ones((4, 4), np.float32), np.ones((4, 4), np.float32), T)


def test_a_kernel_in_a_cell_run_by_time_is_refused_in_chinese(zh, capsys, timed_cell):
    out = checked(capsys, timed_cell["two_per_thread"])
    assert "单元格魔法命令（%%time、%%timeit）" in out and "cannot" not in out, out


# --- N5: a kernel's failure in words alike on both backends ----------------------------------------------------------
@cuda.jit
def acc_never_set(A, B, C):  # a half-written kernel: acc never set, its first read after a shared one
    sA = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * T + ty
    col = cuda.blockIdx.x * T + tx
    for t in range((A.shape[1] + T - 1) // T):
        sA[ty, tx] = A[row, t * T + tx] if row < A.shape[0] and t * T + tx < A.shape[1] else float32(0.0)
        cuda.syncthreads()  # sA stored
        for k in range(T):
            acc += sA[ty, k] * B[t * T + k, col]  # unset
        cuda.syncthreads()  # sA read


@cuda.jit
def threadidx_typo(A, B, C):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadidx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = A[row, 0]


@cuda.jit
def scale_undefined(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col] * scale  # noqa: F821  a name never defined
        C[row, col] = acc


@pytest.mark.parametrize("kernel, code, words", [
    (acc_never_set, "# unset", "acc is read here before it is given a value: give it one first"),
    (threadidx_typo, "cuda.threadidx.y", "cuda has no threadidx (did you mean threadIdx?)"),
    (scale_undefined, "* scale", "nothing named scale is defined for the kernel: check its spelling"),
], ids=["unset", "typo", "undefined"])
def test_a_kernels_failure_is_said_in_words_at_its_own_line(capsys, kernel, code, words):
    out = checked(capsys, kernel)
    assert f"line {source_line(kernel, code)}: " in out and f"the kernel failed here: {words}" in out, out
    assert "tid=" not in out and "ctaid" not in out and "FakeCUDAModule" not in out and "Error" not in out, out


@pytest.mark.parametrize("kernel, words", [
    (acc_never_set, "acc 在赋值之前就在这里被读取了"),
    (threadidx_typo, "cuda 没有 threadidx（你是想写 threadIdx 吗？）"),
    (scale_undefined, "核函数找不到名为 scale 的东西"),
], ids=["unset", "typo", "undefined"])
def test_a_kernels_failure_is_said_in_chinese(zh, capsys, kernel, words):
    out = checked(capsys, kernel).split("核函数在这里出错：")[-1]  # what failed, after the line and its code
    assert out.startswith(words) and not any(word in out for word in ("variable", "attribute", "defined")), out


@pytest.mark.parametrize("gpu_error, code, words", [  # numba's words on a GPU, as its compiler raises them
    ("Failed in cuda mode pipeline (step: analyzing bytecode)\nThe compiler failed to analyze the bytecode. Variable "
     "'acc' is not defined.\n\nFile \"k.py\", line 14:", "acc += sA[ty, k] * B[t * T + k, col]",
     "acc is read here before it is given a value"),
    ("module 'numba.cuda' has no attribute 'threadidx'", "row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadidx.y",
     "cuda has no threadidx (did you mean threadIdx?)"),
    ("Failed in cuda mode pipeline (step: nopython frontend)\nNameError: name 'scale' is not defined",
     "acc += A[row, k] * B[k, col] * scale", "nothing named scale is defined for the kernel"),
    ("Failed in cuda mode pipeline (step: nopython frontend)\nUnknown attribute 'w' of type Dim3",
     "tx = cuda.threadIdx.w", "cuda.threadIdx has no w"),
])
def test_a_gpu_compilers_words_are_said_as_the_simulators(gpu_error, code, words):
    assert said(Exception(gpu_error), code).startswith(words)


@pytest.mark.parametrize("gpu_error, code", [  # a GPU's compiler names no line of the kernel's for these
    ("module 'numba.cuda' has no attribute 'threadidx'", "cuda.threadidx.y"),
    ("Failed in cuda mode pipeline (step: nopython frontend)\nNameError: name 'scale' is not defined", "* scale"),
    (">>> syncthreads_or(float32)", "cuda.syncthreads_or("),
])
def test_a_gpu_compilers_refusal_is_placed_at_the_kernels_line_that_names_it(gpu_error, code):
    import ast
    import inspect
    import textwrap

    from tiledlab.counting.count import named_line
    lines = textwrap.dedent(inspect.getsource(_named_on_lines)).splitlines()
    tree = ast.parse("\n".join(lines)).body[0]
    assert code in lines[named_line(tree, gpu_error) - 1]


def _named_on_lines(A, B, C):  # never run: each line names one thing a GPU's compiler refuses
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadidx.y
    acc = A[row, 0] * scale  # noqa: F821
    cuda.syncthreads_or(acc)


def test_the_simulators_thread_is_left_out_of_a_failure_it_cannot_say_otherwise():
    assert said(ZeroDivisionError("tid=[3, 1, 0] ctaid=[0, 2, 0]: division by zero"), "x = 1 / 0") == \
        "ZeroDivisionError: division by zero"


# --- N6: the cause of common wrong results, where the count and the code show it -------------------------------------
@cuda.jit
def stub(A, B, C):  # as every exercise hands it out: loads, stores nothing
    sA = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * T + ty
    for t in range((A.shape[1] + T - 1) // T):
        sA[ty, tx] = A[row, t * T + tx] if row < A.shape[0] and t * T + tx < A.shape[1] else float32(0.0)
        cuda.syncthreads()  # sA stored


@cuda.jit
def grid_swapped(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def last_column_left(A, B, C):  # a guard one short: the last column never stored, cuda.grid(2) read right
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1] - 1:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def half_tiles(A, B, C):
    sA = cuda.shared.array((T, T), float16)
    sB = cuda.shared.array((T, T), float16)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * T + ty
    col = cuda.blockIdx.x * T + tx
    acc = float32(0.0)
    for t in range((A.shape[1] + T - 1) // T):
        sA[ty, tx] = A[row, t * T + tx] if row < A.shape[0] and t * T + tx < A.shape[1] else 0.0
        sB[ty, tx] = B[t * T + ty, col] if t * T + ty < A.shape[1] and col < B.shape[1] else 0.0
        cuda.syncthreads()  # tiles stored
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # tiles read
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


@cuda.jit
def half_tiles_one_step_short(A, B, C):  # float16, and the last tile step left out: more than rounding
    sA = cuda.shared.array((T, T), float16)
    sB = cuda.shared.array((T, T), float16)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * T + ty
    col = cuda.blockIdx.x * T + tx
    acc = float32(0.0)
    for t in range(A.shape[1] // T):
        sA[ty, tx] = A[row, t * T + tx] if row < A.shape[0] else 0.0
        sB[ty, tx] = B[t * T + ty, col] if col < B.shape[1] else 0.0
        cuda.syncthreads()  # tiles stored
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # tiles read
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


def test_a_stub_is_told_that_no_thread_stores_any_element_of_c(capsys):
    assert "No thread stores any element of C: have each thread store its result" in checked(capsys, stub)


def test_row_and_col_swapped_by_cuda_grid_are_named(capsys):
    out = checked(capsys, grid_swapped)
    line = source_line(grid_swapped, "row, col = cuda.grid(2)")
    assert "No thread stores C[0, 16] (13 of the 221 elements of C are never stored)" in out, out
    assert f"Line {line}: row, col = cuda.grid(2) makes row the x index" in out and \
        "write col, row = cuda.grid(2)." in out, out


def test_an_element_no_thread_stores_is_named_without_a_swap_the_code_does_not_show(capsys):
    out = checked(capsys, last_column_left)
    assert "No thread stores C[0, 6] (5 of the 35 elements of C are never stored)" in out and \
        "Look at how row and col follow from the thread's indices" in out and "cuda.grid(2) gives" not in out, out


def test_float16_tiles_are_named_and_shown_to_the_digits_that_differ(capsys):
    out = checked(capsys, half_tiles)
    lines = [source_line(half_tiles, f"{name} = cuda.shared.array") for name in ("sA", "sB")]
    assert "yours 3.667, numpy 3.667" in out and "To 5 digits, C[0, 0] is 3.6675 (yours) and 3.6668 (numpy)" in out
    assert f"the kernel works in float16 (line {lines[0]}, line {lines[1]})" in out, out


def test_float16_is_not_blamed_for_more_than_its_rounding(capsys):
    out = checked(capsys, half_tiles_one_step_short)
    assert out.startswith("Wrong result") and "float16" not in out and "To 5 digits" not in out, out


def test_the_new_causes_are_said_in_chinese(zh, capsys):
    assert "没有线程写入 C 的任何元素" in checked(capsys, stub)
    out = checked(capsys, grid_swapped)
    assert "没有线程写入 C[0, 16]" in out and "请写成 col, row = cuda.grid(2)。" in out, out
    out = checked(capsys, half_tiles)
    assert "保留 5 位有效数字时" in out and "核函数用的是 float16（第" in out and "digits" not in out, out
