"""The lesson core: the kernels (the lesson's two in `kernels`, register-tiled ones in `regtile` and
`unrolled`, all by name in `registry`), how each covers C (`geometry`), the formulas they are checked
against, and `matmul`, which validates its inputs and launches a kernel through the one launch path
(`launch.prepare`)."""
from .geometry import launch_geometry
from .kernels import naive, tiled
from .launch import matmul, prepare
from .registry import KERNELS
from .source import specialize

__all__ = ["KERNELS", "naive", "tiled", "matmul", "prepare", "specialize", "launch_geometry"]
