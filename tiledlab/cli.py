"""python -m tiledlab {info, count, bench, ladder, profile, measure, takeaways, execute, lab}.

Exit codes, the same for every command: 0 done; 1 ran, but a measured count differs from its formula;
2 bad input (the message says what to fix); 3 cannot run here (needs a real GPU, or a missing tool).
"""
import argparse
import json
import pathlib
import sys

import numpy as np

OK, MISMATCH, BAD_INPUT, UNAVAILABLE = 0, 1, 2, 3
GPU_NS, GPU_TILES = [1024, 2048], [8, 16, 32]  # bench's defaults on a GPU
SIM_NS, SIM_TILES = [16, 32], [4, 8]  # and on the simulator, where each CUDA thread is a Python thread
SIM_LIMIT_S = 600  # a longer simulator sweep needs --force


class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """Show defaults, except where there is none to show (flags, and values chosen by backend)."""

    def _get_help_string(self, action):
        return action.help if action.default in (None, False) else super()._get_help_string(action)


def _positive(kind):
    """An argparse type: a whole number of at least 1 (N, repeats)."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{kind} must be a whole number, got {text!r}")
        if value < 1:
            raise argparse.ArgumentTypeError(f"{kind} must be at least 1, got {value}")
        return value
    return parse


def _nonnegative(text):
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"warm-up launches cannot be negative, got {value}")
    return value


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
    from .backend import SIMULATOR
    from .core.launch import resolve, validate_tile
    from .data import write_rows
    from .experiments import bench
    from .notebook import plots, table
    args.n = args.n or (SIM_NS if SIMULATOR else GPU_NS)
    args.tile = args.tile or (SIM_TILES if SIMULATOR else GPU_TILES)
    for t in args.tile:
        validate_tile(t)
    for name in args.kernels:
        resolve(name)
    if SIMULATOR:
        seconds = bench.simulator_seconds(args.n, args.tile, args.warmup, args.repeats, args.kernels)
        print(f"CUDA simulator: this sweep should take about {seconds:,.0f} s (Python's time, not a GPU's)",
              file=sys.stderr)
        if seconds > SIM_LIMIT_S and not args.force:
            raise ValueError(f"about {seconds / 3600:,.1f} hours on the simulator: use sizes up to 64 "
                             f"(the default is --n {' '.join(map(str, SIM_NS))} --tile "
                             f"{' '.join(map(str, SIM_TILES))}), or add --force")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = bench.run(args.n, args.tile, args.warmup, args.repeats, cublas=not args.no_cublas,
                     progress=not args.quiet, kernels=args.kernels)
    write_rows(rows, out / "bench.csv", bench.FIELDS)
    ax = plots.bench_plot(rows, f"{rows[0]['device']} ({rows[0]['clock']})")
    ax.figure.savefig(out / "bench.png", dpi=120, bbox_inches="tight")
    table(["kernel", "N", "T", "median ms", "TFLOP/s", "GB/s", "clock"],
          [[r["kernel"], r["N"], r["tile"] or "", f"{r['median_ms']:.3f}", f"{r['tflops']:.3f}",
            f"{r['gbps']:.1f}", r["clock"]] for r in rows])
    print(f"wrote {out / 'bench.csv'} and {out / 'bench.png'}")
    return OK


def _ladder(args):
    from .data import stamp, write_rows
    from .experiments import bench, ladder
    from .notebook import table
    rows = ladder.run(args.n, kernels=args.kernels, search=not args.no_search, cublas=not args.no_cublas,
                      sass=not args.no_sass, progress=not args.quiet)
    cupy = bench._cupy()
    provenance = {**stamp(), "cupy": cupy.__version__ if cupy else ""}
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_rows([{**r, **provenance} for r in rows], out / "ladder.csv", ladder.FIELDS + list(provenance))
    write_rows([{**r, **provenance} for r in ladder.sass_rows(rows)], out / "sass.csv",
               ladder.SASS_FIELDS + list(provenance))
    table(["kernel", "N", "config", "TFLOP/s", "% cuBLAS", "rel err", "regs", "loop FFMA:LDS"],
          [[r["kernel"], r["N"], r["config"], f"{r['tflops']:.1f}", _number(r["pct_cublas"], ".1f"),
            _number(r["rel_err"], ".1e"), r.get("regs", ""), _ffma_per_lds(r)] for r in rows])
    print(f"wrote {out / 'ladder.csv'} and {out / 'sass.csv'}")
    return OK


def _number(value, spec):
    return "" if value in ("", None) else format(value, spec)


def _ffma_per_lds(row):
    lds = sum(row.get(f"loop_lds{w}") or 0 for w in (32, 64, 128))
    return f"{row['loop_ffma']}:{lds}" if row.get("loop_ffma") not in (None, "") else ""


def _profile(args):
    from .data import stamp, write_rows
    from .experiments import profile
    from .notebook import table
    rows = profile.run(args.n, args.tile, effects_n=args.effects_n, cublas_n=args.cublas_n, roofs=args.roofs,
                       ladder_n=args.ladder_n)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_rows([{**r, **stamp()} for r in rows], out / "profile.csv")
    table(["kernel", "N", "T", "ms", "inst/warp-FMA", "blocks/SM", "top stalls"],
          [[r["kernel"], r["N"], r["tile"], f"{r.get('time_ms', 0):.3f}", f"{r.get('inst_issued_per_warp_fma', 0):.2f}",
            r.get("blocks_per_sm", ""), r.get("top_stalls", "")] for r in rows])
    print(f"wrote {out / 'profile.csv'}")
    return OK


def _measure(args):
    from .experiments import measure
    measure.run(args.out, only=args.only, quick=args.quick)
    return OK


def _takeaways(args):
    import matplotlib
    matplotlib.use("Agg")
    from .notebook import takeaways
    for path in takeaways.write(args.out):
        print(f"wrote {path}")
    return OK


def _execute(args):
    from .data import write_rows
    from .notebook import run
    paths = args.notebooks or run.lessons()
    rows = run.run(paths, inplace=args.inplace)
    if args.times:
        pathlib.Path(args.times).parent.mkdir(parents=True, exist_ok=True)
        write_rows(rows, args.times)
        print(f"wrote {args.times}")
    return OK


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["lab"]:  # before argparse: options it does not know go on to `jupyter lab`
        from .notebook.lab import main as lab_main
        return lab_main(argv[1:])
    from .experiments import Unavailable
    from .experiments.measure import EXPERIMENTS
    parser = argparse.ArgumentParser(prog="python -m tiledlab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    helpful = _Help
    sub.add_parser("lab", help="copy notebooks/ into a git-ignored working copy (my-notebooks/) and open it "
                               "in JupyterLab; `lab --help` for its options")
    sub.add_parser("info", help="backend, device and versions", description="Say which backend runs "
                   "(a GPU or the CUDA simulator), the device, and the versions of numba and numpy.",
                   formatter_class=helpful).set_defaults(run=_info)

    p = sub.add_parser("count", help="measured vs formula global loads, naive and tiled", formatter_class=helpful,
                       description="Run naive and tiled on N×N inputs with counting on and compare each "
                                   "kernel's measured global loads with the formula (2N³ and 2N³/T).")
    p.add_argument("--n", type=_positive("N"), default=32, help="matrix size N (N×N inputs)")
    p.add_argument("--tile", type=int, default=8, help="tile width T (1 to 32)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=_count)

    p = sub.add_parser("bench", help="time naive, tiled (and cuBLAS) over sizes; write bench.csv, bench.png",
                       formatter_class=helpful,
                       description="Time naive, tiled and (on a GPU with CuPy) cuBLAS over sizes and tile "
                                   "widths. Defaults: --n 1024 2048 --tile 8 16 32 on a GPU, --n 16 32 "
                                   "--tile 4 8 on the simulator, which forecasts its time and refuses "
                                   f"sweeps over {SIM_LIMIT_S} s unless --force.")
    p.add_argument("--n", type=_positive("N"), nargs="+", help="matrix sizes N (default: by backend, see above)")
    p.add_argument("--tile", type=int, nargs="+", help="tile widths T, 1 to 32 (default: by backend, see above)")
    p.add_argument("--out", default="bench-out", help="folder for bench.csv and bench.png")
    p.add_argument("--repeats", type=_positive("repeats"), default=10, help="timed launches per point")
    p.add_argument("--warmup", type=_nonnegative, default=2, help="untimed launches first")
    p.add_argument("--kernels", nargs="+", default=[], metavar="NAME",
                   help="also time these kernels by name, at their own constants (e.g. regtile_2d best)")
    p.add_argument("--no-cublas", action="store_true", help="skip cuBLAS even when CuPy is installed")
    p.add_argument("--force", action="store_true", help="run a long simulator sweep anyway")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=_bench)

    p = sub.add_parser("ladder", help="register tiling on a GPU: every rung, a search and cuBLAS; write ladder.csv",
                       formatter_class=helpful, description="Compile, check and time, in one run, the naive "
                       "kernel, tiled at T = 32, every rung of register tiling, a small search and cuBLAS "
                       "(CuPy), at each N; write DIR/ladder.csv (TFLOP/s, % of cuBLAS, errors, registers, "
                       "formulas) and DIR/sass.csv (the main loop's instructions). Needs a GPU.")
    p.add_argument("--n", type=_positive("N"), nargs="+", default=[1024, 2048, 4096, 8192], help="matrix sizes N")
    p.add_argument("--kernels", nargs="+", metavar="NAME", help="only these kernels (names of the registry)")
    p.add_argument("--no-search", action="store_true", help="the rungs only, not the search")
    p.add_argument("--no-cublas", action="store_true", help="skip cuBLAS even when CuPy is installed")
    p.add_argument("--no-sass", action="store_true", help="skip reading the SASS (needs nvdisasm or cuobjdump)")
    p.add_argument("--out", default="ladder-out", help="folder for ladder.csv and sass.csv")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=_ladder)

    p = sub.add_parser("profile", help="hardware counters of naive and tiled under Nsight Compute (ncu)",
                       formatter_class=helpful, description="Launch naive and tiled once each under ncu "
                       "(and, if asked, the effects' variants, cuBLAS and the roof kernels) and write their "
                       "hardware counters to DIR/profile.csv. Needs a GPU and ncu.")
    p.add_argument("--n", type=_positive("N"), nargs="+", default=[1024], help="matrix sizes N")
    p.add_argument("--tile", type=int, nargs="+", default=[8, 16, 32], help="tile widths T of the tiled kernel")
    p.add_argument("--effects-n", type=_positive("N"), help="also profile the variants of `effects` at this N")
    p.add_argument("--cublas-n", type=_positive("N"), help="also profile cuBLAS (through CuPy) at this N")
    p.add_argument("--roofs", action="store_true", help="also profile the roof kernels and two latency chases")
    p.add_argument("--ladder-n", type=_positive("N"), help="also profile the ladder (tiled T = 32, every "
                   "register-tiled rung, the best of the search) at this N")
    p.add_argument("--out", default="profile-out", help="folder for profile.csv")
    p.set_defaults(run=_profile)

    p = sub.add_parser("measure", help="GPU-only reference data: device, latency, peaks, effects, races, racecheck",
                       formatter_class=helpful, description="Measure the GPU reference data and write "
                       "one CSV per experiment into --out. Needs a GPU.")
    p.add_argument("--out", required=True, help="folder for the CSV files")
    p.add_argument("--quick", action="store_true", help="small sizes (for a smoke test)")
    p.add_argument("--only", nargs="+", choices=list(EXPERIMENTS), help="run only these experiments")
    p.set_defaults(run=_measure)

    p = sub.add_parser("takeaways", help="one slide-ready PNG per notebook", formatter_class=helpful,
                       description="Draw each notebook's takeaway figure (16:9, large fonts) from small live "
                                   "counts and the committed H200 data, and save them as PNG files.")
    p.add_argument("--out", default="takeaways", help="folder for the PNG files")
    p.set_defaults(run=_takeaways)

    p = sub.add_parser("execute", help="run the notebooks top to bottom and time each", formatter_class=helpful,
                       description="Execute notebooks in fresh kernels (all of notebooks/ by default), "
                                   "optionally saving their outputs in place and their times as CSV.")
    p.add_argument("notebooks", nargs="*", help="notebook files (default: the whole series, in order)")
    p.add_argument("--inplace", action="store_true", help="save the outputs into the notebooks")
    p.add_argument("--times", help="write the minutes per notebook to this CSV file")
    p.set_defaults(run=_execute)

    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return BAD_INPUT
    except Unavailable as e:
        print(f"cannot run here: {e}", file=sys.stderr)
        return UNAVAILABLE
