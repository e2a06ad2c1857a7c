"""GPU experiments, each `run(...) -> rows` (a list of dicts): `device` (the card's properties), `bench` (naive,
tiled and cuBLAS over sizes), `races` (a barrier removed), `tune` (the candidates of "best" on this card); `profile`
reads Nsight Compute's committed counters. They time with `timing` and launch through tiledlab.core.launch.prepare;
the maintainers' measurements behind the committed data live in tools/measure/."""
from ..backend import SIMULATOR


class Unavailable(RuntimeError):
    """This experiment cannot run here: it needs a real GPU, or a tool that is not installed."""


def require_gpu(what):
    if SIMULATOR:
        raise Unavailable(f"{what} needs a real GPU: the simulator has no caches, warps or clocks to measure")
