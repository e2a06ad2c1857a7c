"""`python -m tools ladder|sass|profile|measure`: their handlers and options (tools/cli.py lists them)."""
from tiledlab.cli import GPU_TILES, OK, Help, formatted, kernels_option, out_folder, whole_arg


def _ladder(args):
    from tiledlab.data import stamp, write_rows
    from tiledlab.experiments.cublas import cupy_version
    from tiledlab.notebook import table

    from . import ladder
    out = out_folder(args.out)
    rows = ladder.run(args.n, kernels=args.kernels, search=not args.no_search, cublas=not args.no_cublas,
                      sass=not args.no_sass, progress=not args.quiet, triton=args.triton)
    provenance = {**stamp(), "cupy": cupy_version()}
    out.mkdir(parents=True, exist_ok=True)
    write_rows([{**r, **provenance} for r in rows], out / "ladder.csv", ladder.FIELDS + list(provenance))
    write_rows([{**r, **provenance} for r in ladder.sass_rows(rows)], out / "sass.csv",
               ladder.SASS_FIELDS + list(provenance))
    table(["kernel", "N", "config", "TFLOP/s", "% cuBLAS", "rel err", "regs", "loop FFMA:LDS"],
          [[r["kernel"], r["N"], r["config"], f"{r['tflops']:.1f}", formatted(r["pct_cublas"], ".1f"),
            formatted(r["rel_err"], ".1e"), r.get("regs", ""), _ffma_per_lds(r)] for r in rows])
    print(f"wrote {out / 'ladder.csv'} and {out / 'sass.csv'}")
    return OK


def _ffma_per_lds(row):
    lds = sum(row.get(f"loop_lds{w}") or 0 for w in (32, 64, 128))
    return f"{row['loop_ffma']}:{lds}" if row.get("loop_ffma") not in (None, "") else ""


def _sass(args):
    from tiledlab.core.launch import resolve, validate_tile
    from tiledlab.data import stamp, write_rows
    from tiledlab.experiments import require_gpu

    from . import sass
    out = out_folder(args.out)
    for t in args.tile:
        validate_tile(t)
    for name in args.kernels:
        resolve(name)
    require_gpu("sass (reading the compiled kernels' SASS)")
    provenance = stamp()
    rows = [{**r, **provenance} for r in sass.table(sass.sweep_jobs(args.tile, args.kernels, args.fair))]
    out.mkdir(parents=True, exist_ok=True)
    write_rows(rows, out / "sass.csv", ["kernel", "tile", *sass.SASS_FIELDS[1:], *provenance])
    print(f"wrote {out / 'sass.csv'}")
    return OK


def _profile(args):
    from tiledlab.data import stamp, write_rows
    from tiledlab.notebook import table

    from . import profile
    out = out_folder(args.out)

    def saved(rows):  # after every ncu run: a profile stopped later keeps what it measured
        out.mkdir(parents=True, exist_ok=True)
        write_rows([{**r, **stamp()} for r in rows], out / "profile.csv")
    rows = profile.run(args.n, args.tile, effects_n=args.effects_n, cublas_n=args.cublas_n, roofs=args.roofs,
                       ladder_n=args.ladder_n, fair=args.fair, kernels=args.kernels, kernels_n=args.kernels_n,
                       triton_n=args.triton_n, saved=saved)
    saved(rows)
    table(["kernel", "N", "T", "ms", "inst/warp-FMA", "blocks/SM", "top stalls"],
          [[r["kernel"], r["N"], r["tile"], f"{r.get('time_ms', 0):.3f}", f"{r.get('inst_issued_per_warp_fma', 0):.2f}",
            r.get("blocks_per_sm", ""), r.get("top_stalls", "")] for r in rows])
    print(f"wrote {out / 'profile.csv'}")
    return OK


def _measure(args):
    from . import reference
    reference.run(out_folder(args.out), only=args.only, quick=args.quick)
    return OK


HANDLERS = {"ladder": _ladder, "sass": _sass, "profile": _profile, "measure": _measure}


def _ladder_options(sub):
    p = sub.add_parser("ladder", help="register tiling on a GPU: every rung, a search and cuBLAS; write ladder.csv",
                       formatter_class=Help, description="Compile, check and time, in one run, the naive "
                       "kernel, tiled at T = 32, every rung of register tiling, a small search and cuBLAS "
                       "(CuPy), at each N; write DIR/ladder.csv (TFLOP/s, % of cuBLAS, errors, registers, "
                       "formulas) and DIR/sass.csv (the main loop's instructions). Needs a GPU.")
    p.add_argument("--n", type=whole_arg("N"), nargs="+", default=[1024, 2048, 4096, 8192], help="matrix sizes N")
    kernels_option(p, "only these kernels (names of the registry)")
    p.add_argument("--no-search", action="store_true", help="the rungs only, not the search")
    p.add_argument("--no-cublas", action="store_true", help="skip cuBLAS even when CuPy is installed")
    p.add_argument("--triton", action="store_true", help="also time Triton's FP32 matmul (needs Triton and PyTorch)")
    p.add_argument("--no-sass", action="store_true", help="skip reading the SASS (needs nvdisasm or cuobjdump)")
    p.add_argument("--out", default="ladder-out", help="folder for ladder.csv and sass.csv")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _sass_options(sub):
    p = sub.add_parser("sass", help="the main loops' SASS of bench's kernels; write sass.csv", formatter_class=Help,
                       description="Compile naive and tiled (and, with --fair, the fair pair; with --kernels, "
                       "kernels by name) as `python -m tiledlab bench` times them and count each main loop's "
                       "instructions: DIR/sass.csv, one row per kernel and tile. Needs a GPU, and nvdisasm or "
                       "cuobjdump.")
    p.add_argument("--tile", type=int, nargs="+", default=GPU_TILES, help="tile widths T, 1 to 32")
    kernels_option(p, "also these kernels by name, at their own constants", [])
    p.add_argument("--fair", action="store_true", help="also naive_unsigned and tiled_unsigned")
    p.add_argument("--out", default="sass-out", help="folder for sass.csv")


def _profile_options(sub):
    p = sub.add_parser("profile", help="hardware counters of naive and tiled under Nsight Compute (ncu)",
                       formatter_class=Help, description="Launch naive and tiled once each under ncu "
                       "(and, if asked, the effects' variants, cuBLAS and the roof kernels) and write their "
                       "hardware counters to DIR/profile.csv. Needs a GPU and ncu.")
    p.add_argument("--n", type=whole_arg("N"), nargs="+", default=[1024], help="matrix sizes N")
    p.add_argument("--tile", type=int, nargs="+", default=[8, 16, 32], help="tile widths T of the tiled kernel")
    p.add_argument("--effects-n", type=whole_arg("N"), help="also profile the variants of `effects` at this N")
    p.add_argument("--cublas-n", type=whole_arg("N"), nargs="+", default=[], help="also profile cuBLAS (through "
                   "CuPy) at these N")
    p.add_argument("--roofs", action="store_true", help="also profile the roof kernels and two latency chases")
    p.add_argument("--fair", action="store_true", help="also profile the fair pair (naive_unsigned, "
                   "tiled_unsigned) at each N and T")
    p.add_argument("--ladder-n", type=whole_arg("N"), help="also profile the ladder (tiled T = 32, every "
                   "register-tiled rung, the best of the search) at this N")
    kernels_option(p, "also profile these kernels (names of the registry) at each N of --kernels-n", [])
    p.add_argument("--kernels-n", type=whole_arg("N"), nargs="+", default=[], help="the sizes N of --kernels")
    p.add_argument("--triton-n", type=whole_arg("N"), nargs="+", default=[], help="also profile Triton's FP32 "
                   "matmul (its autotuned choice) at these N (needs Triton and PyTorch)")
    p.add_argument("--out", default="profile-out", help="folder for profile.csv")


def _measure_options(sub):
    from .reference import EXPERIMENTS
    p = sub.add_parser("measure", help="GPU-only reference data: device, latency, peaks, effects, races, racecheck",
                       formatter_class=Help, description="Measure the GPU reference data and write "
                       "one CSV per experiment into --out. Needs a GPU.")
    p.add_argument("--out", required=True, help="folder for the CSV files")
    p.add_argument("--quick", action="store_true", help="small sizes (for a smoke test)")
    p.add_argument("--only", nargs="+", choices=list(EXPERIMENTS), help="run only these experiments")


OPTIONS = (_ladder_options, _sass_options, _profile_options, _measure_options)
