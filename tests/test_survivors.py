"""Tests that fail under each mutation the fast tests once let live (issue 36): each names the mutation it kills."""
import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from conftest import operands, simulator_only, source_line
from numba import cuda, float32  # globals, as in a notebook

from tiledlab.core import matmul
from tiledlab.core.ptx import ldg4
from tiledlab.counting import count_loads
from tiledlab.counting.exercises import check, predict
from tiledlab.counting.recorded import SecondCount

SCALE = 1.0


@cuda.jit
def scaled(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = SCALE * A[row, 0]


def test_a_changed_global_is_run_as_it_is_counted(rng):  # the build cache ignoring globals changed since
    global SCALE
    A, B = np.ones((4, 4), np.float32), np.ones((4, 4), np.float32)
    try:
        assert matmul(A, B, scaled, 4)[0, 0] == 1.0
        SCALE = 2.0
        assert matmul(A, B, scaled, 4)[0, 0] == 2.0 == count_loads(scaled, A, B, 4).C[0, 0]
    finally:
        SCALE = 1.0


@cuda.jit
def last_thread_races(A, B, C):  # in a 32×32 block, the last thread and thread 0 both store C[0, 0]
    if cuda.threadIdx.x + cuda.threadIdx.y * 32 in (0, 1023):
        C[0, 0] = A[0, 0]


def test_a_race_of_a_1024_thread_blocks_last_thread_names_it(rng):  # the thread stamp's base at 1,024
    c = count_loads(last_thread_races, *operands(rng, 32, 32, 32), 32)
    (i, j, first, other), = c.C_races
    assert {first, other} == {(0, 0, 0, 0), (0, 0, 31, 31)}


@cuda.jit
def last_thread_reads_early(A, B, C):
    s = cuda.shared.array((32, 32), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    if tx == 0 and ty == 0:
        s[31, 31] = A[0, 0]
    if tx == 31 and ty == 31:
        C[0, 0] = s[31, 31]  # no barrier between thread 0's store and this read
    else:
        C[ty, tx] = 0.0


def test_a_hazard_of_the_last_thread_is_found(rng):
    c = count_loads(last_thread_reads_early, *operands(rng, 32, 32, 32), 32)
    # the one read ran before thread 0's store (no value; the store may then overwrite a read element) or after it,
    # as a GPU's warps please: it is one hazard of the read either way, never both
    assert c.hazards["read_after_write"] + c.hazards["unstored_read"] == 1, c.hazards
    assert c.hazards["write_after_read"] <= 1, c.hazards


@cuda.jit
def wide_past_the_edge(A, B, C):
    a0, a1, a2, a3 = ldg4(A, 0, A.shape[1] - 2)  # four floats from two before the edge: two outside
    C[0, 0] = a0 + a1 + a2 + a3


def test_a_wide_read_past_the_edge_names_it(capsys):  # a bounds check ignoring the access's width
    assert not check(wide_past_the_edge, tile=4, limit_loads=False)
    said = capsys.readouterr().out
    line = source_line(wide_past_the_edge, "ldg4(A, 0, A.shape[1] - 2)")
    assert f"line {line}:" in said and re.search(r"reads A\[0, \d+\], outside A .* Guard this read", said), said


@simulator_only
def test_the_second_count_records_only_whole_indices():  # recorded.py's all → any
    class Launch:
        A = B = C = cuda.to_device(np.zeros((2, 2), np.float32))
    second = SecondCount(Launch)
    recorder = second.recorders["A"]
    with second.armed():
        recorder._note(recorder.reads, (0, np.float64(1.0)))
        recorder._note(recorder.reads, (1, 1))
    assert recorder.odd == [(0, np.float64(1.0))] and recorder.reads.sum() == 1


def test_counts_from_three_threads_at_once_are_each_right():
    A = np.ones((8, 8), np.float32)
    with ThreadPoolExecutor(3) as threads:
        got = [f.result().total for f in [threads.submit(count_loads, k, A, A, 4) for k in ("tiled", "naive", "tiled")]]
    assert got == [256, 1024, 256]


@pytest.mark.parametrize("prediction,said", [
    (float("nan"), "Give a number, not nan."),
    (__import__("fractions").Fraction(1, 3), "not yet: 1/3 is too low."),
])
def test_odd_predictions_are_answered_in_one_line(capsys, prediction, said):
    assert predict(prediction, 5) is False
    assert said in capsys.readouterr().out


def test_a_tuned_choice_counts_only_where_it_was_timed_and_only_as_a_kernels_name(tmp_path, monkeypatch):
    from tiledlab.core import best, card
    from tiledlab.core.registry import KERNELS
    monkeypatch.setenv(best.CACHE_ENV, str(tmp_path))
    here, shape = card.current(), (64, 64, 64)
    for kernel, found in ((["tiled"], None), ("s_64x128x8_8x8_db", "s_64x128x8_8x8_db")):  # a list names no kernel
        best.save([best.entry(here, best.shape_class(*shape), kernel, {"backend": "simulator"})])
        monkeypatch.setattr(best, "SIMULATOR", True)
        assert best.tuned(*shape, here, KERNELS) == found
        monkeypatch.setattr(best, "SIMULATOR", False)  # a GPU never takes what the simulator timed
        assert best.tuned(*shape, here, KERNELS) is None
