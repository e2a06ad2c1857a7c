"""The one launch path: validate the inputs, build the kernel, size the grid, launch, copy C back.

`matmul`, the counting lab, the exercise checks and every GPU experiment go through `prepare`, so a
bad input gets the same clear ValueError everywhere, before anything is launched.
"""
from dataclasses import dataclass

import numpy as np
from numba import cuda

from .kernels import KERNELS
from .source import is_kernel, specialize

MAX_THREADS_PER_BLOCK = 1024  # CUDA's limit on every current GPU: so T ≤ 32
MAX_GRID_Y = 65535  # gridDim.y limit; blockIdx.y walks the rows of C


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
    """The kernel source for 'naive', 'tiled' or a @cuda.jit function; a ValueError for anything else."""
    if isinstance(kernel, str):
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {sorted(KERNELS)} or a @cuda.jit function, got {kernel!r}")
        return KERNELS[kernel]
    if not is_kernel(kernel):
        raise ValueError(f"kernel must be one of {sorted(KERNELS)} or a @cuda.jit function, got "
                         f"{getattr(kernel, '__name__', type(kernel).__name__)!r}: decorate it with @cuda.jit")
    return kernel


def kernel_name(kernel):
    return kernel if isinstance(kernel, str) else getattr(kernel, "__name__", str(kernel))


def launch_config(M, N, tile):
    """(blockspergrid, threadsperblock): one thread per element of the M×N output, T×T per block."""
    blockspergrid = ((N + tile - 1) // tile, (M + tile - 1) // tile)  # (x → columns, y → rows)
    if blockspergrid[1] > MAX_GRID_Y:
        raise ValueError(f"M={M} with tile={tile} needs {blockspergrid[1]} block rows; gridDim.y allows "
                         f"{MAX_GRID_Y}: use a larger tile")
    return blockspergrid, (tile, tile)


@dataclass
class Launch:
    """A built kernel with its operands on the device and its launch configuration, ready to run."""
    name: str
    kernel: object  # the compiled kernel
    shape: tuple  # (M, K, N)
    tile: int
    blockspergrid: tuple
    threadsperblock: tuple
    A: object  # device arrays
    B: object
    C: object

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


def prepare(kernel, A, B, tile=16, build=specialize):
    """Validate, build `kernel` at tile width `tile` with `build`, and put A, B and a NaN-filled C on
    the device (elements a kernel never writes stay NaN)."""
    tile = validate_tile(tile)
    A, B = validate_operands(A, B)
    compiled = build(resolve(kernel), tile)
    M, K = A.shape
    N = B.shape[1]
    blockspergrid, threadsperblock = launch_config(M, N, tile)
    C = np.full((M, N), np.nan, dtype=np.float32)
    return Launch(kernel_name(kernel), compiled, (M, K, N), tile, blockspergrid, threadsperblock,
                  cuda.to_device(A), cuda.to_device(B), cuda.to_device(C))


def matmul(A, B, kernel="tiled", tile=16):
    """C = A @ B computed on the active backend by `kernel` with T×T thread blocks."""
    return prepare(kernel, A, B, tile)().result()
