"""python -m tiledlab {info, count, bench, profile, measure}.

Exit codes, the same for every command: 0 done; 1 ran, but a measured count differs from its formula;
2 bad input (the message says what to fix); 3 cannot run here (needs a real GPU, or a missing tool).
"""
import argparse
import json
import pathlib
import sys

import numpy as np

OK, MISMATCH, BAD_INPUT, UNAVAILABLE = 0, 1, 2, 3


def _info(args):
    from .backend import SIMULATOR, describe
    info = describe()
    if SIMULATOR:
        print("backend: CUDA simulator (no GPU in use: kernels run as Python threads; times say nothing of GPU speed)")
    else:
        print(f"backend: GPU {info['device']} (compute capability {info['compute_capability']})")
    for key in ("numba", "numba_cuda", "numpy"):
        print(f"{key.replace('_', '-')}: {info[key]}")
    return OK


def _count(args):
    from .core.formulas import predicted
    from .counting import count_loads
    from .notebook import table
    n, T = args.n, args.tile
    A, B = (np.random.default_rng(seed).standard_normal((n, n), dtype=np.float32) for seed in (1, 2))
    result = {}
    for kernel in ("naive", "tiled"):
        measured = count_loads(kernel, A, B, T)
        result[kernel] = {"measured": measured.total, "formula": sum(predicted(kernel, n, n, n, T).values())}
    match = all(r["measured"] == r["formula"] for r in result.values())
    if args.json:
        print(json.dumps(result))
    else:
        print(f"global loads of A and B, N={n}, T={T}")
        table(["kernel", "measured", "formula", "match"],
              [[k, r["measured"], r["formula"], "yes" if r["measured"] == r["formula"] else "NO"]
               for k, r in result.items()])
        print(f"naive / tiled = {result['naive']['measured'] / result['tiled']['measured']:g} (T = {T})")
    return OK if match else MISMATCH


def _bench(args):
    import matplotlib
    matplotlib.use("Agg")
    from .core.launch import validate_tile
    from .data import write_rows
    from .experiments import bench
    from .notebook import plots, table
    for t in args.tile:
        validate_tile(t)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = bench.run(args.n, args.tile, args.warmup, args.repeats, cublas=not args.no_cublas,
                     progress=not args.quiet)
    write_rows(rows, out / "bench.csv", bench.FIELDS)
    ax = plots.bench_plot(rows, f"{rows[0]['device']} ({rows[0]['clock']})")
    ax.figure.savefig(out / "bench.png", dpi=120, bbox_inches="tight")
    table(["kernel", "N", "T", "median ms", "TFLOP/s", "GB/s", "clock"],
          [[r["kernel"], r["N"], r["tile"] or "", f"{r['median_ms']:.3f}", f"{r['tflops']:.3f}",
            f"{r['gbps']:.1f}", r["clock"]] for r in rows])
    print(f"wrote {out / 'bench.csv'} and {out / 'bench.png'}")
    return OK


def _profile(args):
    from .data import stamp, write_rows
    from .experiments import profile
    rows = profile.run(args.n, args.tile)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_rows([{**r, **stamp()} for r in rows], out / "profile.csv")
    for r in rows:
        print(r)
    print(f"wrote {out / 'profile.csv'}")
    return OK


def _measure(args):
    from .experiments import measure
    measure.run(args.out, only=args.only, quick=args.quick)
    return OK


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tiledlab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="backend, device and versions").set_defaults(run=_info)

    p = sub.add_parser("count", help="measured vs formula global loads, naive and tiled")
    p.add_argument("--n", type=int, default=32)
    p.add_argument("--tile", type=int, default=8)
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=_count)

    p = sub.add_parser("bench", help="time naive, tiled (and cuBLAS) over sizes; write bench.csv, bench.png")
    p.add_argument("--n", type=int, nargs="+", default=[1024, 2048])
    p.add_argument("--tile", type=int, nargs="+", default=[8, 16, 32])
    p.add_argument("--out", default="bench-out")
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--no-cublas", action="store_true")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=_bench)

    p = sub.add_parser("profile", help="hardware counters of naive and tiled under Nsight Compute (ncu)")
    p.add_argument("--n", type=int, nargs="+", default=[1024])
    p.add_argument("--tile", type=int, nargs="+", default=[8, 16, 32])
    p.add_argument("--out", default="profile-out")
    p.set_defaults(run=_profile)

    p = sub.add_parser("measure", help="GPU-only reference data: latency, races, coalescing, peaks")
    p.add_argument("--out", required=True)
    p.add_argument("--quick", action="store_true", help="small sizes (for a smoke test)")
    p.add_argument("--only", nargs="+", choices=["latency", "races", "coalescing", "peaks", "racecheck"])
    p.set_defaults(run=_measure)

    args = parser.parse_args(argv)
    from .experiments import Unavailable
    try:
        return args.run(args)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return BAD_INPUT
    except Unavailable as e:
        print(f"cannot run here: {e}", file=sys.stderr)
        return UNAVAILABLE
