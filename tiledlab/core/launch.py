"""The one launch path: validate the inputs, build the kernel, size the grid, launch, copy C back.

`matmul`, the counting lab, the exercise checks and every GPU experiment go through `prepare`, so a
bad input gets the same clear ValueError everywhere, before anything is launched. A kernel is given
by name (tiledlab.core.registry), as a Kernel or as a @cuda.jit function; its constants by the
lesson's `tile` (T) or by name (BM=64, ...), bound once; its geometry sizes the grid.
"""
from dataclasses import dataclass

import numpy as np
from numba import cuda

from .kernel import MAX_THREADS_PER_BLOCK, Kernel
from ..i18n import _
from .registry import KERNELS, best_for


def validate_tile(tile):
    if isinstance(tile, bool) or not isinstance(tile, (int, np.integer)):
        raise ValueError(_("tile must be a whole number from 1 to 32, got {tile}").format(tile=repr(tile)))
    if not 1 <= tile <= 32:
        raise ValueError(_("tile={tile} gives {tile}×{tile} = {threads} threads per block; CUDA allows "
                           "1 to {most}, so tile must be from 1 to 32").format(tile=tile, threads=tile * tile,
                                                                             most=MAX_THREADS_PER_BLOCK))
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
    """The Kernel for a name of tiledlab.core.registry.KERNELS, a Kernel, or a @cuda.jit function;
    a ValueError for anything else."""
    if isinstance(kernel, str):
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {sorted(KERNELS)} or a @cuda.jit function, got {kernel!r}")
        return KERNELS[kernel]
    return Kernel.of(kernel)


def multiprocessors():
    """SMs of the current GPU, from the driver; on the simulator, which has none, the committed H200's, so
    that `best` picks there what it would pick on that card."""
    count = getattr(cuda.get_current_device(), "MULTIPROCESSOR_COUNT", None)
    if count is None:
        from .. import data
        count = int(data.load("h200/device.csv")["sms"].iloc[0])
    return int(count)


def by_shape(kernel, A, B):
    """`kernel`, with the name "best" replaced by the kernel best_for chooses at this product's shape
    (A and B as validate_operands returns them)."""
    if isinstance(kernel, str) and kernel == "best":
        return best_for(A.shape[0], B.shape[1], multiprocessors())
    return kernel


def _chosen(kernel, source, error):
    """`error` from binding `source`, saying that "best" chose it, when it did."""
    if isinstance(kernel, str) and kernel == "best":
        return ValueError(f'"best" runs {source.name} at this shape: {error}')
    return error


def bind(kernel, tile=None, **constants):
    """The constants `kernel` (a Kernel) is built with: its defaults, T = `tile` for the lesson's
    kernels, and any given by name, then those derived from them; checked once, here."""
    if tile is not None:
        if "T" not in kernel.constants:
            raise ValueError(f"{kernel.name} has no tile width T: give its constants by name "
                             f"({', '.join(f'{k}={v}' for k, v in kernel.constants.items())} by default)")
        tile = validate_tile(tile)
        if constants.setdefault("T", tile) != tile:
            raise ValueError(_("tile={tile} and T={T} both give the tile width, differently: give one of them").format(
                tile=tile, T=constants["T"]))
    return kernel.bind(constants)


@dataclass
class Launch:
    """A built kernel with its operands on the device and its launch configuration, ready to run."""
    source: Kernel  # what was built
    kernel: object  # the compiled kernel (anything launched as kernel[grid, block](A, B, C, *extra))
    shape: tuple  # (M, K, N)
    blockspergrid: tuple
    threadsperblock: tuple
    A: object  # device arrays
    B: object
    C: object
    bound: dict  # every constant of the build, derived ones included
    launch_bounds: tuple = None

    @property
    def name(self):
        return self.source.name

    @property
    def constants(self):
        """The constants the kernel declares, as built ({"T": 16}, {"BM": 64, ...})."""
        return {k: self.bound[k] for k in self.source.constants}

    @property
    def tile(self):
        """T of the lesson's kernels; None for kernels with other constants (see `constants`)."""
        return self.bound.get("T")

    @property
    def block(self):
        """(rows, cols) of C one block computes."""
        return self.source.sizes(self.bound)[0]

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


def prepare(kernel, A, B, tile=None, build=None, launch_bounds=None, **constants):
    """Validate, build `kernel` at tile width `tile` (the lesson's kernels; 16 by default) or at the
    named constants of a register-tiled kernel, and put A, B and a NaN-filled C on the device
    (elements a kernel never writes stay NaN). `build(kernel, bound, launch_bounds)` compiles it
    (Kernel.compiled by default; the counting lab passes its own). `launch_bounds` = (max threads,
    min blocks per SM); a registry kernel with `min_blocks` gets them by default. "best" is chosen by shape
    (registry.best_for, over this card's SMs)."""
    A, B = validate_operands(A, B)  # first: "best" is chosen by their shape
    source = resolve(by_shape(kernel, A, B))
    try:
        bound = bind(source, tile, **constants)
    except ValueError as error:
        raise _chosen(kernel, source, error) from None
    launch_bounds = source.launch_bounds(bound, launch_bounds)
    M, K = A.shape
    N = B.shape[1]
    blockspergrid, threadsperblock = source.grid(M, N, bound)
    compiled = (build or Kernel.compiled)(source, bound, launch_bounds)
    C = np.full((M, N), np.nan, dtype=np.float32)
    return Launch(source, compiled, (M, K, N), blockspergrid, threadsperblock,
                  cuda.to_device(A), cuda.to_device(B), cuda.to_device(C), bound, launch_bounds)


def matmul(A, B, kernel="tiled", tile=None, **constants):
    """C = A @ B computed on the active backend by `kernel`: T×T thread blocks for the lesson's kernels
    (`tile`, 16 by default), or a registry kernel at its constants (`matmul(A, B, "best")`, chosen by shape,
    `matmul(A, B, "regtile_2d", BM=64, BN=64, TM=4, TN=4)`)."""
    return prepare(kernel, A, B, tile, **constants)().result()


def specialize(kernel, T=None, launch_bounds=None, **constants):
    """`kernel` compiled with its constants bound (`specialize(tiled, T=8)`): the same code, new sizes.
    `launch_bounds` (max threads per block, min blocks per SM) caps the registers a thread may use."""
    source = resolve(kernel)
    bound = bind(source, T, **constants)
    return source.compiled(bound, source.launch_bounds(bound, launch_bounds))
