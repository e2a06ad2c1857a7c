"""notebook.claims: a comparison is stated only beyond the run-to-run spread of three runs or more, its
sentence names both points and the spread, and it follows the reader's language."""
import pandas as pd
import pytest

from tiledlab.notebook import claims


def runs(points):
    """A table of runs: {(kernel, tile): [median_ms of run 1, 2, ...]} at N = 64."""
    return pd.DataFrame([{"run": r, "kernel": k, "N": 64, "tile": t, "median_ms": ms, "min_ms": ms * 0.99,
                          "max_ms": ms * 1.01, "tflops": 1 / ms}
                         for (k, t), values in points.items() for r, ms in enumerate(values, 1)])


TILED, NAIVE = dict(kernel="tiled_unsigned", N=64, tile=8), dict(kernel="naive_unsigned", N=64, tile=8)


def test_a_margin_beyond_the_spread_is_stated_with_both_names_and_the_spread():
    c = claims.compare(runs({("tiled_unsigned", 8): [10, 10.2, 9.8], ("naive_unsigned", 8): [15, 15.3, 14.7]}),
                       TILED, NAIVE)
    assert c.holds and round(c.margin) == 50 and round(c.noise) == 4  # 2 % each
    assert str(c) == ("At N = 64, tiled_unsigned T=8 is faster than naive_unsigned (8×8 blocks) by 50 % "
                      "(beyond the run-to-run spread of ± 4.0 %, 3 runs).")


def test_a_margin_inside_the_spread_is_within_noise_whichever_is_ahead():
    c = claims.compare(runs({("tiled_unsigned", 8): [10, 10.4, 9.6], ("naive_unsigned", 8): [10.3, 10.1, 10.2]}),
                       TILED, NAIVE)
    assert not c.holds and c.within_noise
    assert "are within noise of each other" in str(c) and "3 runs" in str(c)


def test_fewer_than_three_runs_claim_no_order():
    c = claims.compare(runs({("tiled_unsigned", 8): [10, 10.1], ("naive_unsigned", 8): [20, 20.1]}), TILED, NAIVE)
    assert c.runs == 2 and not c.holds and not c.within_noise
    assert "fewer than 3 runs give no spread" in str(c)


def test_the_slower_first_still_names_the_faster_one_first_and_a_large_factor_as_times():
    c = claims.compare(runs({("tiled_unsigned", 8): [10] * 3, ("naive", 16): [37.3] * 3}),
                       dict(kernel="naive", N=64, tile=16), TILED)
    assert c.margin < 0 and not c.holds
    assert str(c).startswith("At N = 64, tiled_unsigned T=8 is faster than naive (16×16 blocks) by 3.73×")


def test_pct_metrics_compare_in_points_and_higher_is_ahead():
    table = pd.DataFrame([{"run": r, "kernel": k, "N": 4096, "pct_cublas": v}
                          for k, vs in {"triton": [88.0, 88.4, 88.2], "w": [87.0, 87.1, 86.9]}.items()
                          for r, v in enumerate(vs, 1)])
    c = claims.compare(table, dict(kernel="triton", N=4096), dict(kernel="w", N=4096), "pct_cublas")
    assert c.holds and round(c.margin, 1) == 1.2 and round(c.noise, 1) == 0.3
    assert "triton is ahead of w by 1.2 points (beyond the run-to-run spread of ± 0.3 points, 3 runs)" in str(c)


def test_a_missing_point_is_said_and_its_factor_is_not_a_number():
    table = runs({("tiled_unsigned", 8): [10] * 3})
    assert claims.compare(table, TILED, NAIVE) == "naive_unsigned (8×8 blocks): not in the committed data"
    assert claims.times(claims.factor(table, NAIVE, TILED)) == "-"


def test_points_keep_one_row_per_point_with_the_median_of_the_runs_and_every_samples_range():
    p = claims.points(runs({("tiled_unsigned", 8): [10, 12, 11]}))
    assert len(p) == 1 and p["median_ms"].iloc[0] == 11 and p["runs"].iloc[0] == 3
    assert p["min_ms"].iloc[0] == pytest.approx(9.9) and p["max_ms"].iloc[0] == pytest.approx(12.12)
    assert claims.points(p) is p  # a reduced table comes back as it is
    one = claims.points(runs({("tiled_unsigned", 8): [10]}).drop(columns="run"))  # a file of one run
    assert one["runs"].iloc[0] == 1


def test_an_outlying_reference_lies_outside_every_other_run():
    assert claims.outlying(48.3, [49.2, 50.8, 50.5]) and not claims.outlying(49.2, [48.3, 50.8, 50.5])


def test_the_sentence_is_in_chinese_for_the_chinese_edition(monkeypatch):
    monkeypatch.setenv("TILEDLAB_LANG", "zh")
    c = claims.compare(runs({("tiled_unsigned", 8): [10, 10.2, 9.8], ("naive_unsigned", 8): [15, 15.3, 14.7]}),
                       TILED, NAIVE)
    assert str(c) == "在 N = 64 时，tiled_unsigned T=8 比 naive_unsigned（8×8 线程块）快 50 %（超出各次运行之间 ± 4.0 % 的波动，3 次运行）。"


def test_the_fastest_block_shape_is_the_least_median_over_the_runs():
    table = runs({("naive_unsigned", 8): [9, 9, 30], ("naive_unsigned", 16): [10, 10, 10], ("naive_unsigned", 32): [11] * 3})
    assert claims.fastest(table, "naive_unsigned", 64) == 8  # the median, not the mean (one slow run)
