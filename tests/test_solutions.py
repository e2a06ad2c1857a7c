import pytest

from solutions.kernels import EXERCISES, blocked_loop, column_tile_reads, tile_a_only, tile_a_only_loads
from tiledlab.counting.exercises import check
from tiledlab.core.kernels import naive


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_every_solution_passes_its_check(name):
    kernel, kwargs = EXERCISES[name]
    assert check(kernel, tile=4, **kwargs)


def test_the_checks_can_fail():
    assert not check(naive, tile=4)  # right answer, no tiling
    assert not check(naive, tile=4, max_loads=tile_a_only_loads)
    assert check(tile_a_only, tile=4, max_loads=tile_a_only_loads)
    assert not check(tile_a_only, tile=4)  # tiling only A is not enough for the full exercise
    assert not check(blocked_loop, tile=4)  # reordering the k loop does not cut a single load


def test_the_register_tiling_check_refuses_two_shared_reads_per_fma():
    from tiledlab.core.kernels import tiled
    assert not check(tiled, tile=4, max_shared_reads=column_tile_reads)  # right, tiled, but 2 reads per FMA
