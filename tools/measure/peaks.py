"""The roofs of a layered roofline, measured on the card: FP32 FMA rate, DRAM, L2 and shared-memory bandwidth.

* FP32: a kernel generated from source, `chains` independent FMA chains unrolled `unroll` times per
  trip of an int32 `while` loop, so loop overhead is 3 instructions per chains × unroll FFMAs. The
  FLOP count in the rate is read from the generated body (`fmas_per_trip`), not typed twice.
* DRAM: cudaMemcpy device-to-device (read + write), and `stream_read` over a buffer far above L2.
* L2: the same `stream_read` over a buffer of half (and a quarter of) the L2 size, read many times.
  Its loads are ld.global.cg (cached in L2, not L1), so no SM serves re-reads from its own L1.
* Shared memory: `shared_read`, every warp reading whole 32-word rows (one wavefront, 128 bytes).

Each kernel fills the card with exactly one wave of resident blocks (the occupancy calculator's
count), and is timed in batches of back-to-back launches, so Python's launch cost hides behind the
GPU's work. Datasheet figures come from device attributes: SM count, SM clock, and FP32 lanes per SM.
"""
import ast
import time

import numpy as np
from numba import cuda, float32, int32, uint32

from tiledlab.backend import SIMULATOR
from tiledlab.core import build
from tiledlab.experiments.timing import per_launch_ms

from .facts import device_facts

SHARED_BYTES_PER_CLOCK = 128  # per SM: 32 banks × 4 bytes, one wavefront per clock
THREADS = 256

# ---------------------------------------------------------------- FP32 FMA rate


def fma_source(chains, unroll):
    """Source of a kernel: `chains` independent FMA chains per thread, each advanced `unroll` times per
    trip of an int32 loop (`trips` trips). Every chain is summed into out[i], so none is dead code."""
    lines = ["def fma_peak(out, a, trips):",
             "    i = cuda.grid(1)",
             "    x0 = float32(i)"]
    lines += [f"    x{c} = x0 + float32({c})" for c in range(1, chains)]
    lines += ["    t = int32(0)",
              "    while t < trips:"]
    for _ in range(unroll):
        lines += [f"        x{c} = cuda.fma(x{c}, a, a)" for c in range(chains)]
    lines += ["        t = int32(t + int32(1))  # int32 + int32 is int64 in numba: cast back",
              "    out[i] = " + " + ".join(f"x{c}" for c in range(chains))]
    return "\n".join(lines) + "\n"


def fmas_per_trip(source):
    """cuda.fma calls in the loop body of generated source (what the FLOP count must be built from)."""
    loop = next(node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.While))
    return sum(isinstance(n, ast.Call) and ast.unparse(n.func) == "cuda.fma" for n in ast.walk(loop))


def fma_kernel(chains, unroll):
    """The FMA kernel for `fma_source(chains, unroll)`, compiled once through the one builder."""
    return build.from_source(fma_source(chains, unroll), "fma_peak", {"cuda": cuda, "float32": float32, "int32": int32})


def fma_flops(chains, unroll, trips, threads):
    """FLOP of one launch: 2 per FMA, FMAs counted in the kernel's own generated body."""
    return 2 * fmas_per_trip(fma_source(chains, unroll)) * trips * threads


# ---------------------------------------------------------------- bandwidth kernels

STREAM_UNROLL = 8  # 128-byte lines each warp has in flight per loop trip
SHARED_FLOATS = 2048  # 8 KiB of shared memory per block
SHARED_UNROLL = 8


def _load_l2(array, i):
    return array[i]


load_l2 = _load_l2 if SIMULATOR else cuda.ldcg  # ld.global.cg: cached in L2 only


@cuda.jit
def stream_read(x, passes, out):
    # Warp w reads chunks w, w + warps, ... of STREAM_UNROLL lines; lane l reads word l of each line.
    lane = uint32(cuda.threadIdx.x % 32)  # unsigned indices: no negative-index fix-up per load
    warp = uint32(cuda.grid(1) // 32)
    warps = uint32(cuda.gridsize(1) // 32)
    chunks = uint32(x.shape[0] // (32 * STREAM_UNROLL))
    acc = float32(0.0)
    for _ in range(passes):
        c = warp
        while c < chunks:
            base = c * uint32(32 * STREAM_UNROLL) + lane
            for u in range(STREAM_UNROLL):
                acc += load_l2(x, base + uint32(32 * u))
            c += warps
    out[cuda.grid(1)] = acc


@cuda.jit
def shared_read(out, passes):
    s = cuda.shared.array(SHARED_FLOATS, float32)
    t = cuda.threadIdx.x
    for i in range(t, SHARED_FLOATS, cuda.blockDim.x):
        s[i] = float32(i)
    cuda.syncthreads()  # the table must be complete before any warp reads it
    lane = uint32(t % 32)
    row = uint32((t // 32) * 32 * SHARED_UNROLL % SHARED_FLOATS)  # each warp starts at its own rows
    acc = float32(0.0)
    for _ in range(passes):
        for u in range(SHARED_UNROLL):
            acc += s[row + lane + uint32(32 * u)]  # word `lane` of a row: 32 lanes, 32 banks
        row = (row + uint32(32 * SHARED_UNROLL)) % uint32(SHARED_FLOATS)
    out[cuda.grid(1)] = acc


def stream_bytes(n, passes):
    """Bytes stream_read loads: whole chunks of 32 × STREAM_UNROLL floats, every pass."""
    return 4 * (n // (32 * STREAM_UNROLL)) * 32 * STREAM_UNROLL * passes


def shared_bytes(passes, blocks, threads=THREADS):
    """Bytes shared_read loads after its fill: per warp and pass, SHARED_UNROLL rows of 128 bytes."""
    return blocks * (threads // 32) * passes * SHARED_UNROLL * 128


# ---------------------------------------------------------------- launching and timing

FMA_SIG = "void(float32[::1], float32, int32)"
STREAM_SIG = "void(float32[::1], int32, float32[::1])"
SHARED_SIG = "void(float32[::1], int32)"


def compiled(kernel, sig):
    """`kernel` compiled for `sig` without a launch (a launch would show up in ncu's list): the
    compiled object, which knows its registers and occupancy (None on the simulator)."""
    return None if SIMULATOR else kernel.compile(sig)


def resident_blocks(binary, threads=THREADS):
    """Blocks that fit on the whole card at once: the occupancy calculator's blocks per SM × SMs."""
    return 2 if binary is None else binary.max_cooperative_grid_blocks(threads)


def spin(launch, seconds=0.3):
    """Run `launch` back to back for `seconds`, so the clocks have left their idle state."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        launch()
        cuda.synchronize()


def time_batch(launch, batch=10, repeats=5):
    """Median and best ms per launch over `repeats` batches of `batch` back-to-back launches."""
    samples = [per_launch_ms(launch, batch) for _ in range(repeats)]
    return float(np.median(samples)), float(np.min(samples))


def shared_datasheet_tbs(facts):
    """SMs × SHARED_BYTES_PER_CLOCK × SM clock: every SM serving one wavefront per clock."""
    return facts.sms * SHARED_BYTES_PER_CLOCK * facts.sm_clock_khz * 1e3 / 1e12


# ---------------------------------------------------------------- measurements (one launch setup each)


def fma_setup(chains, unroll, trips=4096):
    """(launch, FLOP per launch, kernel, blocks, binary): the FMA kernel, one full wave of blocks."""
    kernel = fma_kernel(chains, unroll)
    binary = compiled(kernel, FMA_SIG)
    blocks = resident_blocks(binary)
    out, a = cuda.device_array(blocks * THREADS, np.float32), np.float32(0.999)
    return (lambda: kernel[blocks, THREADS](out, a, int32(trips))), fma_flops(chains, unroll, trips, blocks * THREADS), \
        kernel, blocks, binary


def stream_setup(nbytes, passes):
    """(launch, bytes loaded per launch, blocks) for stream_read over a buffer of `nbytes`."""
    x = cuda.to_device(np.ones(nbytes // 4, np.float32))
    blocks = resident_blocks(compiled(stream_read, STREAM_SIG))
    out = cuda.device_array(blocks * THREADS, np.float32)
    return (lambda: stream_read[blocks, THREADS](x, int32(passes), out)), \
        stream_bytes(nbytes // 4, passes), blocks


def shared_setup(passes):
    """(launch, shared bytes loaded per launch, blocks) for shared_read."""
    blocks = resident_blocks(compiled(shared_read, SHARED_SIG))
    out = cuda.device_array(blocks * THREADS, np.float32)
    return (lambda: shared_read[blocks, THREADS](out, int32(passes))), shared_bytes(passes, blocks), blocks


def _timed(launch, seconds):
    spin(launch, seconds)
    return time_batch(launch)


def fma_row(chains, unroll, trips=4096, seconds=0.3):
    launch, flops, kernel, blocks, binary = fma_setup(chains, unroll, trips)
    ms, best = _timed(launch, seconds)
    return {"roof": f"FP32 FMA ({chains} chains x {unroll} unrolled)", "value": flops / (ms * 1e-3) / 1e12,
            "best": flops / (best * 1e-3) / 1e12, "unit": "TFLOP/s", "chains": chains, "unroll": unroll,
            "fmas_per_trip": fmas_per_trip(fma_source(chains, unroll)), "trips": trips, "blocks": blocks,
            "threads": THREADS, "registers": None if binary is None else binary.regs_per_thread,
            "flop_per_launch": flops, "median_ms": ms}


def memcpy_row(nbytes=2 << 30, seconds=0.1):
    n = nbytes // 4
    src, dst = cuda.to_device(np.ones(n, np.float32)), cuda.device_array(n, np.float32)
    ms, best = _timed(lambda: dst.copy_to_device(src), seconds)
    return {"roof": "DRAM copy (cudaMemcpy D2D, read+write)", "value": 2 * nbytes / (ms * 1e-3) / 1e12,
            "best": 2 * nbytes / (best * 1e-3) / 1e12, "unit": "TB/s", "buffer_bytes": nbytes, "median_ms": ms}


def stream_row(name, nbytes, passes, seconds=0.1):
    launch, moved, blocks = stream_setup(nbytes, passes)
    ms, best = _timed(launch, seconds)
    return {"roof": name, "value": moved / (ms * 1e-3) / 1e12, "best": moved / (best * 1e-3) / 1e12,
            "unit": "TB/s", "buffer_bytes": nbytes, "passes": passes, "blocks": blocks, "threads": THREADS,
            "bytes": moved, "median_ms": ms}


def shared_row(passes=4096, seconds=0.1):
    launch, moved, blocks = shared_setup(passes)
    ms, best = _timed(launch, seconds)
    return {"roof": "shared memory (32-bit loads, conflict-free)", "value": moved / (ms * 1e-3) / 1e12,
            "best": moved / (best * 1e-3) / 1e12, "unit": "TB/s", "passes": passes, "blocks": blocks,
            "threads": THREADS, "bytes": moved, "median_ms": ms}


FMA_SHAPES = ((8, 1), (8, 4), (16, 4), (16, 8))  # (chains, unroll): the first shows loop overhead
BEST_FMA = (16, 8)


def l2_buffers(l2_bytes, fractions=(2, 4)):
    """(fraction, bytes) of the L2 buffers: l2_bytes / fraction, rounded down to whole MiB (or KiB)."""
    unit = 1 << 20 if l2_bytes >= 16 << 20 else 1 << 10
    return [(f, l2_bytes // f // unit * unit) for f in fractions]


def run(fma_shapes=FMA_SHAPES, dram_bytes=1 << 30, l2_fractions=(2, 4), memcpy_bytes=2 << 30,
        trips=4096, shared_passes=4096, l2_traffic=2 << 30, seconds=0.3, facts=None):
    """Rows: each roof measured, with the datasheet figure beside it where one exists. `facts`
    (tools.measure.facts.Facts) replace the device's."""
    facts = facts or device_facts("peaks")
    rows = [{**fma_row(c, u, trips, seconds), "datasheet": facts.fp32_datasheet_tflops} for c, u in fma_shapes]
    if memcpy_bytes:
        rows.append({**memcpy_row(memcpy_bytes), "datasheet": facts.dram_datasheet_gbps / 1e3})
    rows.append({**stream_row(f"DRAM read (stream_read, {dram_bytes >> 20} MiB buffer)", dram_bytes, 1),
                 "datasheet": facts.dram_datasheet_gbps / 1e3})
    for f, nbytes in l2_buffers(facts.l2_bytes, l2_fractions):
        rows.append({**stream_row(f"L2 read (stream_read, buffer = L2/{f})", nbytes, max(1, l2_traffic // nbytes)),
                     "datasheet": ""})
    rows.append({**shared_row(shared_passes), "datasheet": shared_datasheet_tbs(facts)})
    for r in rows:
        r["pct_of_datasheet"] = 100 * r["value"] / r["datasheet"] if r["datasheet"] else ""
        r.update(sms=facts.sms, sm_clock_mhz=facts.sm_clock_mhz, l2_bytes=facts.l2_bytes)
    return rows
