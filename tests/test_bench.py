"""The benchmark sweep and its plot: every kernel asked for is timed once per N and drawn as one line."""
import subprocess
import sys

import matplotlib
import pytest

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
    ax = plots.bench_plot(data.load("h200/bench.csv"), "t")
    assert [c.get_label() for c in ax.containers] == ["naive (16×16 blocks)", "tiled T=8", "tiled T=16",
                                                       "tiled T=32", "cuBLAS (CuPy)"]


def test_cli_bench_with_kernels_naive_writes_its_plot(tmp_path):
    run = subprocess.run([sys.executable, "-m", "tiledlab", "bench", "--n", "8", "--tile", "4", "--kernels", "naive",
                          "--repeats", "1", "--warmup", "0", "--quiet", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "bench.png").stat().st_size > 1000


@pytest.mark.parametrize("progress", [True, False])
def test_progress_goes_to_stderr_only_when_asked(progress, capsys):
    bench.run([8], [4], warmup=0, repeats=1, progress=progress, cublas=False)
    out, err = capsys.readouterr()
    assert out == "" and (("2/2" in err) == progress)  # naive and tiled T=4
