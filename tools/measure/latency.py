"""Latency of one dependent load from shared memory, L1, L2 and DRAM: a one-thread pointer chase.

Each step loads the index of the next step, so no two loads overlap and the time per step is the
latency of one load. Three rules keep every row honest:

* every timed launch starts at a fresh point of the ring (`fresh_starts`): a DRAM row never re-walks
  lines that an earlier launch left in L2, which is what made the old "2 GiB" row an L2 hit;
* cache rows walk their whole ring once first (warm); DRAM rows never do;
* each row says which bytes its timed paths touched (`walk`, `footprint`) and what fraction of them
  no earlier launch had touched; a simulator test checks both against the loads the kernel made.

The ring holds unsigned indices: with a signed index numba adds a negative-index fix-up (compare,
two selects, add, sign extension) to every step, which the int32 rows show costs ≈ 10 cycles.

A chase through an index pays, each step, for the instructions that turn the loaded index into the next
address (an add to the table's base, a shift) as well as for the load: they wait for the load and cannot
overlap it. The BARE row leaves them out: its table holds shared-memory addresses, and each step is one
`ld.shared.u32 a, [a]` (inline PTX), so its cycles are one shared load's alone (the second article's
"about 20 cycles" is of that). On the simulator there is no PTX: `ld_shared` reads the table at a / 4.
"""
import numpy as np
from numba import cuda, int32, uint32

from tiledlab.backend import SIMULATOR
from tiledlab.core import build
from tiledlab.experiments.timing import time_launch

from .facts import device_facts

LINE_BYTES = 128  # one step per 128-byte line, so no step hits the line of the step before
LINE_WORDS = LINE_BYTES // 4
SHARED_WORDS = 4096  # 16 KiB chased in shared memory
INDEX = uint32  # element type of the shared copy of the ring; rebound for the int32 rows


@cuda.jit
def chase(nxt, start, steps, out):
    j = start
    for _ in range(steps):
        j = nxt[j]  # the only work of a step: one load whose address is the last load's value
    out[0] = j


@cuda.jit
def chase_shared(nxt, start, steps, out):
    s = cuda.shared.array(SHARED_WORDS, INDEX)
    for i in range(SHARED_WORDS):
        s[i] = nxt[i]
    cuda.syncthreads()  # the table must be complete before the chase reads it
    j = start
    for _ in range(steps):
        j = s[j]
    out[0] = j


def _shared_words_sim():
    """The simulator's shared_address (the table starts at 0) and ld_shared (the word at a / 4)."""
    return (lambda table: uint32(0)), (lambda table, a: uint32(table[a // 4]))


def _shared_words_gpu():
    """(shared_address(table), ld_shared(table, a)): the 32-bit shared-window address of a shared array, and
    one `ld.shared.u32` of the word at address a (an intrinsic emitting inline PTX, as tiledlab.core.ptx's)."""
    from llvmlite import ir
    from numba.cuda import types
    from numba.cuda.extending import intrinsic
    i32 = ir.IntType(32)

    @intrinsic
    def shared_address(typingctx, table):
        def codegen(context, builder, sig, args):
            data = context.make_array(sig.args[0])(context, builder, value=args[0]).data
            return builder.ptrtoint(builder.addrspacecast(data, ir.PointerType(data.type.pointee, addrspace=3)), i32)
        return types.uint32(table), codegen

    @intrinsic
    def ld_shared(typingctx, table, a):
        def codegen(context, builder, sig, args):
            load = ir.InlineAsm(ir.FunctionType(i32, [i32]), "ld.shared.u32 $0, [$1];", "=r,r", side_effect=True)
            return builder.call(load, [args[1]])
        return types.uint32(table, types.uint32), codegen

    return shared_address, ld_shared


shared_address, ld_shared = _shared_words_sim() if SIMULATOR else _shared_words_gpu()
BARE = "shared memory (bare ld.shared)"  # the row of chase_shared_bare


@cuda.jit
def chase_shared_bare(nxt, start, steps, out):
    s = cuda.shared.array(SHARED_WORDS, uint32)
    base = shared_address(s)
    for i in range(SHARED_WORDS):
        s[i] = base + uint32(4) * nxt[i]  # each slot holds the address of the next: a step computes nothing
    cuda.syncthreads()  # the table must be complete before the chase reads it
    a = uint32(base + uint32(4) * start)
    for _ in range(steps):
        a = ld_shared(s, a)  # the only work of a step: one shared load whose address is the last one's value
    out[0] = (a - base) // uint32(4)


def shared_kernel(dtype):
    """chase_shared with its shared table of `dtype` (uint32 or int32), through the one builder."""
    index = uint32 if np.dtype(dtype) == np.uint32 else int32
    return build.from_function(chase_shared.py_func, {"INDEX": index})


def ring(words, stride, dtype=np.uint32, seed=0):
    """(nxt, order): a random cycle through the `words // stride` slots `stride` words apart.

    nxt[slot] is the slot after `slot`; `order` lists the slots in the order the chase visits them."""
    order = (np.random.default_rng(seed).permutation(words // stride) * stride).astype(dtype)
    nxt = np.zeros(words, dtype)
    nxt[order] = np.roll(order, -1)
    return nxt, order


def walk(nxt, start, steps):
    """The indices a chase of `steps` loads from `start` reads, in order, by following nxt on the host."""
    nxt = np.asarray(nxt).view(np.ndarray)  # a plain view: reading it here is not a kernel load
    path = np.empty(steps, np.int64)
    j = int(start)
    for i in range(steps):
        path[i] = j
        j = int(nxt[j])
    return path


def fresh_starts(order, steps, launches, rng):
    """Start slots for `launches` chases of `steps`: consecutive stretches of the cycle from a random
    point, so no launch loads a slot an earlier one loaded (while launches × steps ≤ len(order))."""
    first = int(rng.integers(len(order)))
    return [int(order[(first + k * steps) % len(order)]) for k in range(launches)]


def footprint(path, unit_words):
    """Distinct units (128-byte lines, or 4-byte words in shared memory) a path touched."""
    return np.unique(np.asarray(path) // unit_words)


def measure_level(name, nxt, order, steps=20000, launches=5, warm=False, shared=False, seed=1):
    """One row: median ns per dependent load over `launches` timed chases, each from a fresh start.

    Cold rows (warm=False) assert that the paths fit the ring without overlapping, so every line a
    timed launch loads is one no launch before it loaded."""
    kernel = chase_shared_bare if shared == "bare" else shared_kernel(nxt.dtype) if shared else chase
    unit = 1 if shared else LINE_WORDS
    if not warm and launches * steps > len(order):
        raise ValueError(f"{launches} cold chases of {steps} steps need {launches * steps} slots; ring has {len(order)}")
    scalar = nxt.dtype.type
    d_nxt, out = cuda.to_device(nxt), cuda.device_array(1, nxt.dtype)
    seen = set()
    if warm:  # one walk round the whole ring puts it in the cache being measured
        kernel[1, 1](d_nxt, scalar(order[0]), int32(len(order)), out)
        seen.update(footprint(walk(nxt, order[0], len(order)), unit).tolist())
    starts = fresh_starts(order, steps, launches, np.random.default_rng(seed))
    # launch cost: a chase of zero steps (it loads nothing, so it warms nothing)
    short = time_launch(lambda: kernel[1, 1](d_nxt, scalar(starts[0]), int32(0), out), 1, launches).median_ms
    long_ms, new, touched, per_launch = [], [], set(), []
    for s in starts:
        path = walk(nxt, s, steps)
        units = set(footprint(path, unit).tolist())
        new.append(len(units - seen) / len(units))
        seen |= units
        touched |= units
        per_launch.append(len(units))
        long_ms.append(time_launch(lambda: kernel[1, 1](d_nxt, scalar(s), int32(steps), out), 0, 1).median_ms)
        end = int(out.copy_to_host()[0])
        if end != int(nxt.view(np.ndarray)[path[-1]]):
            raise RuntimeError(f"{name}: the chase from {s} ended at {end}, not where its path ends")
    ns = (np.array(long_ms) - short) * 1e6 / steps
    unit_bytes = unit * 4
    return {"level": name, "index": nxt.dtype.name, "ring_bytes": nxt.nbytes,
            "path_bytes": int(np.median(per_launch)) * unit_bytes, "timed_bytes": len(touched) * unit_bytes,
            "new_fraction": float(np.mean(new)), "warm": warm, "steps": steps, "launches": launches,
            "ns_per_load": float(np.median(ns)), "ns_min": float(ns.min()), "ns_max": float(ns.max())}


def cases(l2_bytes, dtype=np.uint32):
    """(row name, ring words, stride words, warm, shared: True, "bare" or False) per level, the bare shared
    load last; the L2 ring is a quarter of L2."""
    l2_words = l2_bytes // 4 // 4
    return [("shared memory", SHARED_WORDS, 1, True, True),
            ("L1 (16 KiB ring)", 4096, LINE_WORDS, True, False),
            (f"L2 (ring = L2/4 = {l2_bytes / 4 / 2**20:.1f} MiB)", l2_words, LINE_WORDS, True, False),
            ("DRAM (256 MiB ring, cold)", 64 << 20, LINE_WORDS, False, False),
            ("DRAM (2 GiB ring, cold)", 512 << 20, LINE_WORDS, False, False),
            (BARE, SHARED_WORDS, 1, True, "bare")]


def run(steps=20000, launches=5, signed_rows=True, facts=None, levels=None):
    """Rows for every level (uint32 ring), plus shared and L1 with an int32 ring for comparison.
    `facts` (tools.measure.facts.Facts: its SM clock and L2 size) and `levels` (as `cases`
    returns) replace the device's."""
    facts = facts or device_facts("latency")
    mhz, l2 = facts.sm_clock_mhz, facts.l2_bytes
    levels = levels or cases(l2)
    jobs = [(case, np.uint32) for case in levels]
    if signed_rows:
        jobs += [(case, np.int32) for case in levels[:2]]
    rows = []
    for (name, words, stride, warm, shared), dtype in jobs:
        if not warm and words * 4 < 4 * l2:
            raise ValueError(f"{name}: a cold ring must be ≥ 4 × L2 ({l2} bytes)")
        nxt, order = ring(words, stride, dtype)
        row = measure_level(name, nxt, order, steps, launches, warm, shared)
        row.update(cycles=row["ns_per_load"] * mhz / 1000, sm_clock_mhz=mhz, l2_bytes=l2)
        rows.append(row)
        del nxt, order
    return rows
