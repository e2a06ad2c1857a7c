"""Committed data: the loader gives the numbers written in the CSV, and a rewrite keeps its columns."""
import csv

import pandas as pd
import pytest

from tiledlab import data

FILES = sorted(f"{d.name}/{f.name}" for d in data.path("").iterdir() if d.is_dir() for f in d.iterdir()
               if f.name.endswith(".csv"))


def cells(name):
    """The CSV read by the standard library: header and rows of text, no conversion."""
    with open(data.path(name), newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def same(text, value):
    if text == "":
        return pd.isna(value)
    if text in ("True", "False"):
        return value is (text == "True") or value == (text == "True")
    try:
        return float(text) == float(value)
    except ValueError:
        return text == value


def test_every_committed_file_is_found():
    assert {"h200/bench.csv", "h200/profile.csv", "h200/ladder.csv", "simulator/notebooks.csv"} <= set(FILES)


@pytest.mark.parametrize("name", FILES)
def test_load_gives_the_numbers_and_text_of_the_csv(name):
    header, rows = cells(name)
    table = data.load(name)
    assert list(table.columns) == header and len(table) == len(rows)
    for row, (_, loaded) in zip(rows, table.iterrows()):
        wrong = [(c, t, loaded[c]) for c, t in zip(header, row) if not same(t, loaded[c])]
        assert not wrong, wrong


def test_whole_numbers_stay_whole_and_versions_stay_text():
    prof = data.load("h200/profile.csv")
    assert str(prof["N"].dtype) == "Int64" and prof["N"].isna().any()  # the roof rows have no N
    assert str(data.load("h200/bench.csv")["tile"].dtype) == "Int64"
    bench = data.load("h200/bench.csv")
    assert all(isinstance(v, str) for v in bench["numba"])


@pytest.mark.parametrize("name", FILES)
def test_a_rewritten_file_loads_to_the_same_table(name, tmp_path):
    data.write_rows(data.load(name), tmp_path / "again.csv")
    pd.testing.assert_frame_equal(data.read_csv(tmp_path / "again.csv"), data.load(name))


def test_write_rows_keeps_ints_and_leaves_missing_fields_blank(tmp_path):
    rows = [{"kernel": "naive", "N": 16, "tile": 16, "rel_err": 1e-7}, {"kernel": "regtile_2d", "N": 16, "tile": ""},
            {"kernel": "cublas", "N": 16}]
    data.write_rows(rows, tmp_path / "b.csv", ["kernel", "N", "tile", "rel_err", "cupy"])
    assert (tmp_path / "b.csv").read_text().splitlines() == [
        "kernel,N,tile,rel_err,cupy", "naive,16,16,1e-07,", "regtile_2d,16,,,", "cublas,16,,,"]


def test_provenance_reads_the_first_row():
    line = data.provenance(data.load("h200/bench.csv"))
    assert line.startswith("measured on NVIDIA H200 (compute capability 9.0) on 20")
