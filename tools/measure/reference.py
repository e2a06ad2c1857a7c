"""The GPU reference data: run a set of experiments and write one CSV each, every row stamped.

device.csv (the card's properties, as the driver reports them),
latency.csv (dependent-load latency per memory level), races.csv (tiled kernel without each barrier),
racecheck.csv (compute-sanitizer's race report), effects.csv (coalescing, bank conflicts, the write-back
of C, on variants of the lesson's kernels), peaks.csv (the roofs: FP32 rate, DRAM, L2 and shared bandwidth).
"""
import pathlib

from tiledlab.data import stamp, write_rows
from tiledlab.experiments import Unavailable, device, races, require_gpu

from . import effects, latency, peaks, racecheck

EXPERIMENTS = {  # name → run(quick)
    "device": lambda quick: device.run(),
    "latency": lambda quick: latency.run(steps=2000 if quick else 20000),
    "peaks": lambda quick: peaks.run(**({"trips": 256, "shared_passes": 256, "seconds": 0.05} if quick else {})),
    "races": lambda quick: races.run(n=256 if quick else 1024, runs=5 if quick else 200),
    "effects": lambda quick: effects.run(ns=(512,) if quick else (2048, 4096)),
    "racecheck": lambda quick: racecheck.run(),
}


def run(out, only=None, quick=False, report=print):
    """Run the experiments named in `only` (all by default); write DIR/name.csv for each that can run
    here, and report the others as skipped. Returns {name: rows}."""
    require_gpu("measure")
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    provenance, done = stamp(), {}
    for name, experiment in EXPERIMENTS.items():
        if only and name not in only:
            continue
        try:
            rows = experiment(quick)
        except Unavailable as why:
            report(f"{name}: skipped ({why})")
            continue
        write_rows([{**r, **provenance} for r in rows], out / f"{name}.csv")
        report(f"{name}:")
        for r in rows:
            report("  " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()))
        done[name] = rows
    return done
