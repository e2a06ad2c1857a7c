"""Races: the broken kernels run many times, and a note that says why live and committed counts differ."""
import re

import pandas as pd

import tiledlab  # noqa: F401  first: it picks the simulator on a machine without a GPU
from tiledlab.experiments import races


def rows(N, T, runs, wrong):
    return pd.DataFrame([{"barrier_removed": b, "N": N, "tile": T, "runs": runs, "wrong_runs": w}
                         for b, w in zip(("first", "second"), wrong)])


def test_run_says_size_and_runs_for_each_barrier():
    got = pd.DataFrame(races.run(n=8, T=4, runs=2))
    assert got["barrier_removed"].tolist() == ["first", "second"]
    assert (got["N"] == 8).all() and (got["tile"] == 4).all() and (got["runs"] == 2).all()
    assert got["wrong_runs"].between(0, 2).all()
    assert ((got["wrong_runs"] > 0) == (got["mean_wrong_fraction"] > 0)).all()  # a run counted wrong has wrong C


def test_the_note_gives_both_counts_with_their_runs_and_sizes():
    note = races.frequency_note(rows(32, 8, 5, (5, 5)), rows(1024, 32, 200, (200, 78)), "the simulator")
    assert "5 of 5" in note and "78 of 200" in note and "200 of 200" in note
    assert "32×32" in note and "T = 8" in note and "1,024×1,024" in note and "T = 32" in note
    assert "the simulator" in note and "H200" in note
    assert "timing" in note and "warps" in note


def test_the_note_says_whether_the_shares_differ():
    differ = races.frequency_note(rows(32, 8, 5, (5, 5)), rows(1024, 32, 200, (200, 78)), "the simulator")
    agree = races.frequency_note(rows(1024, 32, 5, (5, 2)), rows(1024, 32, 200, (200, 78)), "this GPU")
    assert re.search(r"second barrier: 100% of live runs, 39% of committed; at the committed rate 2 of 5", differ)
    assert "first barrier: 100%" not in differ  # 5 of 5 and 200 of 200 agree
    assert "shares agree" in agree and "shares differ" not in agree
