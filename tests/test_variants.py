import numpy as np
from conftest import operands

import tiledlab
from tiledlab.counting import count_loads
from tiledlab.counting.variants import swapped_xy, without_barrier


def test_removing_a_barrier_is_flagged_as_a_hazard(rng):
    A, B = operands(rng, 16, 16, 16)
    first = count_loads(without_barrier(tiledlab.tiled, 0, 4), A, B, 4).hazards
    second = count_loads(without_barrier(tiledlab.tiled, 1, 4), A, B, 4).hazards
    assert first["read_after_write"] + first["write_after_read"] > 0
    assert second["read_after_write"] + second["write_after_read"] > 0


def test_variants_keep_their_loads(rng):
    A, B = operands(rng, 8, 8, 8)
    assert count_loads(without_barrier(tiledlab.tiled, 1, 4), A, B, 4).total == 2 * 8**3 // 4


def test_swapped_mapping_computes_the_same_product(rng):
    A, B = operands(rng, 12, 7, 12)
    np.testing.assert_allclose(tiledlab.matmul(A, B, swapped_xy(tiledlab.naive, 4), 4), A @ B,
                               rtol=1e-5, atol=1e-5)


def test_swapped_xy_really_swaps(rng):
    A, B = operands(rng, 8, 8, 8)
    t = count_loads(swapped_xy(tiledlab.naive), A, B, 4, trace=True).trace
    mine = t[(t.bx == 0) & (t.by == 0) & (t.tx == 1) & (t.ty == 0)]
    assert set(mine[mine.operand == 0].i) == {1}  # threadIdx.x = 1 now owns row 1 of C
    assert set(mine[mine.operand == 1].j) == {0}


def test_swapping_a_kernel_without_indices_is_an_error():
    from numba import cuda

    @cuda.jit
    def no_indices(A, B, C):
        C[0, 0] = A[0, 0] * B[0, 0]

    import pytest
    with pytest.raises(ValueError, match="to swap"):
        swapped_xy(no_indices)
