"""The lesson core: the kernels (`kernels`, `regtile`, `unrolled`, by name in `registry`), what is known about one
(`kernel.Kernel`), the card (`card`), what "best" means (`best`), the one builder (`build`), the kernel contract
(`contract`), the formulas, and `matmul`, launched through the one launch path (`launch.prepare`)."""
from .kernel import Kernel, launch_geometry
from .kernels import naive, tiled
from .launch import matmul, prepare, specialize
from .registry import KERNELS
from .rules import Rule

__all__ = ["KERNELS", "Kernel", "Rule", "naive", "tiled", "matmul", "prepare", "specialize", "launch_geometry"]
