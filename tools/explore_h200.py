"""One run on the GPU: ~25 candidate kernels beside cuBLAS (torch, TF32 off) and Triton (FP32, autotuned), timed alike.

A maintainer's exploration, not a lesson: which block tiles, stages, BK and launch bounds of the generated kernels
are worth registry rungs. Compiling is the slow part (10–40 s a kernel), so WORKERS processes compile and check
the candidates side by side while this process autotunes Triton; then, one process at a time (the GPU to itself),
each times its candidates at every shape, after cuBLAS and Triton were timed at that shape. Every candidate is
first checked on an odd shape against float64 (C NaN-poisoned, so a skipped element shows) and at every timed
shape against cuBLAS. Writes $OUT/explore.csv (one row per kernel and shape, with registers, local memory, shared
memory and compile time) and prints a table, last. Stops timing further shapes when DEADLINE_S is near.

    python tools/explore_h200.py [--out DIR] [--shapes 4096 8192 1024 1000 1024x8192x1024] [--workers 12]

On the simulator (no GPU) it runs its own bookkeeping at tiny sizes: `--shapes 64 --workers 2 --only 3`.
"""
import argparse
import multiprocessing as mp
import os
import sys
import time

os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
DEADLINE_S = 225  # the whole run, compiling included, ends inside 4 minutes
COMPILE_S = 140  # a worker starts no compilation after this (the rest are reported as not compiled)
ODD = (200, 173, 301)  # no tile divides it; K not a multiple of 4: the plain path of every pipeline
AS, HY = "ASYNC", "HYBRID"  # unrolled.ASYNC: A and B copied by cp.async; HYBRID: B copied, A through registers
# (label, constants and options of unrolled.generate_source, launch bounds' min blocks); registry names as is
CANDIDATES = [
    ("d_128x64x32_8x8_s4", None, None), ("d_128x128x32_8x8_s3", None, None), ("d_64x128x16_8x8_s5", None, None),
    ("d_64x64x32_4x8_s4", None, None), ("w_128x256x8_8x16_warp16x2", None, None), ("a_64x128x16_8x8_s3", None, None),
    ("s_64x128x8_8x8_db", None, None),
    ("x_128x64x32_s3", dict(BM=128, BN=64, BK=32, TM=8, TN=8, stages=3, family=AS), None),
    ("x_128x64x16_s4", dict(BM=128, BN=64, BK=16, TM=8, TN=8, stages=4, family=AS), None),
    ("x_128x64x16_s5", dict(BM=128, BN=64, BK=16, TM=8, TN=8, stages=5, family=AS), None),
    ("x_128x64x16_s4_w8x4", dict(BM=128, BN=64, BK=16, TM=8, TN=8, stages=4, warp=(8, 4), family=AS), None),
    ("x_128x64x32_s4_w8x4", dict(BM=128, BN=64, BK=32, TM=8, TN=8, stages=4, warp=(8, 4), family=AS), None),
    ("x_64x128x16_s5_lb3", dict(BM=64, BN=128, BK=16, TM=8, TN=8, stages=5, family=AS), 3),
    ("x_64x128x16_s4_lb4", dict(BM=64, BN=128, BK=16, TM=8, TN=8, stages=4, family=AS), 4),
    ("x_64x128x16_s5_w4x8", dict(BM=64, BN=128, BK=16, TM=8, TN=8, stages=5, warp=(4, 8), family=AS), None),
    ("x_64x128x32_s4", dict(BM=64, BN=128, BK=32, TM=8, TN=8, stages=4, family=AS), None),
    ("x_64x128x16_s3_lb3", dict(BM=64, BN=128, BK=16, TM=8, TN=8, stages=3, family=AS), 3),
    ("x_128x128x16_s4", dict(BM=128, BN=128, BK=16, TM=8, TN=8, stages=4, family=AS), None),
    ("x_128x128x16_s4_w4x8", dict(BM=128, BN=128, BK=16, TM=8, TN=8, stages=4, warp=(4, 8), family=AS), None),
    ("x_128x128x32_s3_w4x8", dict(BM=128, BN=128, BK=32, TM=8, TN=8, stages=3, warp=(4, 8), family=AS), None),
    ("x_64x64x16_4x8_s5", dict(BM=64, BN=64, BK=16, TM=4, TN=8, stages=5, family=AS), None),
    ("x_64x64x32_4x8_s4_lb4", dict(BM=64, BN=64, BK=32, TM=4, TN=8, stages=4, family=AS), 4),
    ("x_128x256x16_8x16_s3_w4x8", dict(BM=128, BN=256, BK=16, TM=8, TN=16, stages=3, warp=(4, 8), family=AS), None),
    ("y_128x256x16_8x16_s3_w16x2", dict(BM=128, BN=256, BK=16, TM=8, TN=16, stages=3, warp=(16, 2), family=HY), None),
    ("y_128x128x16_8x8_s4_w4x8", dict(BM=128, BN=128, BK=16, TM=8, TN=8, stages=4, warp=(4, 8), family=HY), None),
]


def kernel_of(label, spec, min_blocks):
    from tiledlab.core import unrolled
    from tiledlab.core.generated import generated
    from tiledlab.core.registry import KERNELS
    if spec is None:
        return KERNELS[label]
    spec = dict(spec)
    family = getattr(unrolled, spec.pop("family"))
    return generated(label, **spec, **family, min_blocks=min_blocks)


def cost(spec):
    """Roughly what a candidate costs to compile: its unrolled multiply-adds per tile step."""
    from tiledlab.core.registry import KERNELS
    label, constants, _ = spec
    c = KERNELS[label].constants if constants is None else constants
    return c["BK"] * c["TM"] * c["TN"]


def shapes_of(texts):
    return [tuple(int(x) for x in t.split("x")) if "x" in t else (int(t),) * 3 for t in texts]


# --- a worker: compiles and checks its candidates, then times them when told -----------------------------------

def worker(conn, specs, started):
    import numpy as np
    from tiledlab.core.launch import prepare
    from tiledlab.core.operands import operands
    from tiledlab.experiments.bench import rel_err
    from tiledlab.experiments.sass import kernel_facts
    from tiledlab.experiments.timing import back_to_back
    kernels, facts = {}, {}
    A, B = operands(*ODD, seed=1)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    for label, spec, min_blocks in specs:
        t0 = time.perf_counter()
        if time.time() - started > COMPILE_S:
            facts[label] = {"error": f"not compiled: {COMPILE_S} s had passed"}
            continue
        try:
            kernels[label] = kernel_of(label, spec, min_blocks)
            launch = prepare(kernels[label], A, B)()
            err = rel_err(launch.result(), ref)  # C starts as NaN: an element never stored shows here
            facts[label] = {"compile_s": round(time.perf_counter() - t0, 1), "odd_rel_err": err,
                            "dynamic_bytes": getattr(launch.kernel, "nbytes", 0),
                            **kernel_facts(launch.kernel, sass=False)}
        except Exception as error:  # noqa: BLE001  an exploration: report it and go on
            facts[label] = {"error": f"{type(error).__name__}: {error}"[:200]}
            kernels.pop(label, None)
    conn.send(facts)
    while True:
        order = conn.recv()
        if order is None:
            return
        shape, ref_path = order
        A, B = operands(*shape, seed=0)
        ref = np.load(ref_path) if ref_path else A.astype(np.float64) @ B.astype(np.float64)
        rows = []
        for label, kernel in kernels.items():
            launch = prepare(kernel, A, B)
            timing = back_to_back(launch)
            rows.append({"kernel": label, "ms": timing.median_ms, "min_ms": timing.min_ms, "max_ms": timing.max_ms,
                         "tflops": timing.tflops(*shape), "rel_err": rel_err(launch.poison()().result(), ref)})
            del launch
        conn.send(rows)


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
    from tiledlab.experiments import triton_peer
    return not SIMULATOR and triton_peer.available()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.environ.get("OUT", "explore-out"))
    parser.add_argument("--shapes", nargs="+", default=["4096", "8192", "1024", "1000", "1024x8192x1024"])
    parser.add_argument("--workers", type=int, default=14)
    parser.add_argument("--only", type=int, help="the first ONLY candidates (a quick check)")
    args = parser.parse_args()
    started = time.perf_counter()
    specs = CANDIDATES[:args.only] if args.only else CANDIDATES
    groups = [[] for _ in range(min(args.workers, len(specs)))]
    for spec in sorted(specs, key=cost, reverse=True):  # the costliest first, each to the least loaded worker
        min(groups, key=lambda g: sum(map(cost, g))).append(spec)
    ctx = mp.get_context("spawn")
    pipes = []
    for group in groups:
        here, there = ctx.Pipe()
        ctx.Process(target=worker, args=(there, group, time.time()), daemon=True).start()
        pipes.append((here, group))

    import numpy as np
    from tiledlab.data import stamp, write_rows
    from tiledlab.core.operands import operands
    from tiledlab.experiments import triton_peer
    from tiledlab.experiments.bench import rel_err
    from tiledlab.experiments.timing import back_to_back
    shapes = shapes_of(args.shapes)
    peers = peers_available()
    tritons = {}
    if peers:  # autotune while the workers compile (their checks are tiny launches)
        for shape in shapes:
            tritons[shape] = triton_peer.Launch(*operands(*shape, seed=0))()
            tritons[shape].result()
    facts = {}
    for here, _ in pipes:
        facts.update(here.recv())
    compiled_s = time.perf_counter() - started
    print(f"compiled and checked {len(facts)} candidates in {compiled_s:.0f} s", file=sys.stderr, flush=True)
    rows, ref_path = [], os.path.join(os.environ.get("TMPDIR", "/tmp"), "explore_ref.npy")
    for shape in shapes:
        if time.perf_counter() - started > DEADLINE_S:
            print(f"skipping {shape}: the deadline is near", file=sys.stderr)
            continue
        A, B = operands(*shape, seed=0)
        cublas_ms, path = None, None
        if peers:
            blas = Torch(A, B)
            timing = back_to_back(blas)
            ref = blas().result()
            np.save(ref_path, ref)
            path, cublas_ms = ref_path, timing.median_ms
            rows.append({"shape": "x".join(map(str, shape)), "kernel": "cublas", "ms": timing.median_ms,
                         "min_ms": timing.min_ms, "max_ms": timing.max_ms, "tflops": timing.tflops(*shape),
                         "rel_err": 0.0, "config": "torch.matmul, TF32 off"})
            launch = tritons[shape]
            timing = back_to_back(launch)
            rows.append({"shape": rows[-1]["shape"], "kernel": "triton", "ms": timing.median_ms, "min_ms": timing.min_ms,
                         "max_ms": timing.max_ms, "tflops": timing.tflops(*shape),
                         "rel_err": rel_err(launch().result(), ref.astype(np.float64)), "config": launch.best_config})
        for here, _ in pipes:
            here.send((shape, path))
            rows += [{"shape": "x".join(map(str, shape)), **r, **facts[r["kernel"]]} for r in here.recv()]
        for r in rows:
            if r["shape"] == "x".join(map(str, shape)) and cublas_ms:
                r["pct_cublas"] = 100 * cublas_ms / r["ms"]
    for here, _ in pipes:
        here.send(None)
    failed = [{"kernel": k, **v} for k, v in facts.items() if "error" in v]
    os.makedirs(args.out, exist_ok=True)
    write_rows([{**r, **stamp()} for r in rows + failed], os.path.join(args.out, "explore.csv"))
    for f in failed:
        print(f"FAILED {f['kernel']}: {f['error']}")
    print(f"{'kernel':28} " + " ".join(f"{s:>15}" for s in dict.fromkeys(r["shape"] for r in rows)) + "   regs  odd err")
    for kernel in dict.fromkeys(r["kernel"] for r in rows):
        mine = {r["shape"]: r for r in rows if r["kernel"] == kernel}
        cells = [f"{m['tflops']:6.1f} {m.get('pct_cublas', 0):5.1f}%{'!' if m['rel_err'] > 1e-4 else ' '}"
                 for m in mine.values()]
        any_row = next(iter(mine.values()))
        print(f"{kernel:28} " + " ".join(f"{c:>15}" for c in cells)
              + f"   {any_row.get('regs', '')!s:>4}  {any_row.get('odd_rel_err', 0):.1e}")
    print(f"(TFLOP/s and % of cuBLAS in the same run; ! = rel. error over 1e-4; {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
