"""A card's one-call run (tools/same_run.py --set card) without a GPU: issue 38's goals judged per shape from the
rounds' rows, the run's table installed into the card's data folder (tools/install_final.py) where `best` and the
pages read it, and its bookkeeping on the simulator at tiny sizes."""
import os
import pathlib
import re
import subprocess
import sys

import pandas as pd
import pytest

from tiledlab.core import best, card

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import install_final  # noqa: E402
import same_run  # noqa: E402

STAMP = dict(backend="gpu", device="NVIDIA H100 80GB HBM3", compute_capability="9.0", numba="0.68.0",
             numba_cuda="0.30.4", numpy="2.4.6", date="2026-12-07", card="h100", sms=132, driver="580.159.04",
             torch="2.11.0", triton="3.6.0")


def rounds(shape, pct, chosen):
    """Rows of three rounds at `shape`: {kernel: [% of cuBLAS per round]}, cuBLAS at 1 ms; `best` ran `chosen`."""
    rows = []
    for run in (1, 2, 3):
        rows.append(dict(run=run, shape=shape, kernel="cublas", ms=1.0, pct_cublas=100.0, **STAMP))
        for kernel, values in pct.items():
            rows.append(dict(run=run, shape=shape, kernel=kernel, ms=100 / values[run - 1],
                             pct_cublas=values[run - 1], config="", **STAMP))
        rows.append({**rows[-len(pct) + list(pct).index(chosen)], "kernel": "best", "config": chosen})
    return rows


def test_each_goal_is_judged_per_shape_beyond_the_spread():
    rows = rounds("3000x3000x3000", {"triton": [63, 64, 63.5], "w_128x256x8_8x16_warp16x2": [71, 72, 71.5],
                                     "s_64x128x8_8x8_db": [90, 91, 90.5]}, "s_64x128x8_8x8_db")
    rows += rounds("2048x2048x2048", {"triton": [85.2, 86, 85.5], "w_128x256x8_8x16_warp16x2": [83, 84, 85.6],
                                      "s_64x128x8_8x8_db": [48, 49, 48.5]}, "w_128x256x8_8x16_warp16x2")
    rows += rounds("8192x8192x8192", {"triton": [89, 89.2, 89.1], "w_128x256x8_8x16_warp16x2": [80, 81, 80.5],
                                      "s_64x128x8_8x8_db": [88.5, 88.7, 88.6]}, "w_128x256x8_8x16_warp16x2")
    found = {r["shape"]: r for r in same_run.verdicts(rows)}
    at3000, at2048, at8192 = found["3000x3000x3000"], found["2048x2048x2048"], found["8192x8192x8192"]
    assert (at3000["within"], at3000["vs_triton"], at3000["good"], at3000["rounds"]) == (True, "ahead", None, 3)
    assert at2048["vs_triton"] == "within noise" and at2048["good"] is False and at2048["within"]
    assert at8192["fastest"] == "s_64x128x8_8x8_db" and not at8192["within"] and at8192["vs_triton"] == "behind"
    assert at8192["goal_8192"] is False and "goal_8192" not in at3000
    assert at8192["behind_fastest_pct"] == pytest.approx(100 * (88.6 / 80.5 - 1))
    table = same_run.verdict_table(list(found.values()))
    assert "best within 3 % of the fastest candidate at 2 of 3 shapes, ahead of Triton beyond the spread at 1" in table


def test_a_card_run_is_installed_in_its_card_s_folder_where_best_and_the_pages_read_it(tmp_path, monkeypatch):
    run = tmp_path / "out"
    run.mkdir()
    rows = rounds("3000x3000x3000", {"triton": [63, 64, 63.5], "s_64x128x8_8x8_db": [90, 91, 90.5],
                                     "w_128x256x8_8x16_warp16x2": [71, 72, 71.5]}, "s_64x128x8_8x8_db")
    pd.DataFrame(rows + [dict(run="card", shape="odd", kernel="s_64x128x8_8x8_db", **STAMP)]).to_csv(
        run / "same_run_card.csv", index=False)
    root = tmp_path / "data"
    install_final.card_run(str(run), root)
    shapes = pd.read_csv(root / "h100" / "shapes.csv")
    point = shapes[shapes["kernel"] == "s_64x128x8_8x8_db"].iloc[0]
    assert (point["pct_median"], point["pct_spread"], point["pct_count"]) == (90.5, 1.0, 3)
    readme = (root / "h100" / "README.md").read_text()
    assert readme.startswith("# Reference measurements from one NVIDIA H100 80GB HBM3")
    assert "driver 580.159.04" in readme and "3 interleaved rounds over 1 shapes" in readme and "torch 2.11.0" in readme
    install_final.card_run(str(run), root)  # again: the paragraph is replaced, not added
    assert (root / "h100" / "README.md").read_text().count("card run: written") == 1
    h100 = card.KNOWN["h100"]
    monkeypatch.setattr(best, "DATA", root)
    assert best.measured_card(h100) == best.measured_card(card.KNOWN["h200"]) == "h100"  # an sm_90 card's table
    times = best._table.__wrapped__("h100")
    assert times["s_64x128x8_8x8_db"][(3000, 3000, 3000)] == pytest.approx(100 / 90.5 * 1e-3)
    assert len(pd.read_csv(root / "h100" / "shapes.csv")) == len(shapes)


def test_a_simulator_card_run_is_refused_by_the_installer(tmp_path):
    run = tmp_path / "out"
    run.mkdir()
    pd.DataFrame([dict(run=1, shape="64x64x64", kernel="best", ms=1.0, **{**STAMP, "backend": "simulator"})]).to_csv(
        run / "same_run_card.csv", index=False)
    with pytest.raises(SystemExit, match="simulator"):
        install_final.card_run(str(run), tmp_path / "data")
    assert not (tmp_path / "data").exists()


def test_the_card_run_fits_one_device_call():
    """No shape is begun after the deadline; the last (8192³, every kernel) and the summary take well under a
    minute more, the wheels' install 30 s: within 9 of the call's 10 minutes."""
    text = (ROOT / "tools" / "same_run.py").read_text()
    deadline = int(re.search(r'args\.deadline or \((\d+) if card_run', text).group(1))
    assert deadline + 60 + 30 <= 540
    assert len(same_run.TABLE_SHAPES + same_run.OUTSIDE) == 17


@pytest.mark.slow
def test_the_card_run_s_bookkeeping_on_the_simulator(tmp_path):
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "tools/same_run.py", "--set", "card", "--shapes", "40x24x70", "--kernels",
                          "s_64x64x8_4x4", "--rounds", "2", "--workers", "1", "--odd", "33x17x45", "--out", str(out)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"})
    assert run.returncode == 0, run.stderr
    rows = pd.read_csv(out / "same_run_card.csv")
    timed = rows[rows["shape"] != "odd"]
    assert set(timed["run"].astype(int)) == {1, 2} and set(timed["card"]) == {"h200"}  # the simulator's card
    chosen = best.choose(40, 24, 70, card.KNOWN["h200"])
    assert set(timed["kernel"]) == {"s_64x64x8_4x4", chosen, "best"}
    assert set(timed[timed["kernel"] == "best"]["config"]) == {chosen}
    assert (out / "shapes.csv").exists() and len(pd.read_csv(out / "verdicts.csv")) == 1
    assert "best within 3 % of the fastest candidate at" in run.stdout
