"""How a kernel covers C: how many rows and columns of C one block computes, and with how many threads.

A launch needs both. The lesson's kernels give every thread one element of a T×T tile, so a block is
T×T threads computing a T×T tile of C. A register-tiled kernel gives every thread TM×TN elements:
a block computes a BM×BN tile of C with only (BN/TN)×(BM/TM) threads. Both are functions of the
kernel's compile-time constants, and a kernel says which with `@launch_geometry(...)`:

    @launch_geometry(block=("BM", "BN"), threads=("BN // TN", "BM // TM"), BM=64, BN=64, BK=8, TM=4, TN=4)
    @cuda.jit
    def my_kernel(A, B, C): ...

The expressions are Python text over the constants, so an error can quote the rule a choice breaks.
`requires` lists conditions the kernel's code relies on ({"BM % TM == 0": "a thread computes TM
rows"}); `derived` computes further constants from the given ones, in order. A kernel that declares
nothing is a lesson kernel: T×T threads and a T×T tile, T = 16 unless given.
"""
import ast
from dataclasses import dataclass, field, replace

MAX_THREADS_PER_BLOCK = 1024  # CUDA's limit on every current GPU
MAX_GRID_Y = 65535  # gridDim.y limit; blockIdx.y walks the block rows of C


@dataclass(frozen=True)
class Geometry:
    block: tuple = ("T", "T")      # rows and columns of C one block computes
    threads: tuple = ("T", "T")    # threads per block along x (→ columns of C) and y (→ rows)
    defaults: dict = field(default_factory=lambda: {"T": 16})  # every constant, with its default
    derived: dict = field(default_factory=dict)   # name → expression, computed in order after the rest
    requires: dict = field(default_factory=dict)  # condition → why the kernel needs it
    fixed: bool = False  # the source was generated for `defaults` and cannot take other values

    def bind(self, given, kernel="kernel"):
        """All constants of a build: the defaults, then `given`, then the derived ones. A ValueError
        names an unknown constant, a value that is not a whole number, a block CUDA cannot launch, or a
        requirement that fails."""
        for name, value in given.items():
            if name not in self.defaults:
                raise ValueError(f"{kernel} has no constant {name!r}: its constants are "
                                 f"{', '.join(self.defaults)}")
            if isinstance(value, bool) or not isinstance(value, int) and not hasattr(value, "__index__"):
                raise ValueError(f"{name} must be a whole number, got {value!r}")
            if value < 0:
                raise ValueError(f"{name} must not be negative, got {value}")
            if self.fixed and value != self.defaults[name]:
                raise ValueError(f"{kernel} is source generated for {_show(self.defaults)}; it cannot take "
                                 f"{name}={value}: build it again from its generator with the constants you want")
        constants = {**self.defaults, **{k: int(v) for k, v in given.items()}}
        for name, expression in self.derived.items():
            constants[name] = evaluate(expression, constants, kernel)
        self.sizes(constants, kernel)
        for condition, why in self.requires.items():
            if not evaluate(condition, constants, kernel):
                raise ValueError(f"{kernel} needs {condition} ({why}); {_show(constants, condition)} breaks it")
        return constants

    def sizes(self, constants, kernel="kernel"):
        """((rows, cols) of C per block, (x, y) threads per block), checked against CUDA's limits."""
        block = tuple(evaluate(e, constants, kernel) for e in self.block)
        threads = tuple(evaluate(e, constants, kernel) for e in self.threads)
        if min(block + threads) < 1:
            raise ValueError(f"{kernel}: {_show(constants, *self.block, *self.threads)} gives a block of "
                             f"{threads[0]}×{threads[1]} threads for {block[0]}×{block[1]} elements of C")
        if threads[0] * threads[1] > MAX_THREADS_PER_BLOCK:
            raise ValueError(f"{kernel}: ({self.threads[0]}) × ({self.threads[1]}) = {threads[0]} × {threads[1]} = "
                             f"{threads[0] * threads[1]} threads per block with {_show(constants, *self.threads)}; "
                             f"CUDA allows at most {MAX_THREADS_PER_BLOCK}")
        return block, threads

    def launch(self, M, N, constants, kernel="kernel"):
        """(blockspergrid, threadsperblock) covering an M×N result: one block per block tile of C."""
        return grid(M, N, *self.sizes(constants, kernel))


LESSON = Geometry()


def grid(M, N, block, threads):
    """(blockspergrid, threadsperblock) for block tiles of `block` = (rows, cols) of C; x → columns."""
    blockspergrid = (-(-N // block[1]), -(-M // block[0]))
    if blockspergrid[1] > MAX_GRID_Y:
        raise ValueError(f"M={M} with {block[0]} rows of C per block needs {blockspergrid[1]} block rows; "
                         f"gridDim.y allows {MAX_GRID_Y}: use a larger tile")
    return blockspergrid, tuple(threads)


def launch_geometry(block, threads, requires=None, derived=None, **defaults):
    """Declare a kernel's geometry (see the module's docstring); used as a decorator above @cuda.jit."""
    def declare(kernel):
        kernel.tiledlab_geometry = Geometry(tuple(block), tuple(threads), dict(defaults), dict(derived or {}),
                                            dict(requires or {}))
        return kernel
    return declare


def geometry_of(kernel):
    """The kernel's declared geometry, or the lesson's T×T one."""
    return getattr(kernel, "tiledlab_geometry", LESSON)


def fixed(geometry, constants):
    """`geometry` for source generated at `constants`: those values become the only ones it takes."""
    return replace(geometry, defaults={k: constants[k] for k in geometry.defaults}, fixed=True)


def evaluate(expression, constants, kernel="kernel"):
    """The value of a rule: Python text over the constants ("BN // TN"), or a function of them."""
    if callable(expression):
        return expression(constants)
    try:
        return eval(compile(expression, "<geometry>", "eval"), {"__builtins__": {}, "min": min, "max": max},
                    dict(constants))
    except ZeroDivisionError:
        raise ValueError(f"{kernel}: {expression} divides by zero with {_show(constants, expression)}") from None
    except NameError as e:
        raise ValueError(f"{kernel}: {expression} names a constant the kernel does not have ({e})") from None


def _show(constants, *expressions):
    """'BM=64, TM=3': the constants named in `expressions` (all of them when none are given)."""
    names = {n.id for e in expressions if isinstance(e, str) for n in ast.walk(ast.parse(e)) if isinstance(n, ast.Name)}
    return ", ".join(f"{k}={v}" for k, v in constants.items() if not expressions or k in names)
