"""What happens when a barrier is missing: run the broken kernel many times and compare each result."""
import numpy as np

from ..core.kernels import tiled
from ..core.launch import matmul, prepare
from ..core.operands import operands
from ..counting.variants import without_barrier


def run(n=1024, T=32, runs=100, seed=0):
    """Rows, one per barrier removed: how many of `runs` launches differed from the correct kernel
    (which does the same arithmetic in the same order, so a race-free run matches it bit for bit),
    and how badly."""
    A, B = operands(n, n, n, seed)
    good = matmul(A, B, tiled, T)
    rows = []
    for which in (0, 1):
        launch = prepare(without_barrier(tiled, which), A, B, T)
        wrong_runs, wrong_elems, worst = 0, [], 0.0
        for _ in range(runs):
            C = launch.poison()().result()
            bad = ~(C == good)
            if bad.any():
                wrong_runs += 1
                wrong_elems.append(bad.mean())
                with np.errstate(invalid="ignore", over="ignore"):
                    worst = max(worst, float(np.nanmax(np.abs(C - good))) if np.isfinite(C).any() else np.inf)
        rows.append({"barrier_removed": ["first", "second"][which], "N": n, "tile": T, "runs": runs,
                     "wrong_runs": wrong_runs,
                     "mean_wrong_fraction": float(np.mean(wrong_elems)) if wrong_elems else 0.0,
                     "max_abs_error": worst})
    return rows


def frequency_note(live, committed, live_on, committed_on="the H200"):
    """Why the live and the committed counts of wrong runs differ, from both tables (races.run's columns):
    each count with its runs and size, which shares differ, and what a share depends on."""
    def counts(rows, on):
        r = rows.iloc[0]
        return (f"{on}: " + ", ".join(f"without the {b} barrier {w} of {n} runs differ" for b, w, n in
                                      zip(rows.barrier_removed, rows.wrong_runs, rows.runs))
                + f" (each run one {r.N:,}×{r.N:,} product, T = {r.tile})")

    pairs = live.merge(committed, on="barrier_removed", suffixes=("_live", "_committed"))
    pairs["share_live"] = pairs.wrong_runs_live / pairs.runs_live
    pairs["share_committed"] = pairs.wrong_runs_committed / pairs.runs_committed
    pairs["expected"] = (pairs.share_committed * pairs.runs_live).round().astype(int)
    differ = pairs[pairs.expected != pairs.wrong_runs_live]
    if len(differ):
        shares = "The shares differ (" + "; ".join(
            f"{r.barrier_removed} barrier: {r.share_live:.0%} of live runs, {r.share_committed:.0%} of committed; "
            f"at the committed rate {r.expected} of {r.runs_live} live runs would differ"
            for r in differ.itertuples()) + ")."
    else:
        shares = f"The shares agree as closely as {live.runs.min()} runs can show."
    return (f"Live on {counts(live, live_on)}. Committed on {counts(committed, committed_on)}. {shares} "
            "How often a race shows depends on timing, not only on the code: which blocks the scheduler runs "
            "side by side, the clock, the matrix size, and on the simulator the points where Python switches "
            "threads, which are not where warps switch. A share describes one machine at one size: one wrong "
            "run proves a race, and no number of right runs proves there is none.")
