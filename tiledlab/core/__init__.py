"""The lesson core: the kernels, the formulas they are checked against, and `matmul`, which validates
its inputs and launches a kernel through the one launch path (`launch.prepare`)."""
from .kernels import KERNELS, naive, tiled
from .launch import matmul, prepare
from .source import specialize

__all__ = ["KERNELS", "naive", "tiled", "matmul", "prepare", "specialize"]
