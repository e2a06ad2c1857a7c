"""GPU experiments, each `run(...) -> rows` (dicts): `device`, `bench`, `races`, `tune`, timed with `timing` and
launched through core.launch.prepare; `profile` reads Nsight Compute's committed counters (tools/measure/ took them)."""
from ..backend import SIMULATOR


class Unavailable(RuntimeError):
    """This experiment cannot run here: it needs a real GPU, or a tool that is not installed."""


def require_gpu(what):
    if SIMULATOR:
        raise Unavailable(f"{what} needs a real GPU: the simulator has no caches, warps or clocks to measure")
