"""Notebook 7's table over shapes: its rule for ordering two kernels (beyond the spread, within noise, or no order
from one run), the sentences it prints from the committed data, the facts its prose quotes, and the goals judged
on every card with a committed table."""
import contextlib
import io
import pathlib
import re

import nbformat
import pandas as pd
import pytest

from tiledlab import data
from tiledlab.core import best, registry
from tiledlab.experiments import tune

PAGE = pathlib.Path(__file__).parents[1] / "notebooks" / "07_register_tiling.ipynb"
CELLS = {c.id: c for c in nbformat.read(PAGE, as_version=4).cells}
AT_1024 = "1024x1024x1024"


def helpers(runs=None):
    """The table cell's functions, run as the page runs them, over `runs` (explore.csv by default)."""
    source = CELLS["nb7-shapes-table"].source.split("\nrows, sentences = [], []")[0]
    scope = {"data": data}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(source, scope)
    if runs is not None:
        scope["runs"] = runs
    return scope


def three_runs(a, b):
    """Three runs of kernels x and y at one shape, % of cuBLAS a[i] and b[i]."""
    return pd.DataFrame([dict(run=i, shape="s", kernel=k, pct_cublas=v) for i in range(3)
                         for k, v in (("x", a[i]), ("y", b[i]))])


def test_a_gap_beyond_both_half_ranges_is_an_order_with_its_numbers():
    page = helpers(three_runs([90.0, 91.0, 89.0], [86.0, 86.5, 85.5]))  # medians 90 and 86; noise 1 + 0.5
    assert page["versus"]("s", "y", "x") == ("x ahead of y by 4.0 points (beyond the run-to-run spread of ± 1.5, "
                                             "3 runs)")


def test_a_gap_inside_the_noise_is_within_noise():
    page = helpers(three_runs([88.0, 89.5, 87.0], [87.0, 87.5, 86.5]))  # medians 88 and 87; noise 1.25 + 0.5
    assert page["versus"]("s", "x", "y") == "x and y: within noise (± 1.8 points; 1.0 apart over 3 runs)"


def test_one_run_gives_the_gap_and_no_order():
    page = helpers(pd.DataFrame([dict(run=1, shape="s", kernel="x", pct_cublas=90.0),
                                 dict(run=1, shape="s", kernel="y", pct_cublas=80.0)]))
    assert page["versus"]("s", "y", "x") == ("x 10.0 points ahead of y in 1 run: too few runs for a spread, "
                                             "no order claimed")
    assert page["versus"]("s", "x", "z") == "z: not measured at s"


def test_the_exploration_s_sentences_quote_its_numbers():
    page = helpers()
    if page["shapes_file"] != "h200/explore.csv":
        pytest.skip("the final run is committed: the page reads shapes.csv")
    versus = page["versus"]
    assert versus(AT_1024, "triton", "d_64x128x16_8x8_s5") == (
        "triton 14.4 points ahead of d_64x128x16_8x8_s5 in 1 run: too few runs for a spread, no order claimed")
    assert versus(AT_1024, "d_64x128x16_8x8_s5", "a_64x128x16_8x8_s3") == (
        "a_64x128x16_8x8_s3 1.5 points ahead of d_64x128x16_8x8_s5 in 1 run: too few runs for a spread, no order "
        "claimed")
    assert versus("1000x1000x1000", "triton", "s_64x128x8_8x8_db").startswith("s_64x128x8_8x8_db 6.2 points ahead")
    assert [page["fastest_numba"](s) for s in ("4096x4096x4096", AT_1024, "1000x1000x1000")] == [
        "w_128x256x8_8x16_warp16x2", "a_64x128x16_8x8_s3", "s_64x128x8_8x8_db"]


def test_what_the_n_1024_prose_says_of_triton_s_tile_and_ours():
    text = re.sub(r"\s+", " ", CELLS["nb7-n1024"].source)
    assert "picked at N = 1024 a 64×128 block tile with BK = 16, in 5 stages of 4 warps" in text
    explore = data.load("h200/explore.csv")
    chosen = data.value(explore, "config", shape=AT_1024, kernel="triton")
    assert all(f"{k}: {v}" in chosen for k, v in
               (("BLOCK_M", 64), ("BLOCK_N", 128), ("BLOCK_K", 16), ("num_stages", 5), ("num_warps", 4)))
    kernel = registry.KERNELS["d_64x128x16_8x8_s5"]
    c = kernel.constants
    assert (c["BM"], c["BN"], c["BK"], kernel.code.options["stages"]) == (64, 128, 16, 5)
    assert (c["BM"] // c["TM"]) * (c["BN"] // c["TN"]) == 4 * 32  # 4 warps
    assert "take 227 per thread (explore.csv), so an SM holds at most 2 of these blocks" in text
    for name in ("d_64x128x16_8x8_s5", "a_64x128x16_8x8_s3"):
        assert data.value(explore, "regs", shape=AT_1024, kernel=name) == 227
    device = data.load("h200/device.csv").iloc[0]
    regs_per_block = -(-227 * 32 // 256) * 256 * 4  # granted per warp in units of 256
    assert int(device["registers_per_sm"]) // regs_per_block == 2
    assert "only 128 blocks for the card's 132 SMs" in text
    assert best.blocks(registry.KERNELS["d_64x128x16_8x8_s5"], 1024, 1024) == 128 and int(device["sms"]) == 132


def test_the_shapes_the_prose_names_have_partial_tiles_or_few_blocks():
    text = re.sub(r"\s+", " ", CELLS["nb7-shapes"].source)
    assert "partial tiles at their edges (1000³, 3000³, 4097³, 6000³)" in text
    assert all(n % 64 for n in (1000, 3000, 4097, 6000))  # no tile of the table divides them
    assert "few blocks of a large tile (1024×8192×1024, 16384×4096×256)" in text
    sms = int(data.load("h200/device.csv")["sms"].iloc[0])
    large = registry.KERNELS["w_128x256x8_8x16_warp16x2"]
    assert best.blocks(large, 1024, 1024) < sms and best.blocks(large, 16384, 256) < sms


def test_the_count_cell_refuses_in_one_line_on_a_card_without_cp_async(monkeypatch):
    from tiledlab.core import card
    monkeypatch.setattr(card, "current", lambda: card.KNOWN["t4"])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(CELLS["nb7-dynamic-count"].source, {"registry": registry})
    assert out.getvalue() == ("d_64x128x16_8x8_s5: Tesla T4 (sm_75, 40 SMs) cannot run it: cp.async needs compute "
                              "capability 8.0 or higher (its tiles take 66 KiB of shared memory per block)\n")


def goals_page(runs=None):
    """The goals cell's functions (goals, goal_3) beside the table cell's, as the page defines them."""
    from tiledlab.notebook import table
    page = helpers(runs)
    page.update(table=table, registry=registry)
    exec(CELLS["nb7-goals-data"].source.split("\ngoals(runs)")[0], page)
    return page


def printed(call, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        call(*args)
    return out.getvalue()


def test_an_order_on_fewer_than_three_rounds_is_not_decided_and_three_decide_it():
    """The H100's committed table (three rounds at every shape) and the same with its third round cut at the
    first ten shapes, as a call's time limit once cut it: an order is decided exactly where three rounds ran."""
    h100 = data.load("h100/shapes.csv")
    cut_short = list(dict.fromkeys(h100["shape"]))[:10]
    cut = h100[~(h100["shape"].isin(cut_short) & (h100["run"] == 3))]
    for runs in (h100, cut):
        rounds = runs.groupby("shape")["run"].nunique()
        lines = {line.split()[0]: line for line in printed(goals_page()["goals"], runs).splitlines()}
        for shape, n in rounds.items():
            decided = lines[shape.replace("x", "×")].rstrip().endswith((" yes", " no"))
            assert decided == (n >= 3), lines[shape.replace("x", "×")]
    assert (h100.groupby("shape")["run"].nunique() == 3).all()
    assert lines["8192×8192×8192"].rstrip().endswith("not decided (2 runs)")


def test_goal_3_leaves_a_kernel_the_card_did_not_check_undecided_and_fails_a_wrong_one():
    goal_3 = goals_page()["goal_3"]
    names = sorted(set(registry.KERNELS) - {"best"})
    every = pd.DataFrame({"kernel": names, "odd_rel_err": 1e-7})
    assert ": met (" in printed(goal_3, every)
    assert ": not decided, 1 not checked on this card (" in printed(goal_3, every.iloc[1:])
    wrong = every.assign(odd_rel_err=[1e-3] + [1e-7] * (len(names) - 1))
    assert ": not met (" in printed(goal_3, wrong.iloc[:-1])


def test_the_goals_cell_shows_every_card_with_a_committed_table():
    from tiledlab.core import card
    shown = "".join(o.get("text", "") for o in CELLS["nb7-goals-data"].outputs)
    measured = [k for k in card.KNOWN if data.path(f"{k}/shapes.csv").is_file()]
    assert {"h100", "h200"} <= set(measured)
    for key in measured:
        if key != "h200":  # the H200's provenance is the table cell's first line
            assert f"{data.provenance(data.load(f'{key}/shapes.csv'))} | {key}/shapes.csv" in shown, key
    assert shown.count("goal 1, ") == len(measured)
