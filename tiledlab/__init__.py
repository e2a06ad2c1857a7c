"""tiledlab: measure why shared-memory tiling cuts global-memory loads in matrix multiplication."""
from . import backend  # noqa: F401  first: it chooses GPU or simulator before numba.cuda is imported
from .backend import BACKEND, SIMULATOR, describe
from .kernels import naive, tiled
from .launch import matmul
from .source import specialize

__all__ = ["BACKEND", "SIMULATOR", "describe", "naive", "tiled", "matmul", "specialize"]
