"""The counting lab's example of a hazard or a race names the lowest block and thread, whatever order the simulator
started them in (its blocks and threads shuffled here)."""
import random

import numpy as np
import numba.cuda.simulator.kernel as simulated
import pytest
from conftest import operands, simulator_only
from numba import cuda, float32  # globals, as in a notebook

from tiledlab.counting import count_loads
from tiledlab.counting.exercises import _check_limit, check
from tiledlab.counting.hazards import hazard_message

pytestmark = simulator_only


class Shuffled:
    """numpy as the simulator's kernel module sees it, with np.ndindex (its order of blocks and of the threads it
    starts in each) shuffled."""

    def __init__(self, seed):
        self.order = random.Random(seed)

    def __getattr__(self, name):
        return getattr(np, name)

    def ndindex(self, *shape):
        points = list(np.ndindex(*shape))
        self.order.shuffle(points)
        return points


@cuda.jit
def all_store_c00_from_unstored(A, B, C):  # every thread stores C[0, 0], read from a shared element nobody stored
    s = cuda.shared.array((4, 4), float32)
    C[0, 0] = s[cuda.threadIdx.y, cuda.threadIdx.x]


def counted(seed, monkeypatch):
    A, B = operands(np.random.default_rng(0), 8, 8, 8)
    with monkeypatch.context() as m:
        m.setattr(simulated, "np", Shuffled(seed))
        return count_loads(all_store_c00_from_unstored, A, B, 4)


def test_the_example_is_the_lowest_block_and_thread_in_any_order(monkeypatch):
    runs = [counted(seed, monkeypatch) for seed in (1, 2, 3)]
    for c in runs:
        assert c.hazards["unstored_read"] == 64  # every thread of the 2×2 blocks of 4×4, in any order
        assert c.C_races == [(0, 0, (0, 0, 0, 0), (1, 1, 3, 3))]  # the lowest and the highest writer
        h = c.hazards.examples["unstored_read"]
        assert (h.block, h.thread, h.element) == ((0, 0), (0, 0), (0, 0))
    assert len({hazard_message(c.hazards) for c in runs}) == 1


def test_check_says_the_same_hazard_in_any_order(monkeypatch, capsys):
    said = set()
    for seed in (1, 2):
        with monkeypatch.context() as m:
            m.setattr(simulated, "np", Shuffled(seed))
            assert check(all_store_c00_from_unstored, tile=4, shapes=[(8, 8, 8)]) is False
        said.add(capsys.readouterr().out)
    assert len(said) == 1 and "in block (by=0, bx=0), thread (ty=0, tx=0) reads s[0, 0]" in said.pop()


@pytest.mark.parametrize("limit, says", [(5000, "got 5000"), (lambda M, K, N, T: 1 // 0, "raised ZeroDivisionError"),
                                         (lambda M, K, N, T: -1 if M > 4 else 1, "max_loads(8, 8, 8, 4) returned -1")])
def test_a_wrong_limit_is_refused_at_the_first_shape_it_fails(limit, says):
    with pytest.raises(ValueError, match=r"^max_loads takes a function of \(M, K, N, T\)") as refused:
        _check_limit("max_loads", limit, [(4, 4, 4), (8, 8, 8), (9, 9, 9)], 4)
    assert says in str(refused.value)
    assert refused.value.__suppress_context__ or refused.value.__context__ is None  # one error, not two
