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
