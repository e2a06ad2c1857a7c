"""python -m tiledlab {info, count, bench, profile, measure}."""
import argparse
import json
import pathlib
import sys

import numpy as np


def _info(args):
    from .backend import describe
    info = describe()
    if info["backend"] == "simulator":
        print("backend: CUDA simulator (no GPU in use: kernels run as Python threads; times say nothing of GPU speed)")
    else:
        print(f"backend: GPU {info['device']} (compute capability {info['compute_capability']})")
    for key in ("numba", "numba_cuda", "numpy"):
        print(f"{key.replace('_', '-')}: {info[key]}")


def _count(args):
    from .counting import count_loads
    from .formulas import predicted
    n, T = args.n, args.tile
    A, B = (np.random.default_rng(seed).standard_normal((n, n), dtype=np.float32) for seed in (1, 2))
    result = {}
    for kernel in ("naive", "tiled"):
        measured = count_loads(kernel, A, B, T)
        formula = sum(predicted(kernel, n, n, n, T).values())
        result[kernel] = {"measured": measured.total, "formula": formula}
    if args.json:
        print(json.dumps(result))
        return 0 if all(r["measured"] == r["formula"] for r in result.values()) else 1
    print(f"global loads of A and B, N={n}, T={T}")
    print(f"{'kernel':<7} {'measured':>12} {'formula':>12}  match")
    for kernel, r in result.items():
        ok = r["measured"] == r["formula"]
        print(f"{kernel:<7} {r['measured']:>12} {r['formula']:>12}  {'yes' if ok else 'NO'}")
    print(f"naive / tiled = {result['naive']['measured'] / result['tiled']['measured']:g} (T = {T})")
    return 0 if all(r["measured"] == r["formula"] for r in result.values()) else 1


def _bench(args):
    import matplotlib
    matplotlib.use("Agg")
    from . import bench
    from .launch import check_tile
    from .plots import bench_plot
    for t in args.tile:
        check_tile(t)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = bench.sweep(args.n, args.tile, args.warmup, args.repeats, cublas=not args.no_cublas,
                       progress=not args.quiet)
    bench.write_csv(rows, out / "bench.csv")
    ax = bench_plot(rows, f"{rows[0]['device']} ({rows[0]['clock']})")
    ax.figure.savefig(out / "bench.png", dpi=120, bbox_inches="tight")
    print(bench.table(rows))
    print(f"wrote {out / 'bench.csv'} and {out / 'bench.png'}")


def _profile(args):
    from .profile import main
    return main(args)


def _measure(args):
    from .measure import main
    return main(args)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tiledlab", description=__doc__)
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
    try:
        return args.run(args) or 0
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
