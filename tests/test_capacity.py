"""classroom/capacity.py: N students run a notebook at once, each in a kernel of their own; the guide's
simulator table is the committed measurement's (docs/classroom.md, between its capacity markers)."""
import pathlib
import re

import nbformat
import pandas as pd
import pytest

from classroom import capacity

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT / "classroom" / "data" / "capacity-simulator.csv"


GPU_DATA = ROOT / "classroom" / "data" / "capacity-h100.csv"


@pytest.mark.parametrize("marker, data", [("simulator", DATA), ("gpu", GPU_DATA)])
def test_the_guide_shows_the_committed_measurement(marker, data):
    guide = (ROOT / "docs" / "classroom.md").read_text()
    shown = re.search(rf"<!-- capacity:{marker} -->\n(.*?)\n<!-- /capacity:{marker} -->", guide, re.S)[1]
    assert shown == capacity.summary(pd.read_csv(data))


def _a_row_per_student_per_round(table):
    return (table.groupby(["students", "repeat"]).size() == table.groupby(["students", "repeat"])["students"].first()).all()


def test_the_measurement_has_three_rounds_of_each_size_and_its_provenance():
    table = pd.read_csv(DATA)
    assert list(table.columns) == capacity.FIELDS
    assert (table.groupby("students")["repeat"].nunique() >= 3).all()
    assert _a_row_per_student_per_round(table)
    assert table["backend"].eq("simulator").all() and table["date"].notna().all() and table["numba"].notna().all()
    assert (table["kernel_cpu_s"] > 0).all() and (table["kernel_peak_rss_mib"] > 50).all()


def test_a_round_of_students_each_in_a_kernel_of_their_own(tmp_path):
    """Two students at once on a notebook of one cell: a row each, the kernel's own CPU time and memory."""
    notebook = tmp_path / "tiny.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = sum(range(3_000_000))")]
    nbformat.write(nb, notebook)
    out = tmp_path / "capacity.csv"
    rows = capacity.measure([2], 1, notebook, out, limit_s=300, say=lambda line: None)
    table = pd.read_csv(out)
    assert len(rows) == len(table) == 2 and table["student"].tolist() == [1, 2]
    assert (table["kernel_cpu_s"] > 0).all() and (table["kernel_peak_rss_mib"] > 10).all()
    assert (table["wall_s"] <= table["round_wall_s"]).all() and table["notebook"].eq("tiny").all()


def test_on_a_gpu_the_table_adds_the_memory_in_use():
    table = pd.read_csv(DATA).assign(gpu_memory_used_mib=lambda t: 1000 * t["students"], device="NVIDIA H100",
                                     backend="gpu")
    shown = capacity.summary(table)
    assert "GPU memory in use (MiB)" in shown and "| 4 | " in shown and shown.splitlines()[4].endswith(" 4000 |")
    assert "GPU memory" not in capacity.summary(pd.read_csv(DATA))


def test_the_gpu_measurement_is_a_gpu_round_of_each_size_with_its_provenance():
    """One round of 1, 4, 16 and 40 students on one GPU, a row per student, the GPU's memory sampled in each."""
    table = pd.read_csv(GPU_DATA)
    assert list(table.columns) == capacity.FIELDS
    assert sorted(table["students"].unique()) == [1, 4, 16, 40]
    assert _a_row_per_student_per_round(table)
    assert table["backend"].eq("gpu").all() and table["device"].str.contains("H100").all()
    assert table["gpu_memory_used_mib"].notna().all() and table["date"].notna().all()
    assert (table["wall_s"] <= table["round_wall_s"]).all() and (table["kernel_cpu_s"] > 0).all()
