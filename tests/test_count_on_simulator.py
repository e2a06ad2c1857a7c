"""count_on_simulator: on a GPU, a count run by the simulator in a child Python (notebook 7 counts its fully
unrolled rungs so: their counting builds compile for minutes on a GPU); the same count as count_loads."""
import numpy as np
import pytest

import tiledlab

from tiledlab.counting import count, count_loads, count_on_simulator

A, B = np.random.default_rng(0).random((33, 17), np.float32), np.random.default_rng(1).random((17, 45), np.float32)


def test_here_it_is_count_loads():
    a, b = count_on_simulator("tiled", A, B, tile=8), count_loads("tiled", A, B, tile=8)
    assert (a.A, a.B, int(a.shared_reads.sum())) == (b.A, b.B, int(b.shared_reads.sum()))


def test_from_a_gpu_process_a_child_counts_on_the_simulator(monkeypatch):
    monkeypatch.setattr(count, "SIMULATOR", False)  # as on a GPU: the count goes to a child Python
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM")
    monkeypatch.setenv("TILEDLAB_BACKEND", "gpu")  # the child is the simulator even where the GPU is asked for
    got, want = count_on_simulator("regtile_2d", A, B, BM=16, BN=16, BK=4, TM=4, TN=4), \
        count_loads("regtile_2d", A, B, BM=16, BN=16, BK=4, TM=4, TN=4)
    assert got.constants == want.constants
    # the same product; a GPU's may differ in the last bit (its compiler contracts a * b + c into one FMA)
    assert np.array_equal(got.C, want.C) if tiledlab.SIMULATOR else np.allclose(got.C, want.C, rtol=1e-6, atol=1e-6)
    assert all(np.array_equal(got.maps[k], want.maps[k]) for k in want.maps)
    assert np.array_equal(got.shared_reads, want.shared_reads) and got.hazards == want.hazards
    import os
    assert "NUMBA_ENABLE_CUDASIM" not in os.environ and os.environ["TILEDLAB_BACKEND"] == "gpu"  # as it was
    with pytest.raises(ValueError, match="A's columns"):  # the child's error, as count_loads says it
        count_on_simulator("tiled", A, B[1:], tile=8)
