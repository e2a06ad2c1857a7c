"""Committed data: the loader gives the numbers written in the CSV, and a rewrite keeps its columns."""
import csv

import numpy as np
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


def test_row_picks_the_one_matching_row_as_a_series():
    prof = data.load("h200/profile.csv")
    r = data.row(prof, kernel="tiled", N=4096, tile=16)
    assert isinstance(r, pd.Series) and (r["kernel"], r["N"], r["tile"]) == ("tiled", 4096, 16)
    picked = prof[(prof["kernel"] == "tiled") & (prof["N"] == 4096) & (prof["tile"] == 16)]
    assert len(picked) == 1 and r["time_ms"] == picked["time_ms"].iloc[0]


def test_value_is_a_scalar_on_every_pandas():
    prof = data.load("h200/profile.csv")  # ("tiled", 4096) occurs once per tile: a MultiIndex lookup would be a Series
    ms = data.value(prof, "time_ms", kernel="naive", N=4096)
    naive = prof[(prof["kernel"] == "naive") & (prof["N"] == 4096)]["time_ms"]
    assert not isinstance(ms, (pd.Series, pd.DataFrame)) and len(naive) == 1 and ms == naive.iloc[0]


def test_row_skips_blank_cells_instead_of_failing_on_them():
    prof = data.load("h200/profile.csv")  # the roof rows have no N
    assert data.row(prof, kernel="naive", N=1024)["tile"] == 16
    assert data.row(prof, kernel="roof: DRAM read")["kernel"] == "roof: DRAM read"


@pytest.mark.parametrize("kernel, n, found", [("naive", 5, "no row"), ("tiled", 4096, "3 rows")])
def test_row_refuses_zero_or_several_matches_and_names_the_query(kernel, n, found):
    with pytest.raises(LookupError, match=f"{found} with kernel='{kernel}', N={n}:"):
        data.row(data.load("h200/profile.csv"), kernel=kernel, N=np.int64(n))  # N as a column's max() gives it


def test_row_refuses_an_unknown_column():
    with pytest.raises(KeyError, match="kernal"):
        data.row(data.load("h200/bench.csv"), kernal="naive")



@pytest.mark.parametrize("name, key, kernels", [
    ("h200/ladder.csv", ["kernel", "N"], None),  # notebooks 00 and 07, takeaways
    ("h200/async.csv", ["kernel", "N"], None),  # notebook 07: the asynchronous copies
    ("h200/waits.csv", ["kernel", "N"], None),  # notebook 07: the rungs against the wait, best by size
    ("h200/bench.csv", ["kernel", "N", "tile"], None),  # notebooks 00-04, by data.row on claims.points: per run
    ("h200/effects.csv", ["kernel", "N", "tile"], None),  # notebook 05: timed()
    ("h200/profile.csv", ["kernel", "N", "tile"], None),  # notebook 05: counters()
    ("h200/latency.csv", ["level", "index"], None),  # notebook 05: signed[level]
    ("h200/sass.csv", ["kernel"], None),  # notebook 07
    ("h200/notebooks.csv", ["notebook"], None),  # notebook 00
    ("simulator/notebooks.csv", ["notebook"], None)])
def test_labels_the_notebooks_look_up_by_index_are_unique(name, key, kernels):
    """pandas 2 and 3 agree on .loc[label] only where the index is unique; elsewhere notebooks use data.row."""
    table = data.load(name)
    key = key + ["run"] * ("run" in table.columns)  # a file of several runs: unique within each run
    if kernels:
        table = table[table["kernel"].isin(kernels)]
    assert not table.duplicated(key).any(), table[table.duplicated(key, keep=False)][key]
