"""What the notebooks say about tiling's speed-up comes from the fair pair, and no page types a time factor."""
import json
import pathlib
import re

import numpy as np
import pytest

from tiledlab import data

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = ["00_start_here", "02_redundant_reads", "03_one_tile_step", "04_whole_matrix", "05_line_by_line", "06_caches"]


def lesson_cells(name):
    """The notebook's cells before its exercises, as (cell_type, source)."""
    cells = []
    for cell in json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and "## Exercises" in src:
            cells.append(("markdown", src.split("## Exercises")[0]))
            break
        cells.append((cell["cell_type"], src))
    return cells


def code(name):
    return "\n".join(src for kind, src in lesson_cells(name) if kind == "code")


@pytest.mark.parametrize("name", PAGES)
def test_no_page_types_a_time_factor_in_its_prose(name):
    for kind, src in lesson_cells(name):
        if kind == "markdown":
            assert not re.search(r"\d\.\d+ ?×", src), f"{name}: a typed factor in: {src[:120]!r}"


@pytest.mark.parametrize("name", ["00_start_here", "02_redundant_reads", "03_one_tile_step", "04_whole_matrix"])
def test_every_speed_up_page_computes_the_fair_pair(name):
    assert "naive_unsigned" in code(name) and "tiled_unsigned" in code(name)


def test_notebook_4_teaches_numbas_index_cost_from_the_committed_sass():
    src = code("04_whole_matrix")
    assert "bench_sass.csv" in src and 'show("naive_unsigned")' in src
    assert any(kind == "markdown" and "## Numba's index cost" in s for kind, s in lesson_cells("04_whole_matrix"))


def test_notebook_5_says_what_the_naive_kernel_pays_from_its_l1_hits():
    src = code("05_line_by_line")
    assert "profile.csv" in src and "l1_ld_hit_pct" in src


def test_the_caches_takeaway_draws_the_fair_pairs_counters_and_time():
    from tiledlab.notebook import claims, takeaways
    ax = takeaways.caches().axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    prof = data.load("h200/profile.csv")
    naive = data.row(prof, kernel="naive_unsigned", N=4096)  # profiled in 16×16 blocks
    ts = list(lines["DRAM bytes"].get_xdata())
    dram = [naive["dram_read_bytes"] / data.row(prof, kernel="tiled_unsigned", N=4096, tile=t)["dram_read_bytes"] for t in ts]
    np.testing.assert_allclose(lines["DRAM bytes"].get_ydata(), dram)
    assert lines["DRAM bytes"].get_ydata()[-1] < 1  # beyond L2 the fair naive kernel reads less from DRAM
    bench = claims.points(data.load("h200/bench.csv"))
    ms = data.value(bench, "median_ms", kernel="naive_unsigned", N=4096, tile=naive["tile"])
    fair = [ms / data.value(bench, "median_ms", kernel="tiled_unsigned", N=4096, tile=t) for t in ts]
    np.testing.assert_allclose(lines["time"].get_ydata(), fair)
    assert "naive_unsigned (16×16 blocks) / tiled_unsigned" in ax.get_ylabel()
