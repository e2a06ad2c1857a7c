"""Barrier hazards said in one message whatever kind thread timing produced, and checked on products
with at least two tile phases (where the second barrier has a step to guard)."""
import contextlib
import io
import pathlib
import re

import nbformat
import numpy as np
import pytest
from conftest import operands, source_line
from numba import cuda, float32  # globals, as in a notebook

import tiledlab
from tiledlab.counting import count_loads
from tiledlab.counting.exercises import check
from tiledlab.counting.hazards import EFFECT, hazard_message
from tiledlab.counting.variants import without_barrier

NOTEBOOK_2 = pathlib.Path(__file__).parents[1] / "notebooks" / "02_redundant_reads.ipynb"
KINDS = ("read_after_write", "write_after_read", "write_after_write", "read-after-write", "write-after-read")


def test_one_message_whatever_the_kind():
    one = hazard_message({"read_after_write": 0, "write_after_read": 1152, "write_after_write": 0})
    other = hazard_message({"read_after_write": 1000, "write_after_read": 152, "write_after_write": 0})
    assert one == other and EFFECT in one and "1,152" in one
    assert not any(kind in one for kind in KINDS)
    assert not re.search(r"\d", hazard_message({"read_after_write": 3, "write_after_read": 0,
                                                "write_after_write": 0}, count=False))
    assert "no barrier hazards" in hazard_message({"read_after_write": 0, "write_after_read": 0,
                                                   "write_after_write": 0})


def test_check_names_the_array_kind_lines_threads_and_the_barrier_to_add(capsys):
    assert check(without_barrier(tiledlab.tiled, 1), tile=4) is False
    out = capsys.readouterr().out
    assert EFFECT in out and re.search(r"\d+ barrier hazards", out)
    load, read, second = (source_line(tiledlab.tiled, code) for code in
                          ("sB[ty, tx] = B[k0 + ty, col]", "acc += sA[ty, k] * sB[k, tx]", "# nobody may overwrite"))
    example = re.search(r"For example, in block \(by=\d+, bx=\d+\), a (read after a write|write after a read): "
                        r".*thread \(ty=\d+, tx=\d+\).*(sA|sB)\[\d+, \d+\].*thread \(ty=\d+, tx=\d+\)", out)
    assert example, out
    lines = {int(n) for n in re.findall(r"at line (\d+)", out)}
    assert lines <= {load - 1, load, read} and read in lines, (lines, out)  # the store of sA or sB, and the read
    assert f"passes after line {read}, at the end of the loop, before line" in out  # where the second barrier was
    assert second == read + 1


def test_a_missing_first_barrier_is_placed_between_the_store_and_the_read(rng):
    c = count_loads(without_barrier(tiledlab.tiled, 0), *operands(rng, 8, 8, 8), tile=4)
    read = source_line(tiledlab.tiled, "acc += sA[ty, k] * sB[k, tx]")
    assert re.search(rf"passes between line \d+ and line {read}\.", hazard_message(c.hazards)), c.hazards.examples


def test_the_second_barrier_guards_nothing_with_one_tile_phase(rng):
    broken = without_barrier(tiledlab.tiled, 1)
    one_phase = count_loads(broken, *operands(rng, 4, 4, 4), tile=4)  # the 4×4 product of notebook 2
    two_phases = count_loads(broken, *operands(rng, 4, 8, 4), tile=4)  # K = 2T: phase 1 overwrites phase 0's tile
    assert sum(one_phase.hazards.values()) == 0
    assert sum(two_phases.hazards.values()) > 0


def hazard_cell():
    cells = [c for c in nbformat.read(NOTEBOOK_2, 4).cells if "hazard-check" in c.metadata.get("tags", [])]
    assert len(cells) == 1, "notebook 2 has one cell tagged hazard-check"
    return cells[0].source


@pytest.mark.parametrize("which", [0, 1])
def test_notebook_2s_hazard_line_catches_either_missing_barrier(which):
    rng = np.random.default_rng(0)
    scope = {"tiled": without_barrier(tiledlab.tiled, which), "count_loads": count_loads,
             "rand": lambda M, K: rng.standard_normal((M, K), dtype=np.float32)}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(hazard_cell(), scope)
    assert EFFECT in out.getvalue() and "no barrier hazards" not in out.getvalue()


def test_notebook_2s_hazard_line_passes_the_lesson_kernel():
    rng = np.random.default_rng(0)
    scope = {"tiled": tiledlab.tiled, "count_loads": count_loads,
             "rand": lambda M, K: rng.standard_normal((M, K), dtype=np.float32)}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(hazard_cell(), scope)
    assert "no barrier hazards" in out.getvalue()


# --- barriers that not every thread reaches --------------------------------------------------------------

T = 4


@cuda.jit
def barrier_inside_the_guard(A, B, C):
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * T + ty, cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    if row < M and col < N:  # threads past the edge skip the barriers below
        acc = float32(0.0)
        for t in range((K + T - 1) // T):
            sA[ty, tx] = A[row, t * T + tx] if t * T + tx < K else float32(0.0)
            sB[ty, tx] = B[t * T + ty, col] if t * T + ty < K else float32(0.0)
            cuda.syncthreads()  # tiles complete before use: but not every thread gets here
            for k in range(T):
                acc += sA[ty, k] * sB[k, tx]
            cuda.syncthreads()  # nobody overwrites the tiles while a neighbour reads them
        C[row, col] = acc


@cuda.jit
def returns_before_the_barrier(A, B, C):
    s = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    if tx == T - 1:
        return
    s[ty, tx] = A[ty, tx]
    cuda.syncthreads()  # every thread that is left stored its element
    C[ty, tx] = s[ty, tx]


@cuda.jit
def a_barrier_in_each_branch(A, B, C):
    s = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty, tx] = A[ty, tx]
    if tx == 0:
        cuda.syncthreads()  # half the block waits here
    else:
        cuda.syncthreads()  # and half here: two barriers, not one
    C[ty, tx] = s[ty, tx]


@pytest.mark.parametrize("kernel,shape,line,other", [
    (barrier_inside_the_guard, (6, 5, 6), "# tiles complete before use: but not", None),
    (returns_before_the_barrier, (4, 4, 4), "# every thread that is left", None),
], ids=lambda v: getattr(v, "__name__", None))
def test_a_barrier_not_every_thread_reaches_is_its_own_hazard_by_line(rng, kernel, shape, line, other):
    c = count_loads(kernel, *operands(rng, *shape), T)
    assert c.hazards["divergent_barrier"] >= 1, c.hazards
    h = c.hazards.examples["divergent_barrier"]
    assert (h.line, h.other_line) == (source_line(kernel, line), other and source_line(kernel, other))
    message = hazard_message(c.hazards)
    assert message.startswith(f"The cuda.syncthreads() at line {h.line} ") and "undefined behaviour" in message
    assert ("waits at line" if other else "finished without reaching it") in message


def test_check_fails_a_barrier_inside_the_guard(capsys):
    assert not check(barrier_inside_the_guard, tile=4, limit_loads=False)
    out = capsys.readouterr().out
    line = source_line(barrier_inside_the_guard, "# tiles complete before use: but not")
    assert f"The cuda.syncthreads() at line {line}" in out and "Take the barrier out of the condition" in out


# --- reads and stores outside an array: said plainly ---------------------------------------------------

@cuda.jit
def two_columns_unguarded(A, B, C):  # exercise 1.1 with the read of B[k, col + 1] unguarded
    col = 2 * (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x)
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        acc0 = float32(0.0)
        acc1 = float32(0.0)
        for k in range(A.shape[1]):
            a = A[row, k]
            acc0 += a * B[k, col]
            acc1 += a * B[k, col + 1]
        C[row, col] = acc0
        if col + 1 < C.shape[1]:
            C[row, col + 1] = acc1


@cuda.jit
def stores_past_the_edge(A, B, C):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    acc = float32(0.0)
    if row < A.shape[0] and col < B.shape[1]:
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
    C[row, col] = acc


@cuda.jit
def reads_row_minus_one(A, B, C):  # A[-1, k] would wrap around to the last row: outside A too
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = A[row - 1, 0]


@cuda.jit
def shared_index_past_the_tile(A, B, C):
    s = cuda.shared.array((T, T), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    s[ty, tx] = A[ty, tx]
    cuda.syncthreads()  # the tile is complete
    C[ty, tx] = s[ty, tx + 1]


@cuda.jit
def float_index_at_run_time(A, B, C):
    k = 0.5 * cuda.threadIdx.x
    C[0, 0] = A[0, k]


@pytest.mark.parametrize("kernel,code,said", [
    (two_columns_unguarded, "acc1 += a * B[k, col + 1]", r"A 12×20 · B 20×9, tile=4: .* reads B\[\d+, 9\], outside "
                                                          r"B \(20×9: rows 0–19, columns 0–8\)\. Guard this read"),
    (stores_past_the_edge, "C[row, col] = acc", r"stores C\[\d+, \d+\], outside C \(12×9: rows 0–11, columns "
                                                r"0–8\)\. Guard this store"),
    (reads_row_minus_one, "C[row, col] = A[row - 1, 0]", r"reads A\[-1, 0\], outside A"),
    (shared_index_past_the_tile, "C[ty, tx] = s[ty, tx + 1]", r"reads s\[\d, 4\], outside s \(4×4"),
    (float_index_at_run_time, "C[0, 0] = A[0, k]", r"the kernel failed here: an index is not a whole number"),
], ids=lambda v: getattr(v, "__name__", None))
def test_check_says_where_a_kernel_reads_or_stores_outside_and_by_which_thread(capsys, kernel, code, said):
    assert check(kernel, tile=4, limit_loads=False) is False
    out = capsys.readouterr().out
    assert f"line {source_line(kernel, code)}: {code!r}: " in out and re.search(said, out), out
    assert "Traceback" not in out and "_tl_" not in out and len(out) < 600, out
    if "outside" in said:
        assert re.search(r"thread \(ty=\d+, tx=\d+\) of block \(by=\d+, bx=\d+\)", out), out


def test_an_outside_read_is_a_value_error_naming_the_operand_not_a_counting_array(rng):
    from tiledlab.counting.count import LaunchFailed
    with pytest.raises(LaunchFailed, match=r"reads B\[\d, 7\], outside B \(8×7") as failed:
        count_loads(two_columns_unguarded, *operands(rng, 8, 8, 7), tile=4)
    assert isinstance(failed.value, ValueError) and failed.value.__suppress_context__


# --- a shared array declared but never used -----------------------------------------------------------------

@cuda.jit
def naive_declaring_tiles(A, B, C):
    sA = cuda.shared.array((T, T), float32)  # noqa: F841
    sB = cuda.shared.array((T, T), float32)  # noqa: F841
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def test_shared_arrays_declared_but_never_used_are_flagged(capsys, rng):
    assert count_loads(naive_declaring_tiles, *operands(rng, 4, 4, 4), T).unused_shared == ("sA", "sB")
    assert count_loads("tiled", *operands(rng, 4, 4, 4), T).unused_shared == ()
    assert not check(naive_declaring_tiles, tile=4, hint="let one tile of A serve both of a thread's columns.")
    out = capsys.readouterr().out
    assert "Note: sA, sB declared with cuda.shared.array but never read or stored" in out
    assert check(naive_declaring_tiles, tile=4, limit_loads=False)
    assert "never read or stored" in capsys.readouterr().out


# --- an asynchronous copy read before its wait --------------------------------------------------------------

def test_check_fails_a_kernel_that_reads_a_copy_before_its_wait(capsys):
    from test_ptx import copy_kernel
    assert not check(copy_kernel(wait=False), tile=8, limit_loads=False)
    out = capsys.readouterr().out
    assert re.search(r"[\d,]+ copies in flight: an asynchronous copy", out) and "cp_async_wait" in out, out
    assert "may still be in flight" in out and "Passed." not in out
