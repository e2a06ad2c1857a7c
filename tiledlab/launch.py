"""Check inputs, choose the launch configuration, launch, and return C = A @ B as a numpy array."""
import numpy as np
from numba import cuda

from .kernels import KERNELS
from .source import specialize

MAX_THREADS_PER_BLOCK = 1024  # CUDA's limit on every current GPU: so T ≤ 32
MAX_GRID_Y = 65535  # gridDim.y limit; blockIdx.y walks the rows of C


def check_tile(tile):
    if isinstance(tile, bool) or not isinstance(tile, (int, np.integer)):
        raise ValueError(f"tile must be a whole number from 1 to 32, got {tile!r}")
    if not 1 <= tile <= 32:
        raise ValueError(f"tile={tile} gives {tile}×{tile} = {tile * tile} threads per block; CUDA allows "
                         f"1 to {MAX_THREADS_PER_BLOCK}, so tile must be from 1 to 32")
    return int(tile)


def check_operands(A, B):
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


def launch_config(M, N, tile):
    """(blockspergrid, threadsperblock): one thread per element of the M×N output, T×T per block."""
    blockspergrid = ((N + tile - 1) // tile, (M + tile - 1) // tile)  # (x → columns, y → rows)
    if blockspergrid[1] > MAX_GRID_Y:
        raise ValueError(f"M={M} with tile={tile} needs {blockspergrid[1]} block rows; gridDim.y allows "
                         f"{MAX_GRID_Y}: use a larger tile")
    return blockspergrid, (tile, tile)


def resolve(kernel, tile):
    """A compiled kernel for `kernel` ('naive', 'tiled' or a @cuda.jit function) at tile width `tile`."""
    if isinstance(kernel, str):
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {sorted(KERNELS)} or a @cuda.jit function, got {kernel!r}")
        kernel = KERNELS[kernel]
    return specialize(kernel, tile)


def matmul(A, B, kernel="tiled", tile=16):
    """C = A @ B computed on the active backend by `kernel` with T×T thread blocks."""
    tile = check_tile(tile)
    A, B = check_operands(A, B)
    compiled = resolve(kernel, tile)
    M, N = A.shape[0], B.shape[1]
    blockspergrid, threadsperblock = launch_config(M, N, tile)
    dA, dB = cuda.to_device(A), cuda.to_device(B)
    dC = cuda.to_device(np.full((M, N), np.nan, dtype=np.float32))  # unwritten elements show as nan
    compiled[blockspergrid, threadsperblock](dA, dB, dC)
    return dC.copy_to_host()
