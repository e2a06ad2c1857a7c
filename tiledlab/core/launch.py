"""The one launch path: validate the inputs, build the kernel, size the grid, launch, copy C back.

`matmul`, the counting lab, the exercise checks and every GPU experiment go through `prepare`, so a
bad input gets the same clear ValueError everywhere, before anything is launched. A kernel is given
by name (tiledlab.core.registry) or as a @cuda.jit function; its constants by the lesson's `tile`
(T) or by name (BM=64, ...); its geometry (core.geometry) sizes the grid.
"""
from dataclasses import dataclass, field

import numpy as np
from numba import cuda

from .geometry import MAX_THREADS_PER_BLOCK, geometry_of, grid
from .registry import KERNELS
from .source import check_shared_memory, is_kernel, specialize


def validate_tile(tile):
    if isinstance(tile, bool) or not isinstance(tile, (int, np.integer)):
        raise ValueError(f"tile must be a whole number from 1 to 32, got {tile!r}")
    if not 1 <= tile <= 32:
        raise ValueError(f"tile={tile} gives {tile}×{tile} = {tile * tile} threads per block; CUDA allows "
                         f"1 to {MAX_THREADS_PER_BLOCK}, so tile must be from 1 to 32")
    return int(tile)


def validate_operands(A, B):
    """Return A and B as C-contiguous float32 arrays, or raise a ValueError that says what to fix."""
    for name, X in (("A", A), ("B", B)):
        if not isinstance(X, np.ndarray):
            raise ValueError(f"{name} must be a numpy array, got {type(X).__name__}")
        if X.ndim != 2:
            raise ValueError(f"{name} must be a 2-D matrix, got {X.ndim}-D with shape {X.shape}")
        if X.dtype != np.float32:
            raise ValueError(f"{name} has dtype {X.dtype}; these kernels compute in float32: "
                             f"pass {name}.astype(np.float32)")
        if X.size == 0:
            raise ValueError(f"{name} is empty (shape {X.shape}); there is nothing to multiply")
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"A is {A.shape[0]}×{A.shape[1]} and B is {B.shape[0]}×{B.shape[1]}: "
                         f"A's columns ({A.shape[1]}) must equal B's rows ({B.shape[0]})")
    # Strided or Fortran-ordered views are copied, so that A[i, j] in a kernel is row-major as drawn.
    return np.ascontiguousarray(A), np.ascontiguousarray(B)


def resolve(kernel):
    """(kernel, name, registry entry or None) for a name of tiledlab.core.registry.KERNELS or a
    @cuda.jit function; a ValueError for anything else."""
    if isinstance(kernel, str):
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {sorted(KERNELS)} or a @cuda.jit function, got {kernel!r}")
        return KERNELS[kernel].kernel, kernel, KERNELS[kernel]
    if not is_kernel(kernel):
        raise ValueError(f"kernel must be one of {sorted(KERNELS)} or a @cuda.jit function, got "
                         f"{getattr(kernel, '__name__', type(kernel).__name__)!r}: decorate it with @cuda.jit")
    return kernel, kernel_name(kernel), None


def kernel_name(kernel):
    return kernel if isinstance(kernel, str) else getattr(kernel, "__name__", str(kernel))


def launch_config(M, N, tile):
    """(blockspergrid, threadsperblock): one thread per element of the M×N output, T×T per block."""
    return grid(M, N, (tile, tile), (tile, tile))


def constants_of(kernel, name, tile=None, **constants):
    """The constants `kernel` is built with: its defaults, T = `tile` for the lesson's kernels, and
    any given by name, then those derived from them; checked (unknown names, the kernel's own rules)."""
    geometry = geometry_of(kernel)
    if tile is not None:
        if "T" not in geometry.defaults:
            raise ValueError(f"{name} has no tile width T: give its constants by name "
                             f"({', '.join(f'{k}={v}' for k, v in geometry.defaults.items())} by default)")
        constants["T"] = validate_tile(tile)
    return geometry.bind(constants, name)


@dataclass
class Launch:
    """A built kernel with its operands on the device and its launch configuration, ready to run."""
    name: str
    kernel: object  # the compiled kernel
    shape: tuple  # (M, K, N)
    tile: int  # T of the lesson's kernels; None for kernels with other constants (see `constants`)
    blockspergrid: tuple
    threadsperblock: tuple
    A: object  # device arrays
    B: object
    C: object
    constants: dict = field(default_factory=dict)  # the constants the kernel declares, as built ({"T": 16}, …)
    block: tuple = None  # (rows, cols) of C one block computes
    launch_bounds: tuple = None

    def __call__(self, *extra):
        """Launch once; `extra` arguments follow (A, B, C), as the counting lab's buffers do."""
        self.kernel[self.blockspergrid, self.threadsperblock](self.A, self.B, self.C, *extra)
        return self

    def result(self):
        return self.C.copy_to_host()

    def poison(self):
        """Fill C with NaN again, so that a run which skips an element shows it."""
        self.C.copy_to_device(np.full(self.C.shape, np.nan, dtype=np.float32))
        return self


def prepare(kernel, A, B, tile=None, build=specialize, launch_bounds=None, **constants):
    """Validate, build `kernel` with `build` at tile width `tile` (the lesson's kernels; 16 by default)
    or at the named constants of a register-tiled kernel, and put A, B and a NaN-filled C on the device
    (elements a kernel never writes stay NaN). `launch_bounds` = (max threads, min blocks per SM);
    a registry kernel with `min_blocks` gets them by default."""
    source, name, entry = resolve(kernel)
    geometry = geometry_of(source)
    bound = constants_of(source, name, tile, **constants)  # with the constants derived from them
    block, threads = geometry.sizes(bound, name)
    constants = {k: bound[k] for k in geometry.defaults}
    A, B = validate_operands(A, B)
    M, K = A.shape
    N = B.shape[1]
    blockspergrid, threadsperblock = grid(M, N, block, threads)
    if launch_bounds is None and entry is not None and entry.min_blocks:
        launch_bounds = (threads[0] * threads[1], entry.min_blocks)
    if launch_bounds and threads[0] * threads[1] > launch_bounds[0]:
        raise ValueError(f"{name}: {threads[0] * threads[1]} threads per block, more than the launch bounds "
                         f"{launch_bounds} allow")
    compiled = build(source, launch_bounds=launch_bounds, **constants)
    check_shared_memory(compiled, constants, name)
    C = np.full((M, N), np.nan, dtype=np.float32)
    return Launch(name, compiled, (M, K, N), constants.get("T"), blockspergrid, threadsperblock,
                  cuda.to_device(A), cuda.to_device(B), cuda.to_device(C), constants, block, launch_bounds)


def matmul(A, B, kernel="tiled", tile=None, **constants):
    """C = A @ B computed on the active backend by `kernel`: T×T thread blocks for the lesson's kernels
    (`tile`, 16 by default), or a registry kernel at its constants (`matmul(A, B, "best")`,
    `matmul(A, B, "regtile_2d", BM=64, BN=64, TM=4, TN=4)`)."""
    return prepare(kernel, A, B, tile, **constants)().result()
