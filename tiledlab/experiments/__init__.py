"""GPU experiments. Each module measures one thing and exposes `run(...) -> rows` (a list of dicts):
`device` (the card's properties), `bench` (naive, tiled and cuBLAS over sizes), `latency` (one
dependent load per memory level), `peaks` (the roofs: FP32 rate, DRAM, L2 and shared bandwidth),
`effects` (coalescing, bank conflicts, the write-back of C), `races` (a barrier removed), `racecheck`
(compute-sanitizer), `profile` (Nsight Compute counters) and `ladder` (every rung of register tiling
and a search against cuBLAS, with what the compiler made of each: registers, and the SASS counted
by `sass`).
`measure` runs a set of them and writes one CSV each, every row stamped with device, versions and date.
All of them launch kernels through tiledlab.core.launch.prepare, the one launch path.
"""
from ..backend import SIMULATOR


class Unavailable(RuntimeError):
    """This experiment cannot run here: it needs a real GPU, or a tool that is not installed."""


def require_gpu(what):
    if SIMULATOR:
        raise Unavailable(f"{what} needs a real GPU: the simulator has no caches, warps or clocks to measure")
