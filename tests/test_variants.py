import ast
import re

import numpy as np
import pytest
from conftest import operands
from numba import cuda, float32

import tiledlab
from tiledlab.core.registry import KERNELS, predicted
from tiledlab.counting import count_loads
from tiledlab.counting.variants import padded, swapped_xy, transposed, without_barrier, without_write_back


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

    with pytest.raises(ValueError, match="to swap"):
        swapped_xy(no_indices)


def _product(kernel, T, M=13, K=9, N=11, seed=0):
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((M, K), dtype=np.float32), rng.standard_normal((K, N), dtype=np.float32)
    return tiledlab.matmul(A, B, kernel, T), A @ B


@pytest.mark.parametrize("label", ["tiled sB transposed", "tiled sB transposed padded", "tiled swapped xy",
                                   "naive swapped xy"])
@pytest.mark.parametrize("T", [4, 8])
def test_effect_variants_compute_the_product(label, T):
    from tools.measure.effects import variants
    C, ref = _product(variants()[label], T, M=13, K=9, N=13 if "swapped" in label else 11)
    np.testing.assert_allclose(C, ref, rtol=1e-5, atol=1e-5)


def test_without_write_back_keeps_the_computation_and_skips_the_stores():
    kernel = without_write_back(tiledlab.tiled)
    C, _ = _product(kernel, 4)
    assert np.isnan(C).all()  # finite inputs: never stored
    text = kernel.source()
    assert "if acc != acc:" in text and "acc += sA[ty, k] * sB[k, tx]" in text


def test_transposed_tile_is_written_and_read_down_a_column_and_padding_widens_it():
    conflict = transposed(tiledlab.tiled, "sB")
    text = conflict.source()
    assert "sB[tx, ty] = B[k0 + ty, col]" in text and "sA[ty, k] * sB[tx, k]" in text
    assert text.count("cuda.syncthreads()") == 2  # barriers untouched
    pad = padded(conflict, "sB").source()
    assert "sB = cuda.shared.array((T, T_PAD), float32)" in pad and "sA = cuda.shared.array((T, T), float32)" in pad
    assert padded(conflict, "sB", 8).bind()["T_PAD"] == 9  # derived from T at every build


def test_rewrites_keep_line_numbers_for_the_simulator():
    tree = padded(transposed(tiledlab.tiled, "sB"), "sB").code.tree
    lines = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "cuda.shared.array"]
    assert len(set(lines)) == 2


def test_padded_kernel_is_counted_hazard_free(rng):
    A, B = operands(rng, 12, 9, 12)
    c = count_loads(padded(transposed(tiledlab.tiled, "sB"), "sB"), A, B, 4)
    np.testing.assert_allclose(c.C, A @ B, rtol=1e-5, atol=1e-5)
    assert not any(c.hazards.values()) and c.total == 12 * 9 * 3 * 2


def test_a_variant_that_would_change_nothing_is_an_error():
    with pytest.raises(ValueError, match=r"tiled has 2 cuda.syncthreads\(\) calls, not 3"):
        without_barrier(tiledlab.tiled, 2)
    for variant, name in ((transposed, "sB_transposed"), (padded, "sB_padded")):
        with pytest.raises(ValueError, match=f"naive: nothing to change for {name}"):
            variant(tiledlab.naive, "sB")  # naive has no shared tile sB
    assert without_barrier(tiledlab.tiled, 1).source().count("cuda.syncthreads()") == 1


def test_a_variant_of_a_variant_keeps_what_its_generated_base_says():
    hybrid = KERNELS["h_64x128x8_8x8_s3"]  # A through registers: a tile past K stored
    twice = swapped_xy(without_write_back(hybrid, BM=64))
    assert predicted(twice, 70, 40, 90) == predicted(hybrid, 70, 40, 90)
    with pytest.raises(ValueError, match="is a changed copy of code written for BM=64, [^;]*; it cannot take BM=128: change the kernel"):
        twice.bind(BM=128)


@cuda.jit
def naive_by_grid(A, B, C):
    col, row = cuda.grid(2)
    step = cuda.gridsize(1)  # the grid's width, in threads: its height once swapped
    if row < C.shape[0] and col < C.shape[1] and step > 0:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def test_swapped_xy_exchanges_the_values_of_cuda_grid(rng):
    A, B = operands(rng, 8, 8, 8)
    swapped = swapped_xy(naive_by_grid)
    assert "cuda.grid(2)[1], cuda.grid(2)[0]" in swapped.source()
    assert "cuda.gridsize(2)[1]" in swapped.source()
    np.testing.assert_allclose(tiledlab.matmul(A, B, swapped, 4), A @ B, rtol=1e-5, atol=1e-5)
    by_grid = count_loads(swapped, A, B, 4, trace=True).trace
    by_index = count_loads(swapped_xy(tiledlab.naive), A, B, 4, trace=True).trace
    columns = ("bx", "by", "tx", "ty", "operand", "i", "j")
    assert sorted(zip(*(by_grid[c] for c in columns))) == sorted(zip(*(by_index[c] for c in columns)))


@cuda.jit
def index_as_a_value(A, B, C):
    t = cuda.threadIdx
    C[t.y, t.x] = A[t.y, 0] * B[0, t.x]


@cuda.jit
def grid_of_a_name(A, B, C):
    col, row = cuda.grid(DIMENSIONS)
    C[row, col] = A[row, 0] * B[0, col]


@cuda.jit
def grid_imported(A, B, C):
    col, row = grid(2)  # noqa: F821 (from numba.cuda import grid, on a GPU)
    C[row, col] = A[row, 0] * B[0, col]


DIMENSIONS = 2


@pytest.mark.parametrize("kernel, code", [(index_as_a_value, "cuda.threadIdx"),
                                          (grid_of_a_name, "cuda.grid(DIMENSIONS)"), (grid_imported, "grid")])
def test_swapped_xy_refuses_an_index_it_cannot_exchange(kernel, code):
    with pytest.raises(ValueError, match=rf"line \d+: '{re.escape(code)}': swapped_xy exchanges x and y where"):
        swapped_xy(kernel)
