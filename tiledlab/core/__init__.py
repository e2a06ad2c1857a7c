"""The lesson core: the kernels (the lesson's two in `kernels`, register-tiled ones in `regtile` and
generated ones from `unrolled`, all by name and family in `registry`), what tiledlab knows about a kernel
in one object (`kernel.Kernel`: code, constants, rules, geometry, needs), the card it runs on (`card`),
what "best" means for a card and a shape (`best`), the one builder (`build`), the kernel contract
(`contract`), the formulas they are checked against, and `matmul`, which validates its inputs and
launches a kernel through the one launch path (`launch.prepare`)."""
from .kernel import Kernel, launch_geometry
from .kernels import naive, tiled
from .launch import matmul, prepare, specialize
from .registry import KERNELS
from .rules import Rule

__all__ = ["KERNELS", "Kernel", "Rule", "naive", "tiled", "matmul", "prepare", "specialize", "launch_geometry"]
