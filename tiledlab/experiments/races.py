"""What happens when a barrier is missing: run the broken kernel many times and compare each result."""
import numpy as np

from ..core.kernels import tiled
from ..core.launch import matmul, prepare
from ..core.operands import operands
from ..counting.variants import without_barrier
from ..i18n import N_, _


def run(n=1024, T=32, runs=100, seed=0):
    """Rows, one per barrier removed: how many of `runs` launches differed from the correct kernel (the same
    arithmetic in the same order: a race-free run matches it bit for bit), and how badly."""
    A, B = operands(n, n, n, seed)
    good = matmul(A, B, tiled, T)
    rows = []
    for which in (0, 1):
        launch = prepare(without_barrier(tiled, which), A, B, T)
        wrong_elems, worst = [], 0.0  # the share of C wrong in each run that differed
        for _ in range(runs):
            C = launch.poison()().result()
            bad = ~(C == good)
            if bad.any():
                wrong_elems.append(bad.mean())
                with np.errstate(invalid="ignore", over="ignore"):
                    worst = max(worst, float(np.nanmax(np.abs(C - good))) if np.isfinite(C).any() else np.inf)
        rows.append({"barrier_removed": [N_("first"), N_("second")][which], "N": n, "tile": T, "runs": runs,
                     "wrong_runs": len(wrong_elems),
                     "mean_wrong_fraction": float(np.mean(wrong_elems)) if wrong_elems else 0.0,
                     "max_abs_error": worst})
    return rows


def frequency_note(live, committed, live_on, committed_on="the H200"):
    """Why the live and the committed counts of wrong runs (races.run's rows) differ: the counts, shares and why."""
    def counts(rows, on):
        runs = _(", ").join(_("without the {b} barrier {w} of {n} runs differ").format(b=_(b), w=w, n=n)
                            for b, w, n in zip(rows.barrier_removed, rows.wrong_runs, rows.runs))
        return _("{on}: {runs} (each run one {n:,}×{n:,} product, T = {t})").format(
            on=_(on), runs=runs, n=rows.N.iloc[0], t=rows.tile.iloc[0])

    pairs = live.merge(committed, on="barrier_removed", suffixes=("_live", "_committed"))
    pairs["share_live"] = pairs.wrong_runs_live / pairs.runs_live
    pairs["share_committed"] = pairs.wrong_runs_committed / pairs.runs_committed
    pairs["expected"] = (pairs.share_committed * pairs.runs_live).round().astype(int)
    differ = pairs[pairs.expected != pairs.wrong_runs_live]
    if len(differ):
        shares = _("The shares differ ({which}).").format(which="; ".join(
            _("{b} barrier: {live:.0%} of live runs, {committed:.0%} of committed; at the committed rate {e} of "
              "{n} live runs would differ").format(b=_(r.barrier_removed), live=r.share_live,
                                                    committed=r.share_committed, e=r.expected, n=r.runs_live)
            for r in differ.itertuples()))
    else:
        shares = _("The shares agree as closely as {n} runs can show.").format(n=live.runs.min())
    return _("Live on {live}. Committed on {committed}. {shares} How often a race shows depends on timing, not "
             "only on the code: which blocks the scheduler runs side by side, the clock, the matrix size, and on "
             "the simulator the points where Python switches threads, which are not where warps switch. A share "
             "describes one machine at one size: one wrong run proves a race, and no number of right runs proves "
             "there is none.").format(live=counts(live, live_on), committed=counts(committed, committed_on),
                                      shares=shares)
PLACES = (N_("the H200"), N_("the simulator"), N_("this GPU"))  # where frequency_note's counts ran (translated there)
