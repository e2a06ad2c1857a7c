"""Messages built from parts (an example, a kernel's name, a count) reach a Chinese-edition student whole in Chinese:
the float index's example, the two counts' disagreement, a variant with nothing to change, overlapping shared views.
English stays as it was, and the example names the index that divides, not any `/` on the line."""
import ast

import numpy as np
import pytest
from numba import cuda, float32  # globals, as in a notebook

import tiledlab
from tiledlab.core import contract, ptx
from tiledlab.counting.count import divided_index
from tiledlab.counting.exercises import check
from tiledlab.counting.recorded import SecondCount
from tiledlab.counting.variants import transposed


@pytest.fixture
def zh(monkeypatch):
    monkeypatch.setenv("TILEDLAB_LANG", "zh")


@pytest.fixture
def en(monkeypatch):
    monkeypatch.setenv("TILEDLAB_LANG", "en")


@cuda.jit
def halves(A, B, C):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k * 2 / 2] * B[k, col]
        C[row, col] = acc


@pytest.mark.parametrize("code, index", [
    ("acc += A[row, k * 2 / 2] * B[k, col]", "k * 2 / 2"),
    ("C[i, j] = A[idx[i / 2], j]", "i / 2"),  # the index of the inner array, not the outer one holding it
    ("if A[row, k / 2] > 0:", "k / 2"),
    ("x = A[row, int(k / 2)] + k / 2", None),  # int(...) is whole: the / outside any index is no index
    ("elif A[row, k / 2] > 0:", "k / 2"),  # no parse alone: the words around the /
])
def test_the_index_that_divides_is_named_as_written(code, index):
    assert divided_index(code) == index


def test_a_float_index_is_said_with_its_whole_index_in_english(en, capsys):
    assert check(halves, tile=4, limit_loads=False) is False
    assert "an index is not a whole number (k * 2 / 2 is a float): " in capsys.readouterr().out


def test_a_float_index_is_said_wholly_in_chinese(zh, capsys):
    assert check(halves, tile=4, limit_loads=False) is False
    out = capsys.readouterr().out
    assert "有一个下标不是整数（k * 2 / 2 是浮点数）：" in out and "float" not in out, out


def disagreeing(odd=()):
    """A SecondCount whose recording of A saw one load at A[1, 0] and the accesses `odd`, and counts the rewrite made
    of none."""
    second = SecondCount.__new__(SecondCount)
    reads = np.zeros((2, 2), np.int64)
    reads[1, 0] = 1
    second.recorders = {"A": type("Recording", (), {"reads": reads, "stores": np.zeros_like(reads), "odd": list(odd)})}
    return second, {"count_A": np.zeros_like(reads)}


def test_the_two_counts_disagreeing_is_said_in_english(en):
    second, got = disagreeing()
    with pytest.raises(RuntimeError) as said:
        second.compare(got, "tiled")
    assert str(said.value) == ("counting tiled: the two counts of loads of A disagree at A[1, 0]: the rewrite counted "
                               "0 loads, the recording array 1. tiledlab could not follow this kernel, so it gives no "
                               "count; please report it.")


def test_the_two_counts_disagreeing_is_said_in_chinese(zh):
    second, got = disagreeing()
    with pytest.raises(RuntimeError) as said:
        second.compare(got, "tiled")
    assert str(said.value) == ("计数 tiled：A 的两种加载计数在 A[1, 0] 处不一致：源码改写计到 0 次加载，记录数组计到 1 次。"
                               " tiledlab 无法跟踪这个核函数，所以不给出计数；请报告它。")
    second, got = disagreeing(odd=[(0.5, 1)])
    with pytest.raises(RuntimeError, match=r"计数 tiled：A 以 A\[\(0.5, 1\)\] 的形式被访问，源码改写不会对这种访问计数"):
        second.compare(got, "tiled")


def test_a_variant_with_nothing_to_change_is_said_in_chinese(zh):
    with pytest.raises(ValueError, match="^naive：sB_transposed 没有可改动的地方$"):
        transposed(tiledlab.naive, "sB")


def test_overlapping_shared_views_are_said_in_chinese(zh):
    tree = ast.parse("def views(A, B, C):\n    sA = shared_view(smem, 0, 4, 4)\n    sB = shared_view(smem, 8, 4, 4)\n")
    with pytest.raises(ValueError, match=r"^第 3 行：sB = shared_view\(smem, 8, 4, 4\)：与它前面的共享视图重叠$"):
        contract.dynamic_bytes(tree, {"shared_view": ptx.shared_view})
