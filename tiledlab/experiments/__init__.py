"""GPU experiments a student or teacher can run. Each module measures one thing and exposes `run(...) -> rows`
(a list of dicts): `device` (the card's properties), `bench` (naive, tiled and cuBLAS over sizes), `races` (a barrier removed) and `tune` (the candidates
of "best" on this card); `profile` reads Nsight Compute's committed counters (what binds a kernel). The
maintainers' measurements behind the committed data (the register-tiling ladder, SASS, Nsight Compute,
latency, peaks, the effects of coalescing and bank conflicts, racecheck) live in tools/measure/.
All of them launch kernels through tiledlab.core.launch.prepare, the one launch path.
"""
from ..backend import SIMULATOR


class Unavailable(RuntimeError):
    """This experiment cannot run here: it needs a real GPU, or a tool that is not installed."""


def require_gpu(what):
    if SIMULATOR:
        raise Unavailable(f"{what} needs a real GPU: the simulator has no caches, warps or clocks to measure")
