"""The benchmark sweep and its plot: every kernel asked for is timed once per N and drawn as one line."""
import subprocess
import sys

import matplotlib
import pytest

import tiledlab
from tiledlab.experiments import bench
from tiledlab.notebook import plots

matplotlib.use("Agg")


def test_a_lesson_kernel_asked_for_by_name_is_timed_once_and_plotted():
    rows = bench.run([8], [4], warmup=0, repeats=1, progress=False, kernels=("naive", "regtile_2d"), cublas=False)
    assert [(r["kernel"], r["tile"]) for r in rows] == [("naive", 16), ("tiled", 4), ("regtile_2d", "")]
    ax = plots.bench_plot(rows, "t", metric="median_ms")
    assert [line.get_label() for line in ax.containers] == ["naive (16×16 blocks)", "tiled T=4", "regtile_2d"]


def test_committed_rows_plot_one_line_per_kernel_and_tile():
    from tiledlab import data
    from tiledlab.notebook import claims
    bench = claims.points(data.load("h200/bench.csv"))  # one row per point: the median of the runs
    ax = plots.bench_plot(bench, "t")
    labels = [c.get_label() for c in ax.containers]
    assert sorted(labels) == sorted({plots.label(r.kernel, r.tile) for r in bench.itertuples()})
    assert {"naive (16×16 blocks)", "naive (16×16 blocks), unsigned indices", "tiled T=8", "tiled T=32, unsigned indices",
            "cuBLAS (CuPy)"} <= set(labels)
    assert all(len(c[0].get_xdata()) == bench["N"].nunique() for c in ax.containers)  # one point per N


def test_cli_bench_with_kernels_naive_writes_its_plot(tmp_path, tiledlab_cli):
    run = tiledlab_cli("bench", "--n", "8", "--tile", "4", "--kernels", "naive",
                       "--repeats", "1", "--warmup", "0", "--quiet", "--no-cublas", "--out", str(tmp_path))
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "bench.png").stat().st_size > 1000


@pytest.mark.parametrize("progress", [True, False])
def test_progress_goes_to_stderr_only_when_asked(progress, capsys):
    bench.run([8], [4], warmup=0, repeats=1, progress=progress, cublas=False)
    out, err = capsys.readouterr()
    assert out == "" and (("2/2" in err) == progress)  # naive and tiled T=4


def test_the_fair_pair_is_swept_like_the_lesson_pair():
    assert bench.jobs([8], [4, 8], kernels=("tiled_unsigned", "regtile_2d"), fair=True) == [
        ("naive", 8, 16), ("tiled", 8, 4), ("tiled", 8, 8),
        ("naive_unsigned", 8, 16), ("tiled_unsigned", 8, 4), ("tiled_unsigned", 8, 8), ("regtile_2d", 8, "")]
    rows = bench.run([9], [4], warmup=0, repeats=1, progress=False, cublas=False, fair=True)
    assert [(r["kernel"], r["tile"]) for r in rows] == [("naive", 16), ("tiled", 4), ("naive_unsigned", 16),
                                                       ("tiled_unsigned", 4)]
    assert all(r["rel_err"] < 1e-6 for r in rows)


def test_every_kernel_and_cublas_is_timed_back_to_back_by_one_method(monkeypatch):
    """On a (faked) GPU clock where every launch takes 0.1 ms, each sample of every row, cuBLAS's
    included, brackets 20 launches (2 ms), and every row names that method."""
    from tiledlab.experiments import timing
    monkeypatch.setattr(timing, "SIMULATOR", False)
    monkeypatch.setattr(timing, "per_launch_ms", lambda launch, times=1: 0.1)
    monkeypatch.setattr(bench, "cupy_version", lambda: "fake")
    monkeypatch.setattr(bench, "sgemm", lambda A, B: bench.prepare("naive", A, B))  # a launch as cuBLAS's
    rows = bench.run([8], [4], warmup=0, repeats=3, progress=False, kernels=("regtile_2d",), fair=True)
    assert [r["kernel"] for r in rows] == ["naive", "tiled", "naive_unsigned", "tiled_unsigned", "regtile_2d",
                                           "cublas"]
    assert {r["launches_per_sample"] for r in rows} == {20}
    assert {r["timing"] for r in rows} == {"back-to-back, ≥2 ms per sample, median of 3"}
    assert set(bench.FIELDS) >= set(rows[0])


def test_cli_bench_fair_writes_the_pair_and_the_method(tmp_path, tiledlab_cli):
    import csv
    run = tiledlab_cli("bench", "--n", "8", "--tile", "4", "--fair",
                       "--repeats", "1", "--warmup", "0", "--quiet", "--no-cublas", "--out", str(tmp_path))
    assert run.returncode == 0, run.stderr
    rows = list(csv.DictReader(open(tmp_path / "bench.csv")))
    assert [r["kernel"] for r in rows] == ["naive", "tiled", "naive_unsigned", "tiled_unsigned"]
    method = {r["timing"] for r in rows}
    if tiledlab.SIMULATOR:
        assert method == {"one launch per sample, median of 1"}
    else:
        assert len(method) == 1 and method.pop().startswith("back-to-back")


def test_naive_runs_in_every_block_shape_asked_for_and_rows_carry_their_run():
    assert bench.jobs([8], [4, 8], fair=True, naive_tiles=(4, 8)) == [
        ("naive", 8, 4), ("naive", 8, 8), ("tiled", 8, 4), ("tiled", 8, 8),
        ("naive_unsigned", 8, 4), ("naive_unsigned", 8, 8), ("tiled_unsigned", 8, 4), ("tiled_unsigned", 8, 8)]
    rows = bench.run([8], [4], warmup=0, repeats=1, progress=False, cublas=False, naive_tiles=(4,), run=2)
    assert [(r["run"], r["kernel"], r["tile"]) for r in rows] == [(2, "naive", 4), (2, "tiled", 4)]


def test_the_h200_script_writes_one_bench_csv_of_separate_runs(tmp_path):
    """tools/bench_runs.py, the lead's H200 command, on the simulator at a tiny size: every run a process of
    its own, all in one bench.csv with its run numbers, which notebook.claims reads as runs of each point."""
    import pathlib

    from tiledlab import data
    from tiledlab.experiments.cublas import cupy_version
    from tiledlab.notebook import claims
    script = pathlib.Path(__file__).parents[1] / "tools" / "bench_runs.py"
    run = subprocess.run([sys.executable, str(script), "--n", "8", "--tile", "4", "--runs", "3", "--repeats", "1",
                          "--warmup", "0", "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    table = data.read_csv(tmp_path / "bench.csv")
    assert list(table.columns) == bench.FIELDS and sorted(table["run"].unique()) == [1, 2, 3]
    assert sorted(tmp_path.iterdir()) == [tmp_path / "bench.csv"]
    peer = {("cublas", 0)} if cupy_version() else set()  # timed beside them where CuPy is installed (a GPU)
    assert set(zip(table["kernel"], table["tile"])) == {(k, 4) for k in bench.LESSON + bench.FAIR} | peer
    assert claims.compare(table, dict(kernel="tiled", N=8, tile=4), dict(kernel="naive", N=8, tile=4)).runs == 3
