"""One run on the GPU: our kernels beside cuBLAS (torch, TF32 off) and Triton (FP32, autotuned), timed alike.

A maintainer's tool, not a lesson. Compiling is the slow part (10–40 s a kernel), so --workers processes compile
and check the kernels side by side while this process autotunes Triton; then, one process at a time (the GPU to
itself), each times its kernels at every shape, after cuBLAS and Triton were timed at that shape. Every kernel is
first checked on two odd shapes against float64 (C NaN-poisoned, so a skipped element shows; one with K and N
multiples of 4, so the asynchronous copies run on partial tiles, one without, for the plain path) and at every
timed shape against cuBLAS. Writes DIR/same_run_LABEL.csv (one row per kernel and shape, with registers, local
and dynamic shared memory and compile time) after every shape, and prints a table, last. Begins no shape after
--deadline and no compilation after --compile-s.

    python tools/same_run.py --set explore --out DIR          # ~25 candidate tilings at 5 shapes
    python tools/same_run.py --set table --label 1 --out DIR  # issue 26's 12 shapes, TABLE and `best`
    python tools/same_run.py --set check --label check        # every registry kernel on the odd shapes, untimed
    python tools/same_run.py --summary DIR                    # DIR/shapes.csv: every run, median and spread
    python tools/same_run.py --set card --out DIR             # one card's table, in one process (below)
    python tools/same_run.py --linking                        # how a kernel reached the driver here (a GPU's)

--set card is a card's whole measurement in one call of under 9 minutes: the twelve shapes and OUTSIDE, cuBLAS,
Triton, `best` (the model's choice on this card, no tune cache) and every candidate of `best` and of TABLE, in
three interleaved rounds (every shape once per round, so a drift of the clock touches every point alike). It
writes DIR/same_run_card.csv (a row per round, kernel and shape, the card, its driver, torch and Triton in each),
DIR/shapes.csv (with each point's median and spread over the rounds: tiledlab/data/<card>/shapes.csv, installed by
tools/install_final.py) and DIR/verdicts.csv, and prints issue 38's goals as a verdict per shape.

On the simulator (no GPU) it runs its own bookkeeping at tiny sizes: `--shapes 64 --workers 2 --only 3 --odd 33x17x45`.
"""
import argparse
import functools
import glob
import json
import multiprocessing as mp
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the clone: tools.measure

os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
ODD = [(200, 173, 301), (201, 176, 300)]  # no tile divides them; K, N multiples of 4 or not (the plain path)
TABLE_SHAPES = ["1024", "2048", "4096", "8192", "16384x4096x256", "4097", "1000", "3000", "6000", "4096x1024x4096",
                "8192x1024x8192", "1024x8192x1024"]  # issue 26's table, M×K×N
# tune's candidates (each the fastest numba kernel at some shape of explore.csv) and the two dynamic rungs, each
# Triton's own tile at one size: notebook 7 compares them with Triton over three runs
TABLE = ["w_128x256x8_8x16_warp16x2", "a_64x128x16_8x8_s3", "s_64x128x8_8x8_db", "d_64x128x16_8x8_s5",
         "d_128x256x16_8x16_s3_w16x2"]
OUTSIDE = ["1536", "2500", "64x4096x4096", "4096x4096x64", "512"]  # issue 38's shapes outside the committed table
WITHIN, GOOD, GOAL_8192 = 3.0, 85.0, 95.0  # issue 38: % of the fastest candidate; % of cuBLAS where Triton is; 8192³
AS, HY = "ASYNC", "HYBRID"  # option presets of unrolled: A and B copied by cp.async; B copied, A through registers
# (label, constants and options of unrolled.generate_source, launch bounds' min blocks); registry names as is
# Chosen by their local SASS (tools/sass_local.py): none spills but x_64x128x16_s5_lb3 (16 bytes)
EXPLORE = [
    ("d_128x64x32_8x8_s4", dict(BM=128, BN=64, BK=32, TM=8, TN=8, stages=4, preset=AS), None),  # since dropped
    ("d_128x128x32_8x8_s3", dict(BM=128, BN=128, BK=32, TM=8, TN=8, stages=3, preset=AS), None),  # since dropped
    ("d_64x128x16_8x8_s5", None, None),
    ("d_64x64x32_4x8_s4", dict(BM=64, BN=64, BK=32, TM=4, TN=8, stages=4, preset=AS), None),  # since dropped
    ("w_128x256x8_8x16_warp16x2", None, None), ("a_64x128x16_8x8_s3", None, None), ("s_64x128x8_8x8_db", None, None),
    ("x_128x64x32_s3", dict(BM=128, BN=64, BK=32, TM=8, TN=8, stages=3, preset=AS), None),
    ("x_128x64x16_s4", dict(BM=128, BN=64, BK=16, TM=8, TN=8, stages=4, preset=AS), None),
    ("x_128x64x16_s5", dict(BM=128, BN=64, BK=16, TM=8, TN=8, stages=5, preset=AS), None),
    ("x_128x64x16_s3", dict(BM=128, BN=64, BK=16, TM=8, TN=8, stages=3, preset=AS), None),
    ("x_128x64x32_s4_w8x4", dict(BM=128, BN=64, BK=32, TM=8, TN=8, stages=4, warp=(8, 4), preset=AS), None),
    ("x_64x128x16_s5_lb3", dict(BM=64, BN=128, BK=16, TM=8, TN=8, stages=5, preset=AS), 3),
    ("x_64x128x16_s5_w4x8", dict(BM=64, BN=128, BK=16, TM=8, TN=8, stages=5, warp=(4, 8), preset=AS), None),
    ("x_64x128x32_s4", dict(BM=64, BN=128, BK=32, TM=8, TN=8, stages=4, preset=AS), None),
    ("x_64x128x16_s3_lb3", dict(BM=64, BN=128, BK=16, TM=8, TN=8, stages=3, preset=AS), 3),
    ("x_128x128x16_s4", dict(BM=128, BN=128, BK=16, TM=8, TN=8, stages=4, preset=AS), None),
    ("x_128x128x16_s4_w4x8", dict(BM=128, BN=128, BK=16, TM=8, TN=8, stages=4, warp=(4, 8), preset=AS), None),
    ("x_128x128x32_s3_w4x8", dict(BM=128, BN=128, BK=32, TM=8, TN=8, stages=3, warp=(4, 8), preset=AS), None),
    ("x_64x64x16_4x8_s5", dict(BM=64, BN=64, BK=16, TM=4, TN=8, stages=5, preset=AS), None),
    ("x_64x64x32_4x8_s3_lb4", dict(BM=64, BN=64, BK=32, TM=4, TN=8, stages=3, preset=AS), 4),
    ("x_128x256x16_8x16_s3_w4x8", dict(BM=128, BN=256, BK=16, TM=8, TN=16, stages=3, warp=(4, 8), preset=AS), None),
    ("y_128x256x16_8x16_s3_w16x2", dict(BM=128, BN=256, BK=16, TM=8, TN=16, stages=3, warp=(16, 2), preset=HY),
     None),  # the same kernel as the registry's d_128x256x16_8x16_s3_w16x2
    ("y_128x128x16_8x8_s4_w4x8", dict(BM=128, BN=128, BK=16, TM=8, TN=8, stages=4, warp=(4, 8), preset=HY), None),
]


def kernel_of(label, spec, min_blocks):
    from tiledlab.core import unrolled
    from tiledlab.core.generated import generated
    from tiledlab.core.registry import KERNELS
    if spec is None:
        return KERNELS[label]
    spec = dict(spec)
    preset = getattr(unrolled, spec.pop("preset"))
    return generated(label, **spec, **preset, min_blocks=min_blocks)


def cost(spec):
    """Roughly what a candidate costs to compile: its unrolled multiply-adds per tile step."""
    from tiledlab.core.registry import KERNELS
    label, constants = spec[:2]
    c = KERNELS[label].constants if constants is None else constants
    return c.get("BK", c.get("T", 16)) * c.get("TM", 1) * c.get("TN", 1)  # the lesson's kernels: T


def shapes_of(texts):
    return [tuple(int(x) for x in t.split("x")) if "x" in t else (int(t),) * 3 for t in texts]


# --- a worker: compiles and checks its candidates, then times them when told -----------------------------------

def worker(conn, specs, started, odd_shapes, compile_s):
    import numpy as np
    from tiledlab.core.launch import prepare
    from tiledlab.core.operands import operands
    from tiledlab.experiments.bench import rel_err
    from tools.measure.sass import kernel_facts
    from tiledlab.experiments.timing import back_to_back
    kernels, facts = {}, {}
    odd = [operands(*shape, seed=1) for shape in odd_shapes]
    refs = [A.astype(np.float64) @ B.astype(np.float64) for A, B in odd]
    for label, spec, min_blocks, timed in specs:
        t0 = time.perf_counter()
        if time.time() - started > compile_s:
            facts[label] = {"error": f"not compiled: {compile_s:g} s had passed"}
            continue
        try:
            kernel = kernel_of(label, spec, min_blocks)
            launches = [prepare(kernel, A, B)() for A, B in odd]
            # C starts as NaN: an element never stored shows in the error
            err = max(rel_err(launch.result(), ref) for launch, ref in zip(launches, refs))
            facts[label] = {"compile_s": round(time.perf_counter() - t0, 1), "odd_rel_err": err,
                            "dynamic_bytes": getattr(launches[0].kernel, "nbytes", 0),
                            **kernel_facts(launches[0].kernel, sass=False)}
            if timed:
                kernels[label] = kernel
        except Exception as error:  # noqa: BLE001  an exploration: report it and go on
            facts[label] = {"error": f"{type(error).__name__}: {error}"[:200]}
            kernels.pop(label, None)
    conn.send(facts)
    while True:
        order = conn.recv()
        if order is None:
            return
        shape, paths = order
        A, B, ref = (np.load(p) for p in paths) if kernels else (None, None, None)
        rows = []
        for label, kernel in kernels.items():
            launch = prepare(kernel, A, B)
            timing = back_to_back(launch)
            rows.append({"kernel": label, "ms": timing.median_ms, "min_ms": timing.min_ms, "max_ms": timing.max_ms,
                         "tflops": timing.tflops(*shape), "rel_err": checked(launch.poison()().result(), ref)})
            del launch
        conn.send(rows)


def checked(C, ref):
    """C's relative error against ref: on every row up to 4096 of them, else on every 16th (time)."""
    from tiledlab.experiments.bench import rel_err
    step = 1 if len(C) <= 4096 else 16
    return rel_err(C[::step], ref[::step].astype(np.float64))


# --- the peers, in this process --------------------------------------------------------------------------------

class Torch:
    """cuBLAS SGEMM through torch.matmul, TF32 off, C NaN-filled first."""

    def __init__(self, A, B):
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
        self.A, self.B = torch.from_numpy(A).cuda(), torch.from_numpy(B).cuda()
        self.C = torch.full((A.shape[0], B.shape[1]), float("nan"), device="cuda")
        self.torch = torch

    def __call__(self):
        self.torch.matmul(self.A, self.B, out=self.C)
        return self

    def result(self):
        self.torch.cuda.synchronize()
        return self.C.cpu().numpy()


def peers_available():
    from tiledlab.backend import SIMULATOR
    from tools.measure import triton_peer
    return not SIMULATOR and triton_peer.available()


def best_name(shape):
    """The registry kernel `matmul(A, B, "best")` runs at shape (M, K, N) on this card: core.best's choice (the
    tuned one, from the cache of `tune`, first)."""
    from tiledlab.core.best import choose
    return choose(*shape)


def jobs(args, shapes):
    """([(label, spec, min_blocks, timed)], {shape: best's kernel}): --set check: every registry kernel (or those of
    --kernels), checked on the odd shapes only; else the set's kernels and `best`'s choice at each shape, timed
    (--set card: every kernel `best` chooses among, and TABLE's)."""
    from tiledlab.core import best as best_rule
    from tiledlab.core.registry import KERNELS
    if args.set == "check":
        return [(name, None, None, False) for name in (args.kernels or [n for n in KERNELS if n != "best"])], {}
    names = args.kernels or (list(dict.fromkeys([*best_rule.CANDIDATES, *best_rule.SPLIT_K, *TABLE]))
                             if args.set == "card" else TABLE)
    chosen = EXPLORE if args.set == "explore" else [(name, None, None) for name in names]
    chosen = chosen[:args.only] if args.only else chosen
    best = {shape: best_name(shape) for shape in shapes}
    found = [(*spec, True) for spec in chosen]
    found += [(name, None, None, True) for name in dict.fromkeys(best.values()) if name not in {j[0] for j in found}]
    return found, best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--set", choices=("explore", "table", "check", "card"), default="explore")
    parser.add_argument("--kernels", nargs="+", help="with --set table or check: these registry kernels instead")
    parser.add_argument("--out", default=os.environ.get("OUT", "same-run-out"))
    parser.add_argument("--label", default="1", help="this run's name in the CSV (runs are separate processes)")
    parser.add_argument("--shapes", nargs="+", help="N or MxKxN (default: --set explore 4096 8192 1024 1000 "
                        "1024x8192x1024; table: issue 26's 12 shapes; check: none)")
    parser.add_argument("--workers", type=int, default=14)
    parser.add_argument("--deadline", type=float, help="seconds; no shape is begun after it (default 225; card: 450)")
    parser.add_argument("--rounds", type=int, help="times every shape is timed, interleaved (default 1; card: 3)")
    parser.add_argument("--only", type=int, help="the first ONLY kernels of the set (a quick check)")
    parser.add_argument("--odd", nargs="+", help="MxKxN shapes every kernel is checked on first (default: "
                        f"{' '.join('x'.join(map(str, s)) for s in ODD)})")
    parser.add_argument("--compile-s", type=float, default=140, help="seconds; no compilation is begun after it")
    parser.add_argument("--summary", metavar="DIR", help="only summarize DIR/same_run_*.csv into DIR/shapes.csv")
    parser.add_argument("--linking", action="store_true", help="only print how a kernel compiled here reached the "
                        "driver (linker, cubin or not, PTX ISA, the driver's CUDA) and exit 1 unless linked here")
    args = parser.parse_args()
    if args.summary:
        return summarize(args.summary)
    if args.linking:
        found = linked_kernel()
        print(json.dumps(found))
        return 0 if found["linker"] == "nvJitLink" and found["cubin"] and found["ran"] else 1
    started = time.perf_counter()
    card_run = args.set == "card"
    if card_run:  # `best` as the model chooses on this card: no tune cache of an earlier session steers it
        os.environ["TILEDLAB_CACHE_DIR"] = os.path.join(args.out, "no-tune-cache")
        args.label = "card"
    deadline, rounds = args.deadline or (450 if card_run else 225), args.rounds or (3 if card_run else 1)
    defaults = {"table": TABLE_SHAPES, "explore": ["4096", "8192", "1024", "1000", "1024x8192x1024"],
                "card": TABLE_SHAPES + OUTSIDE}
    shapes = [] if args.set == "check" else shapes_of(args.shapes or defaults[args.set])
    odd = shapes_of(args.odd) if args.odd else ODD
    specs, best = jobs(args, shapes)
    groups = [[] for _ in range(min(args.workers, len(specs)))]
    for spec in sorted(specs, key=cost, reverse=True):  # the costliest first, each to the least loaded worker
        min(groups, key=lambda g: sum(map(cost, g))).append(spec)
    ctx = mp.get_context("spawn")
    pipes = []
    for group in groups:
        here, there = ctx.Pipe()
        ctx.Process(target=worker, args=(there, group, time.time(), odd, args.compile_s), daemon=True).start()
        pipes.append(here)
    rows, facts = measure(pipes, shapes, best, started, deadline, lambda rows, facts: save(rows, facts, args), rounds)
    for here in pipes:
        here.send(None)
    report(rows, facts, args, started, odd)
    if card_run:
        from tiledlab.data import write_rows
        summarize(args.out)
        found = verdicts(rows)
        write_rows(found, os.path.join(args.out, "verdicts.csv"))
        print(verdict_table(found))


def measure(pipes, shapes, best, started, deadline, saved, rounds=1):
    """(rows, facts): cuBLAS, Triton and every worker's kernels timed at each shape, one process at a time, `rounds`
    times over the shapes (a row's `run` is its round when more than one); `saved(rows, facts)` after each shape (a
    run stopped from outside keeps what it measured)."""
    from tiledlab.core.operands import operands
    from tools.measure import triton_peer
    from tiledlab.experiments.timing import back_to_back
    peers, tritons = peers_available(), {}
    if peers:  # autotune while the workers compile (their checks are tiny launches)
        for shape in shapes:
            tritons[shape] = triton_peer.Launch(*operands(*shape, seed=0))()
            tritons[shape].result()
    facts = {}
    for here in pipes:
        facts.update(here.recv())
    print(f"compiled and checked {len(facts)} kernels in {time.perf_counter() - started:.0f} s", file=sys.stderr,
          flush=True)
    rows, tmp = [], os.environ.get("TMPDIR", "/tmp")
    paths = [os.path.join(tmp, f"same_run_{what}_{os.getpid()}.npy") for what in ("A", "B", "ref")]
    for round_, shape in ((r, s) for r in range(1, rounds + 1) for s in shapes):
        if time.perf_counter() - started > deadline:
            print(f"skipping {shape} of round {round_}: past the deadline", file=sys.stderr)
            continue
        name, here_rows = "x".join(map(str, shape)), []
        A, B = operands(*shape, seed=0)
        if peers:
            blas = Torch(A, B)
            timing = back_to_back(blas)
            ref = blas().result()
            here_rows.append({"kernel": "cublas", **timed(timing, shape), "rel_err": 0.0,
                              "config": "torch.matmul, TF32 off"})
            launch = tritons[shape]
            timing = back_to_back(launch)
            here_rows.append({"kernel": "triton", **timed(timing, shape), "config": launch.best_config,
                              "rel_err": checked(launch().result(), ref)})
        else:
            ref = A.astype(np.float64) @ B.astype(np.float64)
        for path, array in zip(paths, (A, B, ref)):
            np.save(path, array)
        for here in pipes:
            here.send((shape, paths))
            here_rows += [{**r, **facts[r["kernel"]]} for r in here.recv()]
        here_rows += [{**r, "kernel": "best", "config": r["kernel"]} for r in here_rows if r["kernel"] == best[shape]]
        cublas_ms = next((r["ms"] for r in here_rows if r["kernel"] == "cublas"), None)
        run = {"run": round_} if rounds > 1 else {}
        rows += [{**run, "shape": name, **r, "pct_cublas": 100 * cublas_ms / r["ms"] if cublas_ms else None}
                 for r in here_rows]
        saved(rows, facts)
    return rows, facts


def timed(timing, shape):
    return {"ms": timing.median_ms, "min_ms": timing.min_ms, "max_ms": timing.max_ms, "tflops": timing.tflops(*shape)}


def save(rows, facts, args):
    """DIR/same_run_LABEL.csv: the timed rows, then one row per kernel checked on the odd shapes."""
    from tiledlab.data import stamp, write_rows
    checked = [{"shape": "odd", "kernel": k, **v} for k, v in facts.items()]
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"same_run_{args.label}.csv")
    where = {**stamp(), **peer_versions()}
    write_rows([{"run": args.label, **r, **where} for r in rows + checked], path)
    return path


@functools.cache
def peer_versions():
    """The card (core.card's name for it), its driver, and torch's and Triton's versions, for every row."""
    import importlib.metadata as md
    import subprocess
    from tiledlab.core import card
    here = card.current()
    found = {"card": card.known_as(here) or here.name, "sms": here.sms}
    if not card.SIMULATOR:
        found.update({f"link_{k}": v for k, v in linked_kernel().items()})
    try:
        found["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                         capture_output=True, text=True, timeout=30).stdout.split("\n")[0].strip()
    except (OSError, subprocess.SubprocessError):
        found["driver"] = ""
    for name in ("torch", "triton"):
        try:
            found[name] = md.version(name)
        except md.PackageNotFoundError:
            found[name] = ""
    return found


def report(rows, facts, args, started, odd):
    failed = [{"kernel": k, **v} for k, v in facts.items() if "error" in v or v.get("odd_rel_err", 0) > 1e-5]
    path = save(rows, facts, args)
    for f in failed:
        print(f"FAILED {f['kernel']}: {f.get('error') or 'odd-shape error %.1e' % f['odd_rel_err']}")
    print(f"{len(facts) - len(failed)} of {len(facts)} kernels right on the odd shapes {odd}")
    shapes = list(dict.fromkeys(r["shape"] for r in rows))
    print(f"{'kernel':28} " + " ".join(f"{s:>15}" for s in shapes) + "   regs")
    for kernel in dict.fromkeys(r["kernel"] for r in rows):
        mine = {r["shape"]: r for r in rows if r["kernel"] == kernel}
        cells = [f"{mine[s]['tflops']:6.1f} {mine[s]['pct_cublas'] or 0:5.1f}%{'!' if mine[s]['rel_err'] > 1e-4 else ' '}"
                 if s in mine else "" for s in shapes]
        print(f"{kernel:28} " + " ".join(f"{c:>15}" for c in cells) + f"   {next(iter(mine.values())).get('regs', '')!s:>4}")
    print(f"(TFLOP/s, % of cuBLAS in the same run; ! = rel. error over 1e-4; {time.perf_counter() - started:.0f} s; "
          f"wrote {path})")


def summarize(folder):
    """DIR/shapes.csv: every timed row of every run, with the median, min and max % of cuBLAS of its (shape,
    kernel) over the runs and their spread (max - min, in points)."""
    import pandas as pd
    paths = sorted(glob.glob(os.path.join(folder, "same_run_*.csv")))
    runs = pd.concat([pd.read_csv(p) for p in paths]) if paths else pd.DataFrame({"shape": []})
    runs = runs[runs["shape"] != "odd"].copy()
    if runs.empty:
        print(f"no timed rows in {folder}/same_run_*.csv: nothing to summarize")
        return 1
    stats = runs.groupby(["shape", "kernel"])["pct_cublas"].agg(["median", "min", "max", "count"])
    stats["spread"] = stats["max"] - stats["min"]
    out = runs.join(stats.add_prefix("pct_"), on=["shape", "kernel"])
    out.to_csv(os.path.join(folder, "shapes.csv"), index=False)
    print(stats.round(1).to_string())



def linked_kernel():
    """On a GPU: how a kernel compiled and launched here reached the driver: {"linker": cuda.core's choice,
    "nvJitLink" (linked on this host: what tiledlab.backend.link_on_host sees to on Colab) or "driver" (the driver
    compiled the PTX), "cubin": whether what the driver loaded is an ELF cubin, "ptx_isa": the PTX version NVVM
    wrote, "driver_cuda": the driver's CUDA version, "ran": whether the kernel stored its value}."""
    import re
    import warnings

    from numba import cuda
    with warnings.catch_warnings():  # cuda.core's note that the driver will link, when it will: reported below
        warnings.simplefilter("ignore")
        from cuda.core import Linker

    @cuda.jit
    def one(a):
        a[0] = 1.0
    a = cuda.to_device(np.zeros(1, np.float32))
    one[1, 1](a)
    library = next(iter(one.overloads.values()))._codelibrary
    cubin = next(iter(library._cubin_cache.values()))
    ptx = next(iter(library._ptx_cache.values()))[0]
    return {"linker": str(Linker.which_backend()).replace("nvjitlink", "nvJitLink"),
            "cubin": bytes(getattr(cubin, "code", cubin))[:4] == b"\x7fELF",
            "ptx_isa": re.search(r"\.version (\S+)", ptx).group(1),
            "driver_cuda": "%d.%d" % cuda.cudadrv.driver.driver.get_version(), "ran": bool(a.copy_to_host()[0] == 1)}


def verdicts(rows):
    """Issue 38's goals at each shape, from the rounds' rows: `best` within WITHIN % of the fastest candidate (median
    times), ahead of Triton beyond the spread (its slowest round faster than Triton's fastest), at least GOOD % of
    cuBLAS where Triton reaches it, and 8192³ at GOAL_8192 % of cuBLAS."""
    import pandas as pd
    timed = pd.DataFrame([r for r in rows if r.get("ms") is not None])
    found = []
    for shape, g in timed.groupby("shape", sort=False):
        ms, pct = g.groupby("kernel")["ms"].median(), g.groupby("kernel")["pct_cublas"]
        ours = ms.drop(["cublas", "triton", "best"], errors="ignore")
        if "best" not in ms or ours.empty:
            continue
        fastest, chosen = ours.idxmin(), g[g["kernel"] == "best"]["config"].iloc[0]
        row = {"shape": shape, "best": chosen, "best_pct": pct.median().get("best"), "fastest": fastest,
               "fastest_pct": pct.median().get(fastest), "behind_fastest_pct": 100 * (ms["best"] / ms[fastest] - 1),
               "rounds": int(g[g["kernel"] == "best"].shape[0])}
        row["within"] = bool(row["behind_fastest_pct"] <= WITHIN)
        if "triton" in ms and pct.median().get("triton") is not None:
            lo, hi = pct.min(), pct.max()
            row["triton_pct"] = pct.median()["triton"]
            row["vs_triton"] = "ahead" if lo["best"] > hi["triton"] else "behind" if hi["best"] < lo["triton"] \
                else "within noise"
            row["good"] = None if row["triton_pct"] < GOOD else bool(row["best_pct"] >= GOOD)
        if shape == "8192x8192x8192" and row["best_pct"] is not None:
            row["goal_8192"] = bool(row["best_pct"] >= GOAL_8192)
        found.append(row)
    return found


def verdict_table(found):
    """The verdicts as lines a reader can check against the goals."""
    def mark(v):
        return "—" if v is None or v != v else "yes" if v is True else "NO" if v is False else str(v)
    lines = [f"{'M×K×N':16} {'best (its choice)':34} {'fastest candidate':34} {'≤3 %':>5} {'Triton':>7} "
             f"{'vs Triton':>13} {'≥85 %':>6}"]
    for r in found:
        lines.append(f"{r['shape']:16} {r['best_pct'] or 0:5.1f} {r['best'][:27]:28} {r['fastest_pct'] or 0:5.1f} "
                     f"{r['fastest'][:27]:28} {mark(r['within']):>5} {r.get('triton_pct') or 0:7.1f} "
                     f"{mark(r.get('vs_triton')):>13} {mark(r.get('good')):>6}"
                     + (f"   8192³ ≥ {GOAL_8192:g} %: {mark(r['goal_8192'])}" if "goal_8192" in r else ""))
    met = sum(bool(r["within"]) for r in found)
    ahead = sum(r.get("vs_triton") == "ahead" for r in found)
    lines.append(f"(% of cuBLAS, median of the rounds; best within {WITHIN:g} % of the fastest candidate at {met} of "
                 f"{len(found)} shapes, ahead of Triton beyond the spread at {ahead})")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
