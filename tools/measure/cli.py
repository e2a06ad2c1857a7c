"""`python -m tools profile` and `python -m tools measure`: their handlers and options (tools/cli.py lists them)."""
from tiledlab.cli import OK, _Help, _kernels_option, _out_folder, _positive


def _profile(args):
    from tiledlab.data import stamp, write_rows
    from tiledlab.notebook import table

    from . import profile
    out = _out_folder(args.out)

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
    reference.run(_out_folder(args.out), only=args.only, quick=args.quick)
    return OK


HANDLERS = {"profile": _profile, "measure": _measure}


def _profile_options(sub):
    p = sub.add_parser("profile", help="hardware counters of naive and tiled under Nsight Compute (ncu)",
                       formatter_class=_Help, description="Launch naive and tiled once each under ncu "
                       "(and, if asked, the effects' variants, cuBLAS and the roof kernels) and write their "
                       "hardware counters to DIR/profile.csv. Needs a GPU and ncu.")
    p.add_argument("--n", type=_positive("N"), nargs="+", default=[1024], help="matrix sizes N")
    p.add_argument("--tile", type=int, nargs="+", default=[8, 16, 32], help="tile widths T of the tiled kernel")
    p.add_argument("--effects-n", type=_positive("N"), help="also profile the variants of `effects` at this N")
    p.add_argument("--cublas-n", type=_positive("N"), nargs="+", default=[], help="also profile cuBLAS (through "
                   "CuPy) at these N")
    p.add_argument("--roofs", action="store_true", help="also profile the roof kernels and two latency chases")
    p.add_argument("--fair", action="store_true", help="also profile the fair pair (naive_unsigned, "
                   "tiled_unsigned) at each N and T")
    p.add_argument("--ladder-n", type=_positive("N"), help="also profile the ladder (tiled T = 32, every "
                   "register-tiled rung, the best of the search) at this N")
    _kernels_option(p, "also profile these kernels (names of the registry) at each N of --kernels-n", [])
    p.add_argument("--kernels-n", type=_positive("N"), nargs="+", default=[], help="the sizes N of --kernels")
    p.add_argument("--triton-n", type=_positive("N"), nargs="+", default=[], help="also profile Triton's FP32 "
                   "matmul (its autotuned choice) at these N (needs Triton and PyTorch)")
    p.add_argument("--out", default="profile-out", help="folder for profile.csv")


def _measure_options(sub):
    from .reference import EXPERIMENTS
    p = sub.add_parser("measure", help="GPU-only reference data: device, latency, peaks, effects, races, racecheck",
                       formatter_class=_Help, description="Measure the GPU reference data and write "
                       "one CSV per experiment into --out. Needs a GPU.")
    p.add_argument("--out", required=True, help="folder for the CSV files")
    p.add_argument("--quick", action="store_true", help="small sizes (for a smoke test)")
    p.add_argument("--only", nargs="+", choices=list(EXPERIMENTS), help="run only these experiments")


OPTIONS = (_profile_options, _measure_options)
