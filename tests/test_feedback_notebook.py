"""A student's wrong argument to the notebook helpers (the stepper, rand, table, data, heatmaps) gets one line
saying what to fix, before anything is launched; the right calls keep doing what they did."""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from numba import cuda, float32  # noqa: E402

import tiledlab as tl  # noqa: E402  first: it picks the simulator on a machine without a GPU
from tiledlab import data  # noqa: E402
from tiledlab.notebook import plots, setup, stepper, table  # noqa: E402


@cuda.jit
def my_naive(A, B, C):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@pytest.fixture
def nothing_launched(monkeypatch):
    def launched(*args):
        raise AssertionError("a refused choice was launched")
    monkeypatch.setattr(stepper, "_launches", launched)


@pytest.mark.parametrize("kernel", ["naive", tl.naive, my_naive])
def test_a_naive_kernel_is_told_the_stepper_replays_shared_tiles_not_a_removed_barrier(kernel, nothing_launched,
                                                                                        capsys):
    with pytest.raises(ValueError, match=r"declares no shared arrays: the stepper replays a tiled kernel \(sA and sB "
                                         r"loaded each phase\); pass a tiled kernel or leave out kernel=$") as refused:
        stepper.step_through(N=8, T=4, kernel=kernel)
    assert "syncthreads" not in str(refused.value) and capsys.readouterr().out == ""


def test_a_register_tiled_kernel_is_told_the_stepper_takes_no_constants(nothing_launched):
    with pytest.raises(ValueError, match=r"^regtile_2d has no tile width T \(BM=.*\): the stepper replays the lesson's "
                                         r"tiled kernel shape only.*takes no other constants; pass a tiled kernel"):
        stepper.step_through(N=8, T=4, kernel="regtile_2d")


@pytest.mark.parametrize("bad, message", [
    (dict(block=0), r"block=0: give block=\(by, bx\), two whole numbers, e\.g\. block=\(0, 1\)"),
    (dict(thread=1), r"thread=1: give thread=\(ty, tx\)"), (dict(block=(0,)), r"block=\(0,\): give"),
    (dict(block=(0, 0, 0)), r"block=\(0, 0, 0\): give"), (dict(block=("a", 0)), "block=\\('a', 0\\): give"),
    (dict(block=(None, 0)), "block=\\(None, 0\\): give"), (dict(block=None), "block=None: give"),
    (dict(thread=(1,)), r"thread=\(1,\): give"), (dict(thread="12"), "thread='12': give"),
    (dict(block=(0.7, 0)), r"block=\(0\.7, 0\): give"), (dict(thread=(True, 0)), r"thread=\(True, 0\): give"),
    (dict(seed="x"), "seed must be a whole number of at least 0, got 'x'"), (dict(seed=-1), "seed must be .*-1"),
    (dict(seed=1.5), "seed must be"), (dict(T=4.0), r"T must be one of \(2, 4, 8\), got 4\.0"),
    (dict(N=8.0), "N must be a whole number"), (dict(block=(2, 0)), r"block \(by, bx\) = \(2, 0\): with N=8"),
    (dict(thread=(0, 4)), r"thread \(ty, tx\) = \(0, 4\): a block has 4×4 threads")])
def test_a_choice_of_the_wrong_form_says_what_to_give(bad, message, nothing_launched):
    with pytest.raises(ValueError, match=message):
        stepper.step_through(**{"N": 8, "T": 4, **bad})
    with pytest.raises(ValueError, match=message):
        stepper.TileStepper(**{"N": 8, "T": 4, **bad})


def test_launches_refuses_a_bad_seed_and_a_float_T_as_it_refuses_a_float_N(nothing_launched):
    for bad, message in ((dict(seed="x"), "seed must be"), (dict(seed=-1), "seed must be"),
                         (dict(T=4.0), "T must be one of"), (dict(N=8.0), "N must be")):
        with pytest.raises(ValueError, match=message):
            stepper.launches(**{"N": 8, "T": 4, **bad})


def test_a_list_and_numpy_integers_still_choose_a_block_and_thread():
    s = stepper.TileStepper(8, 4, [1, 0], (np.int64(3), np.int64(3)), seed=np.int64(0))
    assert s.block == (1, 0) and s.thread == (3, 3) and s.frames()[0]["block"] == (1, 0)


@pytest.mark.parametrize("shape, shown", [((2.5, 3), "rand(2.5, 3)"), ((-1, 3), "rand(-1, 3)"), ((), "rand()"),
                                          (("8",), "rand('8')"), (((3, 3.5),), "rand(3, 3.5)"),
                                          ((True, 2), "rand(True, 2)")])
def test_rand_of_a_shape_that_is_not_whole_sizes_says_so(shape, shown):
    with pytest.raises(ValueError, match=r"^rand takes its shape as whole numbers of at least 0, e\.g\. rand\(8, 8\) "
                                         rf"or rand\(\(8, 8\)\), got {shown.replace('(', '[(]').replace(')', '[)]')}$"):
        setup()(*shape)


@pytest.mark.parametrize("seed", ["x", -1, 1.5])
def test_setup_refuses_a_seed_that_is_not_a_whole_number_before_it_prints(seed, capsys):
    with pytest.raises(ValueError, match=r"^seed must be a whole number of at least 0, got "):
        setup(seed=seed)
    assert capsys.readouterr().out == ""


def test_rand_takes_one_tuple_as_numpy_does_and_draws_the_same_numbers(capsys):
    assert np.array_equal(setup(seed=3)((3, 4)), setup(seed=3)(3, 4))
    assert setup()([2, 5]).shape == (2, 5) and setup()(3).shape == (3,) and setup()(0, 3).shape == (0, 3)


@pytest.mark.parametrize("rows, message", [
    ([[1, 2]], r"^table: row 1 has 2 values for 3 columns \(a, b, c\)$"),
    ([[1, 2, 3], [1, 2, 3, 4]], r"^table: row 2 has 4 values for 3 columns \(a, b, c\)$"),
    ([[1, 2, 3], 7], r"^table: row 2 has 1 values for 3 columns"),
    (None, r"^table takes a DataFrame, or a header and its rows: table\(header, rows\)$")])
def test_a_table_row_of_the_wrong_length_is_named_with_the_columns(rows, message, capsys):
    with pytest.raises(ValueError, match=message):
        table(["a", "b", "c"], rows)
    assert capsys.readouterr().out == ""  # nothing half printed


def test_a_list_of_dicts_without_rows_asks_for_a_dataframe_or_rows():
    with pytest.raises(ValueError, match="table takes a DataFrame"):
        table([{"a": 1}])


@pytest.mark.parametrize("options, missing, names", [(dict(columns=["b"]), "b", "a, n"),
                                                     (dict(columns={"a": "A", "x": "X"}), "x", "a, n"),
                                                     (dict(formats={"z": "{:.1f}"}), "z", "a, n"),
                                                     (dict(columns=["a"], formats={"n": "{:.1f}"}), "n", "a")])
def test_a_dataframe_column_that_is_not_there_is_named_with_those_that_are(options, missing, names):
    with pytest.raises(ValueError, match=rf"^table: this table has no column '{missing}'; its columns are {names}$"):
        table(pd.DataFrame({"a": [1], "n": [2.5]}), **options)


def test_a_one_column_table_takes_plain_values_as_rows(capsys):
    table(["N"], [4, 1024])
    assert capsys.readouterr().out.splitlines() == ["    N", "-----", "    4", "1,024"]


def test_a_data_file_outside_a_card_folder_names_the_folder_it_is_in():
    with pytest.raises(FileNotFoundError, match=r"^no committed data file 'bench\.csv'; did you mean 'h200/bench\.csv'"
                                                r"\?$"):
        data.load("bench.csv")
    with pytest.raises(FileNotFoundError, match=r"^no committed data file 'nope\.csv'; the files are in the folders "
                                                r".*h100/, h200/.*, e\.g\. 'h200/bench\.csv'$"):
        data.load("nope.csv")


@pytest.mark.parametrize("call", [lambda t: data.value(t, "median_ms", kernal="naive"),
                                  lambda t: data.row(t, kernal="naive", N=4096),
                                  lambda t: data.value(t, "median_mss", kernel="naive", N=4096, tile=16, run=0)])
def test_an_unknown_column_is_named_with_the_columns(call):
    bench = data.load("h200/bench.csv")
    with pytest.raises(KeyError, match=r"no column '(kernal|median_mss)' in this table; its columns are run, "
                                          r"kernel, N, tile, median_ms"):
        call(bench)


@pytest.mark.parametrize("maps, titles, counts", [(0, 0, "len\\(maps\\) = 0 and len\\(titles\\) = 0"),
                                                  (1, 0, "len\\(maps\\) = 1 and len\\(titles\\) = 0"),
                                                  (2, 1, "len\\(maps\\) = 2 and len\\(titles\\) = 1")])
def test_heatmaps_need_a_map_and_a_title_for_each(maps, titles, counts):
    with pytest.raises(ValueError, match=rf"^heatmaps takes one or more maps and a title for each, got {counts}$"):
        plots.heatmaps([np.ones((2, 2))] * maps, ["t"] * titles)


def test_the_refusals_read_in_chinese_in_the_chinese_edition(monkeypatch, nothing_launched):
    monkeypatch.setenv("TILEDLAB_LANG", "zh")
    for call, words in [(lambda: stepper.step_through(N=8, T=4, kernel="naive"), "没有声明任何共享内存数组"),
                        (lambda: stepper.step_through(N=8, T=4, block=0), "两个整数"),
                        (lambda: setup()(2.5, 3), "收到的是 rand"), (lambda: table(["a"], [[1, 2]]), "第 1 行"),
                        (lambda: data.load("bench.csv"), "'h200/bench.csv'"),
                        (lambda: plots.heatmaps([], []), "每张图配一个标题")]:
        with pytest.raises((ValueError, OSError), match=words) as refused:
            call()
        assert not str(refused.value).isascii()
