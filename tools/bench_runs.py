"""bench.csv in several runs, for the lead to run on the H200: every run a separate process timing naive,
tiled, the fair pair (naive_unsigned, tiled_unsigned) and cuBLAS at N = 1024…8192, the naive kernels in
every block shape the tiled ones use (8×8, 16×16, 32×32), so that each speed-up of tiling has its baseline
in the same block shape and each claim its run-to-run spread. Writes OUT/bench.csv (a `run` column, one
row per run and point): copy it over tiledlab/data/h200/bench.csv. About 45 s of GPU per run.

    python3 tools/bench_runs.py --out "$OUT"                           # on the H200: 3 runs
    NUMBA_ENABLE_CUDASIM=1 python tools/bench_runs.py --n 8 --tile 4 --out /tmp/b  # a check on the simulator
"""
import argparse
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def options(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", required=True, help="folder for bench.csv")
    p.add_argument("--runs", type=int, default=3, help="separate processes, each timing every point once")
    p.add_argument("--n", type=int, nargs="+", default=[1024, 2048, 4096, 8192])
    p.add_argument("--tile", type=int, nargs="+", default=[8, 16, 32], help="tile widths, and the naive block shapes")
    p.add_argument("--repeats", type=int, default=5, help="samples per point and run (each ≥ 2 ms of launches)")
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--run", type=int, help=argparse.SUPPRESS)  # set for the child process of one run
    return p.parse_args(argv)


def one_run(args):
    """This process's run: every point once, written to OUT/run<r>.csv."""
    from tiledlab.data import write_rows
    from tiledlab.experiments import bench
    rows = bench.run(args.n, args.tile, args.warmup, args.repeats, progress=False, fair=True,
                     naive_tiles=args.tile, run=args.run)
    write_rows(rows, pathlib.Path(args.out) / f"run{args.run}.csv", bench.FIELDS)


def main(argv=None):
    args = options(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.run:
        return one_run(args)
    point = ["--out", str(out.resolve()), "--n", *map(str, args.n), "--tile", *map(str, args.tile),
             "--repeats", str(args.repeats), "--warmup", str(args.warmup)]
    for r in range(1, args.runs + 1):
        start = time.perf_counter()
        subprocess.run([sys.executable, __file__, *point, "--run", str(r)], check=True, cwd=ROOT)
        print(f"run {r}: {time.perf_counter() - start:.0f} s", flush=True)
    import pandas as pd

    from tiledlab.data import read_csv, write_rows
    from tiledlab.experiments import bench
    files = [out / f"run{r}.csv" for r in range(1, args.runs + 1)]
    write_rows(pd.concat([read_csv(f) for f in files], ignore_index=True), out / "bench.csv", bench.FIELDS)
    for f in files:
        f.unlink()
    print(f"wrote {out / 'bench.csv'}: copy it to tiledlab/data/h200/bench.csv")


if __name__ == "__main__":
    sys.exit(main())
