"""python -m tiledlab {info, count, bench, tune, takeaways, lab}
(a teacher's commands and the maintainers' run from a clone: python -m classroom, python -m tools)."""
import argparse
import contextlib
import difflib
import errno
import json
import os
import pathlib
import sys
import traceback

import numpy as np

from .backend import SIMULATOR
from .core.rules import whole
from .experiments import Unavailable
from .i18n import _

OK, MISMATCH, BAD_INPUT, UNAVAILABLE, INTERNAL = 0, 1, 2, 3, 4
EPILOG = """exit codes, the same for every command:
  0  done
  1  ran, but a measured count differs from its formula
  2  bad input: a one-line message says what to type instead
  3  cannot run here: needs a real GPU, or a tool or Python package that is not installed
  4  internal error (a bug in tiledlab): a traceback, please report it"""
FULL = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG)
FILE_SYSTEM = (FileNotFoundError, FileExistsError, NotADirectoryError, IsADirectoryError, PermissionError)
EXIT_CODES = [  # (exception, applies to it, exit code, its one-line message): the first match wins
    (Unavailable, None, UNAVAILABLE, lambda e: f"cannot run here: {e}"),
    (ModuleNotFoundError, lambda e: not (e.name or "tiledlab").startswith("tiledlab"), UNAVAILABLE,  # else a bug
     lambda e: f"needs the Python package {e.name}, which is not installed: pip install {e.name}"),
    (MemoryError, None, BAD_INPUT, lambda e: "not enough memory for this size: try a smaller --n"),
    (OSError, lambda e: isinstance(e, FILE_SYSTEM) or e.filename is not None, BAD_INPUT,  # a path the user gave
     lambda e: f"{e.filename}: {e.strerror}" if e.filename else str(e)),
    (OSError, lambda e: e.errno in FULL, BAD_INPUT,  # writing an output: a full or read-only place
     lambda e: f"cannot write the output here: {e.strerror}; give another place to write (--out, DIR)"),
    (ValueError, None, BAD_INPUT, str),
]
GPU_NS, GPU_TILES = [1024, 2048], [8, 16, 32]  # bench's defaults on a GPU
SIM_NS, SIM_TILES = [16, 32], [4, 8]  # and on the simulator, where each CUDA thread is a Python thread
TUNE_NS = [1024, 2048, 4096, 8192]  # tune's square sizes, unless --shape or --n says otherwise
SIM_LIMIT_S = 600  # a longer simulator run needs --force
COUNTED_COST = 2  # a counted launch takes about as long as two plain ones on the simulator (N = 64, 96)


# --- what went wrong → exit code -------------------------------------------------------------------
class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors go through EXIT_CODES (one line, exit 2) instead of usage + exit."""

    def error(self, message):
        raise ValueError(f"{message} (see `{self.prog} --help`)")


def run(argv, parse, handlers, codes=EXIT_CODES):
    """Call the handler `parse(argv)` names; an error becomes its exit code: one line if fixable, else a traceback."""
    try:
        command, args = parse(argv)
        return handlers[command](args)
    except Exception as error:
        for kind, applies, code, message in codes:
            if isinstance(error, kind) and (applies is None or applies(error)):
                print(f"tiledlab: error: {' '.join(message(error).split())}", file=sys.stderr)  # one line
                return code
        traceback.print_exception(error)
        print("tiledlab: internal error (a bug in tiledlab): please report it with the traceback above",
              file=sys.stderr)
        return INTERNAL


def _parse(argv):
    if argv[:1] == ["lab"]:  # before argparse: unknown options go on to `jupyter lab`
        return argv[0], argv[1:]
    if argv[:1] and not argv[0].startswith("-") and argv[0] not in HANDLERS:  # a typo, or a teacher's or maintainer's
        if close := difflib.get_close_matches(argv[0], HANDLERS, 1, 0.75):
            raise ValueError(_("python -m tiledlab has no command {name}: did you mean {close}?").format(
                name=argv[0], close=close[0]))
        raise ValueError(f"python -m tiledlab has no command {argv[0]} (its commands: {', '.join(HANDLERS)}); from "
                         f"the root of a clone of the series, a teacher's command runs as python -m classroom "
                         f"{argv[0]}, a maintainer's as python -m tools {argv[0]}")
    args = parser().parse_args(argv)
    return args.command, args


def main(argv=None):
    return run(sys.argv[1:] if argv is None else list(argv), _parse, HANDLERS)


# --- checks and forecasts shared by the handlers ---------------------------------------------------
def file_in_the_way(path):
    """The first of `path` and its parents that exists, when it is a file rather than a folder."""
    first = next((p for p in (path, *path.parents) if p.exists()), None)
    return first if first and not first.is_dir() else None


def out_folder(path, option="--out"):
    """`path` as a folder to write into (made when written to), or a ValueError saying why it cannot be."""
    if not str(path).strip():  # Path("") is the current folder
        raise ValueError(_("{option} is empty: give a folder's name").format(option=option))
    path = pathlib.Path(path)
    if blocker := file_in_the_way(path):
        raise ValueError(f"{option} {path}: {blocker} is a file, not a folder; give a folder's name instead")
    return path


def _simulator_forecast(seconds, what, instead, force):
    """Say how long `what` should take on the simulator; refuse it over SIM_LIMIT_S unless `force`."""
    took = "under a second" if seconds < 1 else f"about {seconds:,.0f} s"
    print(f"CUDA simulator: {what} should take {took} (Python's time, not a GPU's)", file=sys.stderr)
    if seconds > SIM_LIMIT_S and not force:
        duration = f"{seconds / 60:,.0f} minutes" if seconds < 7200 else f"{seconds / 3600:,.1f} hours"
        raise ValueError(f"about {duration} on the simulator: {instead}, or add --force")


def count_bytes(n, T):
    """Memory `count` needs at N×N, tile T: A, B, C (host, device, read back) and tiled's counting buffers, twice."""
    from types import SimpleNamespace
    from .core.launch import resolve
    from .counting.buffers import CountingBuffers
    blockspergrid, threadsperblock = resolve("tiled").grid(n, n, {"T": T})
    launch = SimpleNamespace(shape=(n, n, n), blockspergrid=blockspergrid, threadsperblock=threadsperblock)
    buffers = CountingBuffers({"sA": (T, T), "sB": (T, T)})  # the tiled kernel's two shared tiles
    counting = sum(int(np.prod(shape(launch, 0))) * np.dtype(dtype).itemsize for _, dtype, shape, _ in buffers.layout)
    return 2 * counting + 7 * 4 * n * n


def _free_bytes():
    """Memory free here for `count` (on a GPU, the smaller of host and device); None where unknown."""
    free = []
    try:
        with open("/proc/meminfo") as meminfo:
            free += [int(line.split()[1]) * 1024 for line in meminfo if line.startswith("MemAvailable:")]
    except OSError:  # not Linux: the whole memory, at least
        if hasattr(os, "sysconf"):
            free.append(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    if not SIMULATOR:
        from numba import cuda
        with contextlib.suppress(NotImplementedError):  # a pool allocator that cannot say
            free.append(cuda.current_context().get_memory_info().free)
    return min(free) if free else None


# --- one handler per command -----------------------------------------------------------------------
def _info(args):
    from .backend import describe
    info = describe()
    print("backend: CUDA simulator (no GPU in use: kernels run as Python threads; times say nothing of GPU speed)"
          if SIMULATOR else f"backend: GPU {info['device']} (compute capability {info['compute_capability']})")
    for key in ("numba", "numba_cuda", "numpy"):
        print(f"{key.replace('_', '-')}: {info[key]}")
    return OK


def _count(args):
    from .core.formulas import naive_loads, tiled_loads
    from .core.launch import validate_tile
    from .core.operands import operands
    from .counting import count_loads
    from .experiments import bench
    n, T = args.n, validate_tile(args.tile)
    need, free = count_bytes(n, T), _free_bytes()
    if free is not None and need > free:  # refused before anything is allocated
        raise ValueError(f"count --n {n} needs about {need / 2**30:,.0f} GiB for its operands and counting buffers, "
                         f"and {free / 2**30:,.0f} GiB is free here: use --n {int(n * (free / need) ** 0.5)} or less")
    if SIMULATOR:
        seconds = bench.simulator_seconds([n], [T], 0, COUNTED_COST)  # naive and tiled, counted once each
        _simulator_forecast(seconds, "this count", "use --n 64 or less (the default is --n 32)", args.force)
    A, B = operands(n, n, n, seed=1)
    formulas = {"naive": naive_loads(n, n, n), "tiled": tiled_loads(n, n, n, T)}
    result = {k: {"measured": count_loads(k, A, B, T).total, "formula": sum(f.values())} for k, f in formulas.items()}
    if args.json:
        print(json.dumps(result))
    else:
        from .notebook import table
        print(_("global loads of A and B, N={n}, T={T}").format(n=n, T=T))
        table([_("kernel"), _("measured"), _("formula"), _("match")], [[k, r["measured"], r["formula"], _("yes")
              if r["measured"] == r["formula"] else _("NO")] for k, r in result.items()])
        steps = -(-n // T)  # tile steps along K: the last one partly empty where T does not divide N
        why = f"T = {T}" if n % T == 0 else _("N / ⌈N/T⌉ = {n}/{steps}: T = {T} leaves part-empty edge tiles")
        ratio = result["naive"]["measured"] / result["tiled"]["measured"]
        print(_("naive / tiled = {ratio:g} ({why})").format(ratio=ratio, why=why.format(n=n, steps=steps, T=T)))
    return OK if all(r["measured"] == r["formula"] for r in result.values()) else MISMATCH


def _bench(args):
    import matplotlib
    matplotlib.use("Agg")
    from .core.launch import resolve, validate_tile
    from .data import write_rows
    from .experiments import bench
    from .notebook import plots, table
    out = out_folder(args.out)
    args.n = args.n or (SIM_NS if SIMULATOR else GPU_NS)
    args.tile = args.tile or (SIM_TILES if SIMULATOR else GPU_TILES)
    for t in args.tile:
        validate_tile(t)
    for name in args.kernels:
        resolve(name)
    fair = not SIMULATOR if args.fair is None else args.fair
    if SIMULATOR:
        seconds = bench.simulator_seconds(args.n, args.tile, args.warmup, args.repeats, args.kernels, fair)
        _simulator_forecast(seconds, "this sweep", "use sizes up to 64 (the default is --n "
                            f"{' '.join(map(str, SIM_NS))} --tile {' '.join(map(str, SIM_TILES))})", args.force)
    out.mkdir(parents=True, exist_ok=True)  # before the sweep: a place that cannot be written fails at once
    rows = bench.run(args.n, args.tile, args.warmup, args.repeats, cublas=not args.no_cublas,
                     progress=not args.quiet, kernels=args.kernels, fair=fair)
    write_rows(rows, out / "bench.csv", bench.FIELDS)
    speed = not SIMULATOR  # the simulator's TFLOP/s of Python threads round to 0: it shows milliseconds
    ax = plots.bench_plot(rows, f"{rows[0]['device']} ({rows[0]['clock']})", metric="tflops" if speed else "median_ms")
    ax.figure.savefig(out / "bench.png", dpi=120, bbox_inches="tight")
    table(["kernel", "N", "T", "median ms", *["TFLOP/s", "GB/s"] * speed, "clock"],
          [[r["kernel"], r["N"], r["tile"] or "", f"{r['median_ms']:.3f}",
            *[f"{r['tflops']:.3f}", f"{r['gbps']:.1f}"] * speed, r["clock"]] for r in rows])
    print(f"wrote {out / 'bench.csv'} and {out / 'bench.png'}")
    return OK


def _shape(text):
    parts = text.lower().replace("×", "x").split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r}: write a product as MxKxN, e.g. 1024x8192x1024")
    return tuple(int(p) for p in parts)


def _tune(args):
    from .core.launch import resolve
    from .data import stamp, write_rows
    from .experiments import bench, tune
    from .notebook import table
    squares = args.n or ([] if args.shape else TUNE_NS)  # both options: both tuned
    out, shapes = out_folder(args.out), (args.shape or []) + [(n, n, n) for n in squares]
    for name in args.kernels or []:
        if name == "best":
            raise ValueError(_("--kernels best: tune measures the kernels that `best` chooses among; name those"))
        resolve(name)
    if SIMULATOR:
        print("CUDA simulator: tune times Python, not a GPU; its choices steer `best` on the simulator only",
              file=sys.stderr)
        sizes = [(M * K * N) ** (1 / 3) for M, K, N in shapes]  # a product's work, as a cube's side
        seconds = bench.simulator_seconds(sizes, [], 2, 11, args.kernels or tune.CANDIDATES, naive_tiles=())
        _simulator_forecast(seconds, "this tuning", "use sizes up to 64 (e.g. --shape 64x64x64)", args.force)
    out.mkdir(parents=True, exist_ok=True)  # before the first shape class: a place that cannot be written fails at once

    def saved(rows):  # after every shape class: a tune stopped later keeps the classes before
        write_rows([{**r, **stamp()} for r in rows], out / "tune.csv", list(rows[0]) + list(stamp()))
    rows = tune.run(shapes, args.kernels, saved=saved)
    table(["M×K×N", "kernel", "TFLOP/s", "% cuBLAS", "rel err", "chosen"],
          [[f"{r['M']}×{r['K']}×{r['N']}", r["kernel"], f"{r['tflops']:.1f}", formatted(r["pct_cublas"], ".1f"),
            f"{r['rel_err']:.1e}", "✓" if r["chosen"] else ""] for r in rows])
    print(f"wrote {out / 'tune.csv'}; the choices are in {tune.cache_path()}")
    return OK


def formatted(value, spec):
    return "" if value in ("", None) else format(value, spec)


def _takeaways(args):
    import matplotlib
    matplotlib.use("Agg")
    from .notebook import takeaways
    for path in takeaways.write(out_folder(args.out)):
        print(f"wrote {path}")
    return OK


def _lab(argv):
    from .notebook import lab
    return lab.start(*lab.parse(lab.parser(Parser), argv))


HANDLERS = {"info": _info, "count": _count, "bench": _bench, "tune": _tune, "takeaways": _takeaways, "lab": _lab}


# --- options ---------------------------------------------------------------------------------------
class Help(argparse.ArgumentDefaultsHelpFormatter):
    """Show defaults, except where there is none to show (flags, and values chosen by backend)."""

    def _get_help_string(self, action):
        return action.help if action.default in (None, False) else super()._get_help_string(action)


def whole_arg(name, least=1):
    """An argparse type: a whole number of at least `least`, checked where every size is (rules.whole)."""
    def parse(text):
        with contextlib.suppress(ValueError):  # not a number: whole() says so
            text = int(text)
        try:
            return whole(name, text, least)
        except ValueError as error:  # argparse shows an ArgumentTypeError's own words
            raise argparse.ArgumentTypeError(str(error)) from None
    return parse


def kernels_option(p, help, default=None):
    """--kernels NAME...; repeated, it keeps every name."""
    p.add_argument("--kernels", nargs="+", action="extend", default=default, metavar="NAME", help=help)


def version():
    """The version pip recorded; on PYTHONPATH (pip never ran), the clone's pyproject's."""
    import tomllib
    from importlib import metadata
    with contextlib.suppress(metadata.PackageNotFoundError):
        return metadata.version("tiledlab")
    return tomllib.loads((pathlib.Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]["version"]


def add_command(sub, name, help, description):
    return sub.add_parser(name, help=help, formatter_class=Help, description=description)


def parser():
    top = Parser(prog="python -m tiledlab", description=__doc__.split("\n\n")[0], epilog=EPILOG,
                 formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--version", action="version", version=f"tiledlab {version()}")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("lab", help="copy notebooks/ into a git-ignored working copy (my-notebooks/) and open it in "
                               "JupyterLab; `lab --help` for its options")
    add_command(sub, "info", "backend, device and versions", "Say which backend runs (a GPU or the CUDA simulator), "
                "the device, and the versions of numba and numpy.")

    p = add_command(sub, "count", "measured vs formula global loads, naive and tiled", "Run naive and tiled on N×N "
                    "inputs with counting on and compare each kernel's measured global loads with the formula (2N³ "
                    "and 2N³/T). Refuses an N whose counting buffers do not fit in memory; on the simulator, forecasts "
                    f"its time and refuses counts over {SIM_LIMIT_S} s unless --force.")
    p.add_argument("--n", type=whole_arg("N"), default=32, help="matrix size N (N×N inputs)")
    p.add_argument("--tile", type=int, default=8, help="tile width T (1 to 32)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--force", action="store_true", help="run a long simulator count anyway")

    p = add_command(sub, "bench", "time naive, tiled (and cuBLAS) over sizes; write bench.csv, bench.png", "Time "
                    "naive, tiled, the fair pair (naive_unsigned, tiled_unsigned: the same with unsigned indices) and "
                    "(on a GPU with CuPy) cuBLAS over sizes and tile widths, all back to back (samples of at least 2 "
                    "ms). Defaults: --n 1024 2048 --tile 8 16 32 and --fair on a GPU, --n 16 32 --tile 4 8 and "
                    f"--no-fair on the simulator, which forecasts its time and refuses sweeps over {SIM_LIMIT_S} s "
                    "unless --force.")
    p.add_argument("--n", type=whole_arg("N"), nargs="+", help="matrix sizes N (default: by backend, see above)")
    p.add_argument("--tile", type=int, nargs="+", help="tile widths T, 1 to 32 (default: by backend, see above)")
    p.add_argument("--out", default="bench-out", help="folder for bench.csv and bench.png")
    p.add_argument("--repeats", type=whole_arg("repeats"), default=10, help="timed launches per point")
    p.add_argument("--warmup", type=whole_arg("warm-up launches", 0), default=2, help="untimed launches first")
    kernels_option(p, "also time these kernels by name, at their own constants (e.g. regtile_2d best)", [])
    p.add_argument("--fair", action=argparse.BooleanOptionalAction, default=None,
                   help="also time naive_unsigned and tiled_unsigned like naive and tiled (default: on a GPU)")
    p.add_argument("--no-cublas", action="store_true", help="skip cuBLAS even when CuPy is installed")
    p.add_argument("--force", action="store_true", help="run a long simulator sweep anyway")
    p.add_argument("--quiet", action="store_true", help="no progress bar")

    p = add_command(sub, "tune", "measure the candidate kernels at your sizes on this GPU; `best` then runs the "
                    "fastest", "Check and time every candidate kernel this card can run at each shape, beside cuBLAS, "
                    "and keep the fastest correct one per card and shape class (M, K, N rounded up to powers of two, "
                    "marked where the block tiles leave an edge) in a cache that matmul(A, B, \"best\") reads; "
                    "DIR/tune.csv lists every candidate timed. Run it once per GPU, for the sizes you multiply. On the "
                    f"simulator, forecasts its time and refuses tunings over {SIM_LIMIT_S} s unless --force.")
    p.add_argument("--shape", type=_shape, nargs="+", help="M×K×N products to tune for, e.g. 4096x4096x4096 "
                   "1000x1000x1000")
    p.add_argument("--n", type=whole_arg("N"), nargs="+", help="square sizes N (default without --shape: "
                   f"{' '.join(map(str, TUNE_NS))})")
    kernels_option(p, "the candidates (names of the registry; by default tune.CANDIDATES)")
    p.add_argument("--out", default="tune-out", help="folder for tune.csv")
    p.add_argument("--force", action="store_true", help="run a long simulator tuning anyway")

    add_command(sub, "takeaways", "one slide-ready PNG per notebook", "Draw each notebook's takeaway figure (16:9, "
                "large fonts) from small live counts and the committed H200 data, and save them as PNG files."
                ).add_argument("--out", default="takeaways", help="folder for the PNG files")
    return top
