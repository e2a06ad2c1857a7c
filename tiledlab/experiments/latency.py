"""Latency of one dependent load from shared memory, L1, L2 and DRAM: a single-thread pointer chase.

Each step's address is the value the previous step loaded, so no two loads overlap: the time per
step is the latency. The chase is timed with CUDA events at two lengths; the difference removes the
launch cost. Cycles use the SM clock the device reports as its maximum (see `clock_mhz`).
"""
import numpy as np
from numba import cuda, int32

from .timing import time_launch

SHARED_WORDS = 4096  # 16 KiB chased in shared memory
LINE_WORDS = 32  # one 128-byte line per step, so no step hits the line of the one before


@cuda.jit
def chase_global(nxt, steps, out):
    j = 0
    for _ in range(steps):
        j = nxt[j]
    out[0] = j


@cuda.jit
def chase_shared(nxt, steps, out):
    s = cuda.shared.array(SHARED_WORDS, int32)
    for i in range(SHARED_WORDS):
        s[i] = nxt[i]
    cuda.syncthreads()  # the table must be complete before the chase reads it
    j = 0
    for _ in range(steps):
        j = s[j]
    out[0] = j


def ring(words, stride, seed=0):
    """A random cycle through `words // stride` slots `stride` words apart: nxt[slot] = next slot."""
    slots = np.random.default_rng(seed).permutation(words // stride) * stride
    nxt = np.zeros(words, dtype=np.int32)
    nxt[slots] = np.roll(slots, -1)
    return nxt


def per_step_ns(kernel, nxt, steps=20000, repeats=5):
    d_nxt, out = cuda.to_device(nxt), cuda.device_array(1, np.int32)
    long = time_launch(lambda: kernel[1, 1](d_nxt, steps, out), 1, repeats).median_ms
    short = time_launch(lambda: kernel[1, 1](d_nxt, 0, out), 1, repeats).median_ms
    return (long - short) * 1e6 / steps


def clock_mhz():
    return cuda.get_current_device().CLOCK_RATE / 1000  # the attribute is in kHz


def run(steps=20000):
    """Rows: level, footprint in bytes, ns per dependent load, cycles at the reported SM clock."""
    mhz = clock_mhz()
    cases = [("shared memory", chase_shared, ring(SHARED_WORDS, 1)),
             ("L1 (16 KiB footprint)", chase_global, ring(4096, LINE_WORDS)),
             ("L2 (16 MiB footprint)", chase_global, ring(4 << 20, LINE_WORDS)),
             ("DRAM (2 GiB footprint)", chase_global, ring(512 << 20, LINE_WORDS))]
    rows = []
    for level, kernel, nxt in cases:
        ns = per_step_ns(kernel, nxt, steps)
        rows.append({"level": level, "footprint_bytes": nxt.nbytes, "ns_per_load": ns,
                     "cycles": ns * mhz / 1000, "sm_clock_mhz": mhz, "steps": steps})
    return rows
