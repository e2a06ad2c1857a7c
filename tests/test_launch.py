import numpy as np
import pytest

import tiledlab
from tiledlab.core.launch import resolve

A = np.ones((4, 3), np.float32)
B = np.ones((3, 5), np.float32)


@pytest.mark.parametrize("a,b,message", [
    (np.ones((2, 3, 4), np.float32), B, "2-D"),
    (np.ones(3, np.float32), B, "2-D"),
    (A, np.ones((4, 5), np.float32), r"A is 4×3 and B is 4×5"),
    (A.astype(np.float64), B, r"astype\(np.float32\)"),
    (A, B.astype(np.int32), "dtype int32"),
    (np.ones((0, 3), np.float32), B, "empty"),
    (A, np.ones((3, 0), np.float32), "empty"),
    ([[1.0]], B, "numpy array"),
])
def test_bad_operands_raise_before_launch(a, b, message):
    with pytest.raises(ValueError, match=message):
        tiledlab.matmul(a, b)


@pytest.mark.parametrize("tile,message", [(0, "1 to 32"), (33, "1089 threads"), (64, "4096 threads"),
                                          (2.5, "whole number"), (True, "whole number"), ("8", "whole number")])
def test_bad_tiles_raise(tile, message):
    with pytest.raises(ValueError, match=message):
        tiledlab.matmul(A, B, tile=tile)


def test_unknown_kernel_name():
    with pytest.raises(ValueError, match="kernel must be one of"):
        tiledlab.matmul(A, B, kernel="fast")


def test_grid_covers_output_with_edges():
    (gx, gy), (tx, ty) = resolve("tiled").grid(33, 65, {"T": 8})
    assert (tx, ty) == (8, 8) and gx * 8 >= 65 and gy * 8 >= 33 and (gx - 1) * 8 < 65 and (gy - 1) * 8 < 33


def test_too_many_block_rows():
    with pytest.raises(ValueError, match="gridDim.y"):
        resolve("tiled").grid(70000, 4, {"T": 1})


def test_every_entry_point_refuses_an_unknown_kernel_name():
    from tiledlab.counting import count_loads
    with pytest.raises(ValueError, match="kernel must be one of"):
        count_loads("fast", A, B, 4)


def test_a_plain_function_is_refused_not_run():
    def not_a_kernel(A, B, C):
        C[0, 0] = 1.0

    with pytest.raises(ValueError, match=r"decorate a function of \(A, B, C\) with @cuda.jit"):
        tiledlab.matmul(A, B, not_a_kernel)


def test_tile_32_is_the_largest_and_launches_1024_threads():
    from tiledlab.core.launch import validate_tile
    assert validate_tile(32) == 32 and validate_tile(1) == 1
    assert resolve("tiled").sizes({"T": 32}) == ((32, 32), (32, 32))  # 1,024 threads: CUDA's limit, allowed
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(tiledlab.matmul(a, a.T, "tiled", 32), a @ a.T)


@pytest.mark.parametrize("threads,allowed", [((1024, 1), True), ((32, 32), True), ((1025, 1), False),
                                             ((33, 32), False)])
def test_a_block_of_1024_threads_is_allowed_and_one_more_is_not(threads, allowed):
    from tiledlab.core import launch_geometry
    from numba import cuda

    @launch_geometry(threads=lambda T: threads, T=4)
    @cuda.jit
    def wide(A, B, C):
        C[0, 0] = A[0, 0]

    if allowed:
        assert wide.sizes(wide.bind())[1] == threads
    else:
        with pytest.raises(ValueError, match="CUDA allows at most 1024"):
            wide.bind()


def test_the_grid_may_have_65535_block_rows_and_no_more():
    assert resolve("tiled").grid(65535, 1, {"T": 1})[0] == (1, 65535)
    with pytest.raises(ValueError, match="needs 65,536 block rows; gridDim.y allows 65,535: use tile=2 or larger"):
        resolve("tiled").grid(65536, 1, {"T": 1})


def test_a_matrix_too_tall_for_any_tile_is_told_to_go_in_parts():
    with pytest.raises(ValueError, match=r"M=3,000,000 .* gridDim.y allows 65,535: multiply A in parts of at most "
                                         r"1,048,560 rows each") as refused:
        tiledlab.matmul(np.ones((3_000_000, 1), np.float32), np.ones((1, 1), np.float32))
    assert "larger tile" not in str(refused.value) and "tile=" not in str(refused.value)
    with pytest.raises(ValueError, match="use tile=8 or larger"):
        resolve("tiled").grid(500_000, 1, {"T": 4})
