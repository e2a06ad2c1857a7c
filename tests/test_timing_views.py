"""`timings(view)`: each notebook's timing figure shows its own step, beside a live panel, and says
what its committed panel shows in lines computed from the rows."""
import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import tiledlab  # noqa: E402,F401
from tiledlab import data  # noqa: E402
from tiledlab.notebook import claims, timings  # noqa: E402

BENCH = claims.points(data.load("h200/bench.csv"))  # the median of its runs


@pytest.fixture
def figure(monkeypatch):
    """The figure timings() shows, kept open for the test."""
    shown = []
    monkeypatch.setattr(plt, "show", lambda: shown.append(plt.gcf()))
    yield shown
    plt.close("all")


def titles(fig):
    return [ax.get_title() for ax in fig.axes]


def test_the_default_view_is_the_lesson_pair_and_cublas_at_every_n(figure):
    live, ref = timings()
    assert set(ref["kernel"]) == {"naive", "tiled", "cublas"}
    assert sorted(ref["N"].unique()) == sorted(BENCH["N"].unique())
    assert set(live["kernel"]) <= {"naive", "tiled", "cublas"}


@pytest.mark.parametrize("view", ["lesson", "naive", "pair", "tile", "effects"])
def test_every_view_keeps_a_live_panel_that_says_what_simulator_times_are(view, figure):
    live, _ = timings(view)
    assert len(live) > 0
    if tiledlab.SIMULATOR:
        assert "says nothing of GPU speed" in titles(figure[0])[0]


def test_the_naive_view_shows_both_naive_kernels_against_n(figure, capsys):
    live, ref = timings("naive")
    assert set(ref["kernel"]) == set(live["kernel"]) == {"naive", "naive_unsigned"}
    assert sorted(ref["N"].unique()) == [1024, 2048, 4096, 8192]
    assert any("N³" in line.get_label() for line in figure[0].axes[1].get_lines())
    assert "slope" in capsys.readouterr().out


def test_the_pair_view_holds_both_pairs_at_one_tile_width(figure, capsys):
    live, ref = timings("pair", tile=32)
    assert set(ref["kernel"]) == {"naive", "tiled", "naive_unsigned", "tiled_unsigned"}
    assert set(ref.loc[ref["kernel"].str.startswith("tiled"), "tile"]) == {32}
    out = capsys.readouterr().out
    n = 4096
    fair = data.value(BENCH, "median_ms", kernel="naive_unsigned", N=n, tile=16) / \
        data.value(BENCH, "median_ms", kernel="tiled_unsigned", N=n, tile=32)
    assert f"N = {n}:" in out and f"{fair:.2f}×" in out


def test_the_tile_view_reads_the_fair_factor_at_every_t_from_bench(figure, capsys):
    live, ref = timings("tile")
    n = BENCH["N"].max()
    assert set(ref["N"]) == {n} and set(ref["kernel"]) == {"naive_unsigned", "tiled_unsigned"}
    out = capsys.readouterr().out
    naive = data.value(BENCH, "median_ms", kernel="naive_unsigned", N=n, tile=16)
    for t in (8, 16, 32):
        factor = naive / data.value(BENCH, "median_ms", kernel="tiled_unsigned", N=n, tile=t)
        assert f"{factor:.2f}× at T = {t}" in out
    ax = figure[0].axes[1]
    assert list(ax.get_xticks()) == [8, 16, 32]
    assert all("T" in h for h in ax.get_legend_handles_labels()[1] if h.startswith("tiled"))


def test_the_effects_view_draws_each_variant_over_its_plain_kernel(figure, capsys):
    live, ref = timings("effects")
    assert "tiled sB transposed padded" in set(ref["kernel"])
    ax = figure[0].axes[1]
    heights = sorted(round(p.get_height(), 6) for p in ax.patches)
    effects = ref.set_index(["kernel", "tile"])["median_ms"]
    worst = effects[("tiled swapped xy", 32)] / effects[("tiled", 32)]
    assert np.isclose(heights[-1], worst, rtol=1e-6)
    assert f"{worst:.2f}×" in capsys.readouterr().out


def test_an_unknown_view_is_refused():
    with pytest.raises(ValueError, match="view must be one of"):
        timings("everything")


def notebook_code(name):
    import pathlib

    import nbformat
    path = pathlib.Path(__file__).parent.parent / "notebooks" / f"{name}.ipynb"
    return "\n".join(c.source for c in nbformat.read(path, 4).cells if c.cell_type == "code")


def test_notebooks_1_2_3_and_5_each_show_the_view_of_their_step():
    import re
    views = {name: re.findall(r"timings\((?:view=)?\"(\w+)\"", notebook_code(name))
             for name in ("01_naive_reads", "02_redundant_reads", "03_one_tile_step", "05_line_by_line")}
    assert views == {"01_naive_reads": ["naive"], "02_redundant_reads": ["pair"], "03_one_tile_step": ["tile"],
                     "05_line_by_line": ["effects"]}


def test_no_notebook_writes_text_smaller_than_8_points():
    import re
    for name in ("00_start_here", "01_naive_reads", "02_redundant_reads", "03_one_tile_step", "04_whole_matrix",
                 "05_line_by_line", "06_caches", "07_register_tiling"):
        sizes = [int(s) for s in re.findall(r"\b(?:fontsize|size)=(\d+(?:\.\d+)?)\b", notebook_code(name))]
        assert all(s >= 8 for s in sizes), (name, sizes)


def test_notebook_1_compares_its_tiny_launch_with_a_launch_of_nothing_and_with_its_arithmetic():
    code = notebook_code("01_naive_reads")
    assert "does_nothing[blockspergrid, threadsperblock](dA, dB, dC)" in code
    assert "flops = 2 * M * K * N" in code and "peaks.csv" in code
