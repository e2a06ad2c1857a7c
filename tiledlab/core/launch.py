"""The one launch path: validate the inputs, build the kernel, size the grid, launch, copy C back.

`matmul`, the exercise checks and every GPU experiment go through `prepare` (`bind`, then `Launch.of`), so a bad
input gets the same ValueError everywhere before anything is launched. The counting lab takes the two steps
itself, compiling its own build between them: the core never calls it back.
"""
import difflib
import threading
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
from numba import cuda

from . import best
from .kernel import Kernel, validate_tile  # noqa: F401  validate_tile: the CLI and experiments check tiles here
from .registry import KERNELS
from ..backend import SIMULATOR
from ..i18n import _

_ONE_AT_A_TIME = threading.Lock()  # the simulator keeps one kernel context: one launch at a time, from any thread


def validate_operands(A, B):
    """Return A and B as C-contiguous float32 arrays, or raise a ValueError that says what to fix."""
    for name, X in (("A", A), ("B", B)):
        if not isinstance(X, np.ndarray):
            raise ValueError(_("{name} must be a numpy array, got {type}").format(name=name, type=type(X).__name__))
        if X.ndim != 2:
            raise ValueError(_("{name} must be a 2-D matrix, got {ndim}-D with shape {shape}").format(
                name=name, ndim=X.ndim, shape=X.shape))
        if X.dtype != np.float32:
            raise ValueError(_("{name} has dtype {dtype}; these kernels compute in float32: pass "
                               "{name}.astype(np.float32)").format(name=name, dtype=X.dtype))
        if X.size == 0:
            raise ValueError(_("{name} is empty (shape {shape}); there is nothing to multiply").format(
                name=name, shape=X.shape))
    if A.shape[1] != B.shape[0]:
        raise ValueError(_("A is {M}×{K} and B is {rows}×{N}: A's columns ({K}) must equal B's rows ({rows})").format(
            M=A.shape[0], K=A.shape[1], rows=B.shape[0], N=B.shape[1]))
    # Strided or Fortran-ordered views are copied, so that A[i, j] in a kernel is row-major as drawn.
    return np.ascontiguousarray(A), np.ascontiguousarray(B)


def resolve(kernel, shape=None):
    """The Kernel for a registry name, "best" (chosen at `shape`, else best.SHAPE), a Kernel or a @cuda.jit kernel."""
    if isinstance(kernel, str):
        if kernel == best.NAME:
            return KERNELS[best.choose(*(shape or best.SHAPE))]
        if kernel not in KERNELS:  # a close name instead of all ~40, when there is one
            close = _(" or ").join(map(repr, difflib.get_close_matches(kernel.lower(), [*KERNELS, best.NAME], 3, 0.75)))
            raise ValueError((_("kernel must be one of tiledlab's kernels, {best!r} or a @cuda.jit function, got "
                                "{kernel!r}: did you mean {close}?") if close else
                              _("kernel must be one of {names}, {best!r} or a @cuda.jit function, got {kernel!r}"))
                             .format(names=sorted(KERNELS), best=best.NAME, kernel=kernel, close=close))
        return KERNELS[kernel]
    return Kernel.of(kernel)


@dataclass
class Launch:
    """A built kernel with its operands on the device and its launch configuration, ready to run."""
    kernel: object  # the compiled kernel (anything launched as kernel[grid, block](A, B, C, *extra))
    shape: tuple  # (M, K, N)
    blockspergrid: tuple
    threadsperblock: tuple
    A: object  # device arrays
    B: object
    C: object
    bound: object  # the Build: every constant of it, derived ones included, and its Kernel
    launch_bounds: tuple = None  # (max threads, min blocks per SM)
    start: float = np.nan  # what C holds before a launch: NaN shows an element never written; 0 for atomic adds

    spec = property(lambda self: self.bound.kernel)  # what was built: the kernel's definition
    name = property(lambda self: self.spec.name)
    constants = property(lambda self: {k: self.bound[k] for k in self.spec.constants})  # declared, as built
    tile = property(lambda self: self.bound.get("T"))  # T of the lesson's kernels; None for those of other constants
    block = property(lambda self: self.bound.block)  # (rows, cols) of C one block computes

    @classmethod
    def of(cls, bound, A, B, compiled=None, launch_bounds=None):
        """The Launch of the Build `bound` on A and B, running `compiled` (the counting lab's, else the kernel's)."""
        (M, K), N, spec = A.shape, B.shape[1], bound.kernel
        launch_bounds = spec.launch_bounds(bound, launch_bounds)
        blockspergrid, threadsperblock = spec.grid(M, N, bound)
        compiled = spec.compiled(bound, launch_bounds) if compiled is None else compiled
        start = 0.0 if bound.accumulates else np.nan
        C = np.full((M, N), start, dtype=np.float32)
        return cls(compiled, (M, K, N), blockspergrid, threadsperblock,
                   cuda.to_device(A), cuda.to_device(B), cuda.to_device(C), bound, launch_bounds, start)

    def __call__(self, *extra):
        """Launch once; `extra` arguments (the counting lab's buffers) follow (A, B, C)."""
        with _ONE_AT_A_TIME if SIMULATOR else nullcontext():
            self.kernel[self.blockspergrid, self.threadsperblock](self.A, self.B, self.C, *extra)
        return self

    def result(self):
        return self.C.copy_to_host()

    def poison(self):
        """Fill C with its start value again, as before the first launch."""
        self.C.copy_to_device(np.full(self.C.shape, self.start, dtype=np.float32))
        return self


def bind(kernel, A, B, tile=None, **constants):
    """(A, B, Build): A and B validated, `kernel` bound for their product at `tile` (the lesson's T) or `constants`."""
    A, B = validate_operands(A, B)  # first: "best" is chosen by their shape
    spec = resolve(kernel, (*A.shape, B.shape[1]))
    try:
        return A, B, spec.bind(constants, tile)
    except ValueError as error:  # saying that "best" chose the kernel, when it did
        if isinstance(kernel, str) and kernel == best.NAME:
            raise ValueError(_('"best" runs {kernel} at this shape: {error}').format(kernel=spec.name, error=error)) \
                from None
        raise


def prepare(kernel, A, B, tile=None, launch_bounds=None, **constants):
    """The Launch of `kernel` on A and B (`bind`, then `Launch.of`): validated, bound once, compiled once, sized."""
    A, B, bound = bind(kernel, A, B, tile, **constants)
    return Launch.of(bound, A, B, launch_bounds=launch_bounds)


def matmul(A, B, kernel="tiled", tile=None, **constants):
    """C = A @ B by `kernel` on the active backend, at `tile` (the lesson's T, 16 by default) or its constants by
    name: `matmul(A, B, "regtile_2d", BM=64, TM=4)`; "best" is chosen for this card and shape."""
    if isinstance(kernel, (np.ndarray, list)):  # count_loads' order, kernel first
        raise ValueError(_("matmul takes A and B first: matmul(A, B, kernel, tile=4)"))
    return prepare(kernel, A, B, tile, **constants)().result()


def specialize(kernel, T=None, launch_bounds=None, shape=None, **constants):
    """`kernel` compiled with its constants bound (`specialize(tiled, T=8)`); "best" is chosen for `shape`."""
    return resolve(kernel, shape).build(constants, launch_bounds, T)
