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


def test_the_load_budget_puzzles_refuse_naive_and_plain_tiling():
    from solutions.kernels import big_tile_loads, two_per_thread_loads, wide_tile, wide_tile_loads
    from tiledlab.core.kernels import tiled
    assert not check(naive, tile=4, max_loads=two_per_thread_loads)  # 1.1: A must be read once per column pair
    for budget in (wide_tile_loads, big_tile_loads):  # 3.3 and 4.3: the lesson's T×T tile loads too much
        assert not check(naive, tile=4, max_loads=budget)
        assert not check(tiled, tile=4, max_loads=budget)
    assert not check(wide_tile, tile=4, max_loads=big_tile_loads)  # 4.3 needs both dimensions doubled


def test_the_reads_per_fma_budget_refuses_every_column_tile():
    from solutions.kernels import HALF_THE_TILED_READS, column_tile, outer_product
    from tiledlab.core.kernels import tiled
    assert HALF_THE_TILED_READS == 1
    assert not check(naive, tile=4, max_shared_reads_per_fma=HALF_THE_TILED_READS)  # no shared reads, but 2N³ loads
    assert not check(tiled, tile=4, max_shared_reads_per_fma=HALF_THE_TILED_READS)  # 2 reads per FMA
    assert not check(column_tile, tile=4, max_shared_reads_per_fma=HALF_THE_TILED_READS)  # (TM + 1)/TM = 1.5
    tallest_column = outer_product.changed(outer_product.code.at("outer_product", {}).tree, constants={"TM": 4, "TN": 1})
    assert not check(tallest_column, tile=4, max_shared_reads_per_fma=HALF_THE_TILED_READS)  # 5/4 at T = 4
    assert check(outer_product, tile=4, max_shared_reads_per_fma=HALF_THE_TILED_READS)  # 2×2: exactly 1


def test_a_shared_read_limit_is_given_one_way():
    from solutions.kernels import column_tile_reads
    with pytest.raises(ValueError, match="not both"):
        check(naive, tile=4, max_shared_reads=column_tile_reads, max_shared_reads_per_fma=1)
