"""tiledlab: measure why shared-memory tiling cuts global-memory loads in matrix multiplication.

Wings, bottom to top (a module imports only from its own wing or wings below; tests/test_layers.py reads the list):
  backend, simulator, i18n  which CUDA backend runs (a GPU or numba's simulator), a faster simulator, the language
  core                      the kernels (the lesson's, and notebook 7's register-tiled ones by name), the
                            card they run on, what "best" is, the formulas, and matmul() with its one launch path
  counting                  the counting lab: a kernel rewritten to count its loads, variants, exercise checks
  data                      measurements committed from a real GPU, with their provenance
  experiments               GPU experiments (timing, bench, races, tune, ...), each run(...) -> rows
  notebook                  what the notebooks call: setup(), tables, plots, and the lab
  cli, __main__             python -m tiledlab
"""
from .backend import BACKEND, SIMULATOR, describe  # first: it chooses GPU or simulator before numba.cuda is imported
from .core import KERNELS, Kernel, Rule, launch_geometry, matmul, naive, specialize, tiled

__all__ = ["BACKEND", "SIMULATOR", "describe", "naive", "tiled", "matmul", "specialize", "KERNELS", "Kernel", "Rule",
           "launch_geometry"]
