"""Register-tiled kernels (notebook 7): right on odd shapes, counted exactly as the formulas say, and
refused with a clear message where their constants cannot work. Small tiles: the simulator runs one
Python thread per CUDA thread."""
import inspect

import numpy as np
import pytest
from conftest import operands
from kernel_cases import small

import tiledlab
from tiledlab.core import formulas, registry
from tiledlab.core.launch import prepare
from tiledlab.core.generated import generated
from tiledlab.core.launch import specialize
from tiledlab.core.unrolled import generate_source
from tiledlab.counting import count_loads
from tiledlab.counting.rewrite import instrumented_source
from tiledlab.counting.variants import without_barrier

HAND = {"regtile_1d": dict(BM=16, BN=16, BK=4, TM=4), "regtile_2d": dict(BM=16, BN=32, BK=8, TM=4, TN=4),
        "regtile_vec": dict(BM=64, BN=32, BK=4, TM=8, TN=4)}
GENERATED = dict(BM=32, BN=64, BK=8, TM=4, TN=8)  # 64 threads
WARP = dict(BM=32, BN=128, BK=8, TM=4, TN=8)  # 128 threads: 2×2 warps of 4×8 thread tiles


RUNGS = registry.family("ladder")
SHAPES = [(5, 23, 7), (33, 17, 65), (1, 1, 1), (70, 45, 37)]


@pytest.mark.parametrize("name", RUNGS)
def test_matches_numpy_on_odd_shapes(rng, name):
    for M, K, N in SHAPES:
        A, B = operands(rng, M, K, N)
        C = tiledlab.matmul(A, B, name, **small(registry.KERNELS[name]))
        np.testing.assert_allclose(C, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-5, atol=1e-5,
                                   err_msg=f"{name} {M}×{K}·{K}×{N}")


COUNTED = [  # (kernel, constants) beyond tests/test_every_kernel.py's one set per kernel: other tile shapes
    ("tiled", dict(T=4)), ("regtile_2d", dict(BM=32, BN=16, BK=4, TM=8, TN=4)), ("gen_warp", WARP),
]


@pytest.mark.parametrize("name,constants", COUNTED, ids=[f"{n}-{'-'.join(map(str, c.values()))}" for n, c in COUNTED])
@pytest.mark.parametrize("M,K,N", [(33, 17, 65), (5, 23, 7)])
def test_measured_counts_equal_the_formulas(rng, name, constants, M, K, N):
    A, B = operands(rng, M, K, N)
    c = count_loads(name, A, B, **constants)
    want = registry.predicted(name, M, K, N, **constants)
    got = {"A": c.A, "B": c.B, "reads": int(c.shared_reads.sum()), "stores": int(c.shared_stores.sum())}
    assert got == {k: want[k] for k in got}
    assert c.hazards == {"read_after_write": 0, "write_after_read": 0, "write_after_write": 0, "copy_in_flight": 0,
                         "divergent_barrier": 0, "unstored_read": 0}
    np.testing.assert_allclose(c.C, A @ B, rtol=1e-5, atol=1e-5)
    assert c.constants.items() >= constants.items() and c.tile == constants.get("T")


def test_formulas_reduce_to_the_closed_forms():
    n = 256
    for BM, BN in ((64, 64), (128, 128), (128, 256)):
        loads = formulas.block_tile_loads(n, n, n, BM, BN)
        assert loads == formulas.block_tile_loads(n, n, n, BM, BN, clamped=True)  # no edge: no clamping
        assert loads["A"] + loads["B"] == n**3 * (1 / BM + 1 / BN)
    assert formulas.tiled_loads(n, n, n, 16) == formulas.block_tile_loads(n, n, n, 16, 16)
    traffic = formulas.shared_traffic(n, n, n, 128, 128, 8, 8, 8)
    assert traffic["fmas"] == n**3 and traffic["reads"] / traffic["fmas"] == formulas.shared_reads_per_fma(8, 8) == 0.25
    assert formulas.shared_reads_per_fma() == 2 and formulas.shared_reads_per_fma(8) == 9 / 8
    assert formulas.shared_reads_per_fma(8, 16) == 3 / 16


def test_shared_reads_per_fma_of_an_8x4_thread_tile_is_measured(rng):
    n = 32  # exercise 7.2: (8 + 4)/(8·4) = 0.375, measured
    A, B = operands(rng, n, n, n)
    c = count_loads("regtile_2d", A, B, BM=32, BN=16, BK=4, TM=8, TN=4)
    assert c.shared_reads.sum() / n**3 == 0.375


def test_clamped_edges_read_the_last_row_again(rng):
    A, B = operands(rng, 5, 8, 7)
    c = count_loads("gen_prefetch", A, B, **GENERATED)
    assert c.maps["A"][4].sum() == 8 * (GENERATED["BM"] - 4)  # row M-1 stands in for the 27 rows past M
    assert c.A == formulas.block_tile_loads(5, 8, 7, 32, 64, clamped=True)["A"] > 5 * 8


@pytest.mark.parametrize("name,constants,message", [
    ("regtile_2d", dict(BQ=4), "regtile_2d has no constant 'BQ': its constants are BM, BN, BK, TM, TN"),
    ("regtile_2d", dict(BM=256, BN=256, TM=2, TN=2), r"16384 threads per block .*at most 1024"),
    ("regtile_2d", dict(BM=30, TM=4), r"a thread computes TM of the block's BM rows; BM=30, TM=4 breaks it"),
    ("regtile_2d", dict(BM=16, BN=128, TM=4, TN=8), r"load B's BK×BN tile in whole passes"),
    ("regtile_2d", dict(BK=64), r"65,536 bytes of shared memory .*at most 49,152 \(48 KiB\)"),
    ("regtile_2d", dict(BM=2.5), "BM must be a whole number"),
    ("regtile_2d", dict(TM=0), "TM must be a whole number of at least 1, got 0"),  # was "divides by zero"
    ("regtile_1d", dict(TN=2), "a thread computes one column of C; TN=2 breaks it"),
    ("regtile_vec", dict(TM=2, BM=32), r"groups of 4 .*TM=2, TN=8 breaks it"),
    ("gen_prefetch", dict(BM=64, BN=80, TM=4, TN=4), r"so BN is a multiple of 32; BN=80 breaks it"),
    ("gen_prefetch", dict(BM=64, BN=32, BK=2, TM=4, TN=4),
     r"so BK is a multiple of the block's warps.*; .*BK=2.* breaks it"),
])
def test_bad_constants_are_refused_before_launch(name, constants, message):
    A = np.ones((8, 8), np.float32)
    with pytest.raises(ValueError, match=message):
        tiledlab.matmul(A, A, name, **constants)


def test_a_tile_width_is_refused_for_kernels_without_one():
    A = np.ones((4, 4), np.float32)
    with pytest.raises(ValueError, match="regtile_2d has no tile width T: give its constants by name"):
        tiledlab.matmul(A, A, "regtile_2d", 8)
    with pytest.raises(ValueError, match="tiled has no constant 'BM': its constants are T"):
        tiledlab.matmul(A, A, "tiled", BM=8)


def test_launch_bounds_follow_the_registry_and_are_checked():
    A = np.ones((8, 8), np.float32)
    assert prepare("gen_warp", A, A, **WARP).launch_bounds == (128, 2)  # threads of this build, 2 blocks per SM
    assert prepare("gen_prefetch", A, A, **GENERATED).launch_bounds is None
    with pytest.raises(ValueError, match=r"128 threads per block, more than the launch bounds \(64, 2\)"):
        prepare("gen_warp", A, A, launch_bounds=(64, 2), **WARP)


def test_one_launch_path_sizes_the_grid_from_the_geometry():
    A, B = np.ones((70, 5), np.float32), np.ones((5, 130), np.float32)
    launch = prepare("regtile_2d", A, B, **HAND["regtile_2d"])
    assert launch.block == (16, 32) and launch.threadsperblock == (8, 4) and launch.blockspergrid == (5, 5)
    assert launch.tile is None and launch.constants == HAND["regtile_2d"]
    lesson = prepare("tiled", A, B, 8)
    assert lesson.tile == 8 and lesson.constants == {"T": 8} and lesson.threadsperblock == (8, 8)
    assert prepare("tiled", A, B).tile == 16  # the lesson's default


def test_generated_source_is_inspectable_and_counted():
    family = registry.KERNELS["gen_prefetch"]
    kernel = specialize(family, **GENERATED)
    text = generate_source(**GENERATED, name="gen_prefetch")
    assert inspect.getsource(kernel.py_func) == text and family.source(GENERATED).endswith(text)
    assert kernel is specialize(family, **GENERATED)  # built once
    counted = instrumented_source(family, **GENERATED)
    assert "_tl_sload(sA" in counted and "_tl_sstore(sB" in counted and "_tl_gload(A, 0" in counted
    assert counted.count("cuda.syncthreads()") == text.count("cuda.syncthreads()") == 2


def test_generated_kernels_build_again_for_other_constants():
    family = generated("family", BM=64, BN=64, TM=4, TN=4, buffers=2)
    other = specialize(family, BM=32, BN=32)
    assert other is not specialize(family) and "Block tile 32x32" in inspect.getsource(other.py_func)
    assert family.bind(BM=32, BN=32) == dict(BM=32, BN=32, BK=8, TM=4, TN=4)


def test_a_changed_copy_of_generated_source_keeps_its_constants(rng):
    broken = without_barrier(registry.KERNELS["gen_prefetch"], 0, **GENERATED)
    A, B = operands(rng, 4, 4, 4)
    assert broken.constants == GENERATED
    with pytest.raises(ValueError, match="without_barrier_0 is a changed copy of code written for BM=32, [^;]*; it cannot take BM=64"):
        tiledlab.matmul(A, B, broken, BM=64)


def test_the_ladder_is_the_lessons_two_then_its_rungs_in_order():
    assert registry.LADDER == registry.family("lesson") + registry.family("ladder")
    assert registry.LADDER[:2] == ["naive", "tiled"] and registry.LADDER_TOP in registry.family("search")
    assert "best" not in registry.KERNELS  # "best" is a choice (core.best), not a kernel of its own
