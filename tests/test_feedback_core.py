"""The core's refusals a student meets (hostile.md #2, #4, #13, #16, #17): one line naming the real cause and the
fix, in English or in Chinese, before anything is launched. All on the simulator, most without a launch."""
import numpy as np
import pytest
from numba import cuda, float32

from tiledlab.core import formulas
from tiledlab.core.kernel import launch_geometry
from tiledlab.core.kernels import tiled
from tiledlab.core.launch import matmul, resolve
from tiledlab.core.rules import Rule, whole
from tiledlab.counting import count_loads
from tiledlab.counting.exercises import check

A = np.ones((8, 8), np.float32)


@cuda.jit
def two_args(A, B):
    A[0, 0] = B[0, 0]


@launch_geometry(T=4, TM=2, threads=lambda T, TM: (T, T // TM), requires=[Rule(lambda T, TM: T % TM == 0,
                                                                                "TM rows per thread")])
@cuda.jit
def column_of_TM(A, B, C):
    C[0, 0] = float32(0.0)


@pytest.mark.parametrize("call, message", [
    (lambda: count_loads(A, A, "tiled", tile=4), "count_loads takes the kernel first: count_loads('tiled', A, B, tile=4)"),
    (lambda: count_loads(A, A, tiled), "count_loads takes the kernel first"),
    (lambda: matmul("tiled", A, A), "matmul takes A and B first: matmul(A, B, kernel, tile=4)"),
    (lambda: matmul(tiled, A, A, tile=4), "matmul takes A and B first"),
])
def test_arguments_in_the_other_functions_order_say_which_order_this_one_takes(call, message):
    with pytest.raises(ValueError) as refused:
        call()
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize("kernel, constants, message", [
    ("regtile_2d", dict(BM=16, BN=16, BK=4, TM=4, TN=32),
     "regtile_2d: a thread computes TN of the block's BN columns; BN=16, TN=32 breaks it"),
    ("regtile_2d", dict(BM=5), "regtile_2d: a thread computes TM of the block's BM rows; BM=5, TM=8 breaks it"),
    ("regtile_2d", dict(BM=0), "BM must be a whole number of at least 1, got 0"),
    ("regtile_2d", dict(TM=0), "TM must be a whole number of at least 1, got 0"),
    ("regtile_2d", dict(BK=0), "BK must be a whole number of at least 1, got 0"),
    ("tiled", dict(T=0), "T must be a whole number of at least 1, got 0"),
    (column_of_TM, dict(T=1), "column_of_TM: TM rows per thread; T=1, TM=2 breaks it"),
    ("regtile_2d", dict(BM=64.0), "BM must be a whole number, got 64.0 (a float: write 64)"),
    ("regtile_2d", dict(BM=64.5), "BM must be a whole number, got 64.5"),
])
def test_the_rule_broken_is_named_not_a_derived_constant_dividing_by_zero(kernel, constants, message):
    with pytest.raises(ValueError) as refused:
        resolve(kernel).bind(constants)
    assert str(refused.value) == message


def test_a_constant_of_0_that_sizes_nothing_is_still_taken():
    assert resolve("regtile_vec").bind(PAD=0)["BM_PAD"] == 128


@pytest.mark.parametrize("call, message", [
    (lambda: matmul(A, A, tile=4.0), "tile must be a whole number from 1 to 32, got 4.0 (a float: write 4)"),
    (lambda: matmul(A, A, tile=np.float32(8)), "got np.float32(8.0) (a float: write 8)"),
    (lambda: matmul(A, A, tile=4.5), "tile must be a whole number from 1 to 32, got 4.5"),
    (lambda: whole("N", 8.0), "N must be a whole number of at least 1, got 8.0 (a float: write 8)"),
    (lambda: whole("N", "8"), "N must be a whole number of at least 1, got '8'"),
])
def test_a_float_that_is_whole_is_refused_saying_which_int_to_write(call, message):
    with pytest.raises(ValueError) as refused:
        call()
    assert str(refused.value).endswith(message)


@pytest.mark.parametrize("name, close", [("Tiled", "'tiled'"), ("naiv", "'naive'"), ("regtile2d", "'regtile_2d'"),
                                         ("Best", "'best'")])
def test_an_unknown_kernel_name_suggests_the_close_one(name, close):
    with pytest.raises(ValueError) as refused:
        matmul(A, A, name)
    assert str(refused.value).startswith(f"kernel must be one of tiledlab's kernels, 'best' or a @cuda.jit "
                                         f"function, got {name!r}: did you mean {close}")
    assert "gen_prefetch" not in str(refused.value)


@pytest.mark.parametrize("call, message", [
    (lambda: formulas.tiled_loads(16, 16, 16, 0), "T must be at least 1, got 0"),
    (lambda: formulas.block_tile_loads(16, 16, 16, 16, 0), "BN must be at least 1, got 0"),
    (lambda: formulas.shared_traffic(16, 16, 16, 16, 16, 0), "BK must be at least 1, got 0"),
    (lambda: formulas.shared_reads_per_fma(0, 1), "TM must be at least 1, got 0"),
    (lambda: formulas.threads_per_block(16, 16, 4, 0), "TN must be at least 1, got 0"),
])
def test_a_formula_with_a_size_of_0_is_a_one_line_value_error(call, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        call()


ZH = [  # (a refusal, a phrase of its Chinese)
    (lambda: matmul(A.astype(np.float64), A), "这些核函数用 float32 计算"),
    (lambda: matmul(A, np.ones((3, 3), np.float32)), "A 的列数（8）必须等于 B 的行数（3）"),
    (lambda: matmul([[1.0]], A), "必须是 numpy 数组"),
    (lambda: matmul(A, A, "Tiled"), "你是不是想写 'tiled'"),
    (lambda: count_loads(A, A, "tiled"), "count_loads 的第一个参数是核函数"),
    (lambda: matmul(A, A, "regtile_2d", BM=5), "regtile_2d：每个线程负责线程块 BM 行中的 TM 行；BM=5, TM=8 不满足这一点"),
    (lambda: matmul(A, A, "regtile_2d", BQ=1), "没有常量 'BQ'"),
    (lambda: matmul(A, A, "regtile_2d", 8), "没有分块宽度 T"),
    (lambda: matmul(A, A, "regtile_2d", BM=256, BN=256, TM=2, TN=2), "CUDA 最多只允许 1024 个"),
    (lambda: matmul(A, A, tile=4.0), "（这是浮点数：请写成 4）"),
    (lambda: formulas.tiled_loads(16, 16, 16, 0), "T 必须至少为 1"),
]


@pytest.mark.parametrize("call, phrase", ZH)
def test_the_core_refusals_read_in_chinese(call, phrase, monkeypatch):
    monkeypatch.setenv("TILEDLAB_LANG", "zh")
    with pytest.raises(ValueError) as refused:
        call()
    assert phrase in str(refused.value)


def test_check_of_a_kernel_of_two_arguments_reads_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("TILEDLAB_LANG", "zh")
    assert check(two_args, tile=4) is False
    assert "核函数 two_args(A, B) 必须恰好接受三个普通参数 (A, B, C)" in capsys.readouterr().out
