"""The pointer chase: every timed launch walks a fresh path, and each row says what it touched."""
import csv

import numpy as np
import pytest
from conftest import simulator_only
from numba import cuda

from tiledlab import data
from tools.measure import latency
from tools.measure.facts import Facts
from tiledlab.experiments.timing import Timing


def test_ring_is_one_cycle_through_every_slot():
    nxt, order = latency.ring(64 * latency.LINE_WORDS, latency.LINE_WORDS)
    path = latency.walk(nxt, order[0], len(order))
    assert sorted(path) == sorted(order.tolist())  # every slot once
    assert int(nxt[path[-1]]) == order[0]  # and back to the start


def test_fresh_starts_give_disjoint_stretches_of_the_cycle():
    nxt, order = latency.ring(100 * latency.LINE_WORDS, latency.LINE_WORDS)
    starts = latency.fresh_starts(order, 20, 5, np.random.default_rng(3))
    paths = [set(latency.walk(nxt, s, 20).tolist()) for s in starts]
    assert len(set().union(*paths)) == 5 * 20


@simulator_only
def test_cold_chase_loads_a_fresh_path_each_launch_and_reports_what_it_touched(recording):
    steps, launches = 12, 4
    nxt, order = latency.ring(64 * latency.LINE_WORDS, latency.LINE_WORDS)
    row = latency.measure_level("cold", nxt.view(recording), order, steps, launches, warm=False)
    loads = np.array(recording.log)
    assert len(loads) == steps * launches  # zero-step launches load nothing; nothing else reads the ring
    chunks = loads.reshape(launches, steps)
    for chunk in chunks:  # each launch is a chase: every load's index is the value the one before loaded
        assert all(nxt[a] == b for a, b in zip(chunk[:-1], chunk[1:]))
    lines = [set((chunk // latency.LINE_WORDS).tolist()) for chunk in chunks]
    for i in range(launches):  # fresh: no launch loads a line an earlier launch loaded
        for j in range(i):
            assert not lines[i] & lines[j]
    assert row["path_bytes"] == steps * latency.LINE_BYTES == len(lines[0]) * latency.LINE_BYTES
    assert row["timed_bytes"] == len(set().union(*lines)) * latency.LINE_BYTES
    assert row["new_fraction"] == 1.0


@simulator_only
def test_the_old_chase_rewalks_one_path_and_the_row_would_say_so(recording):
    """The bug of issue 8: every launch from the same start loads the same lines."""
    nxt, order = latency.ring(64 * latency.LINE_WORDS, latency.LINE_WORDS)
    d_nxt, out = cuda.to_device(nxt.view(recording)), cuda.device_array(1, np.uint32)
    for _ in range(3):
        latency.chase[1, 1](d_nxt, np.uint32(order[0]), np.int32(10), out)
    chunks = np.array(recording.log).reshape(3, 10)
    assert (chunks == chunks[0]).all()


@simulator_only
def test_warm_chase_walks_the_whole_ring_first_and_reports_no_new_lines(recording):
    nxt, order = latency.ring(16 * latency.LINE_WORDS, latency.LINE_WORDS)
    row = latency.measure_level("warm", nxt.view(recording), order, steps=40, launches=2, warm=True)
    loads = np.array(recording.log)
    assert sorted(loads[:16].tolist()) == sorted(order.tolist())  # the warm-up pass: every slot once
    assert len(loads) == 16 + 2 * 40
    assert row["new_fraction"] == 0.0
    assert row["path_bytes"] == 16 * latency.LINE_BYTES  # 40 steps round a 16-line ring touch 16 lines


@pytest.mark.parametrize("dtype", [np.uint32, np.int32])
def test_shared_chase_ends_where_the_path_ends(dtype):
    nxt, order = latency.ring(latency.SHARED_WORDS, 1, dtype)
    out = cuda.device_array(1, dtype)
    latency.shared_kernel(dtype)[1, 1](cuda.to_device(nxt), dtype(order[5]), np.int32(37), out)
    assert int(out.copy_to_host()[0]) == int(nxt[latency.walk(nxt, order[5], 37)[-1]])


def test_bare_shared_chase_ends_where_the_path_ends_and_its_row_is_a_warm_shared_one():
    nxt, order = latency.ring(latency.SHARED_WORDS, 1)
    out = cuda.device_array(1, np.uint32)
    latency.chase_shared_bare[1, 1](cuda.to_device(nxt), np.uint32(order[5]), np.int32(37), out)
    assert int(out.copy_to_host()[0]) == int(nxt[latency.walk(nxt, order[5], 37)[-1]])
    (bare,) = [case for case in latency.cases(50 << 20) if case[0] == latency.BARE]
    assert bare[1:] == (latency.SHARED_WORDS, 1, True, "bare")


def test_levels_size_their_rings_from_the_l2_size_read_from_the_device():
    l2 = 50 << 20
    levels = {name.split(" ")[0] + (" 2G" if "2 GiB" in name else ""): (words * 4, warm)
              for name, words, stride, warm, shared in latency.cases(l2)}
    assert levels["L2"] == (l2 // 4, True)  # a quarter of L2, warmed
    assert levels["DRAM"][0] >= 4 * l2 and not levels["DRAM"][1]  # cold rings far above L2
    assert levels["DRAM 2G"] == (2 << 30, False)


def test_signed_and_unsigned_shared_kernels_differ_only_in_the_table_type():
    assert latency.shared_kernel(np.uint32) is latency.shared_kernel(np.uint32)
    assert latency.shared_kernel(np.uint32) is not latency.shared_kernel(np.int32)


def test_time_per_step_is_in_ns_and_cycles_use_the_sm_clock(monkeypatch):
    """A fake clock: a chase of 0 steps takes 10 µs, every step 50 ns more; at 2000 MHz that is 100 cycles."""
    steps = 12

    def fake_time_launch(launch, warmup, repeats):
        launch()  # the chase still runs: the row checks where it ended
        ms = 0.010 if warmup else 0.010 + steps * 50e-6  # only the zero-step timing has a warm-up
        return Timing(ms, ms, ms, repeats, "fake clock")

    monkeypatch.setattr(latency, "time_launch", fake_time_launch)
    level = ("L1 (test ring)", 16 * latency.LINE_WORDS, latency.LINE_WORDS, True, False)
    [row] = latency.run(steps, launches=2, signed_rows=False, facts=Facts(sms=132, sm_clock_khz=2_000_000, fp32_lanes_per_sm=128, l2_bytes=1 << 20,
                                                                    dram_datasheet_gbps=4800.0), levels=[level])
    assert row["ns_per_load"] == pytest.approx(50.0, rel=1e-9)
    assert row["ns_min"] == row["ns_max"] == pytest.approx(50.0, rel=1e-9)
    assert row["cycles"] == pytest.approx(100.0, rel=1e-9)


def test_committed_h200_rows_are_the_levels_run_measures_today():
    """The row names `measure` writes come from `cases`; the committed table must hold the same ones."""
    rows = list(csv.DictReader(open(data.path("h200/latency.csv"))))
    names = [case[0] for case in latency.cases(int(rows[0]["l2_bytes"]))]
    if latency.BARE not in {r["level"] for r in rows}:  # measured from the lead's next `measure --only latency`
        names.remove(latency.BARE)
    assert [r["level"] for r in rows if r["index"] == "uint32"] == names
    assert [r["level"] for r in rows if r["index"] == "int32"] == names[:2]
    for r in rows:
        assert float(r["cycles"]) == pytest.approx(float(r["ns_per_load"]) * float(r["sm_clock_mhz"]) / 1000)
