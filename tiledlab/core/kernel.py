"""What tiledlab knows about a kernel, in one object: its code, its constants, how it covers C.

A `Kernel` holds
* its code: a plain function (hand-written), a source generator (the unrolled rungs), or a changed
  syntax tree of another kernel (the variants);
* its compile-time constants with their defaults, the constants derived from them, and the rules
  they must keep, each a function whose parameters name the constants it reads (core.rules);
* its launch geometry: the rows and columns of C one block computes, and the threads of a block;
* the one idea it adds to the kernel before it, and its launch bounds.

`kernel.bind(BM=64)` checks and completes a set of constants once; `kernel.build(constants)`
compiles that build through the one builder (core.build), after checking the kernel contract
(core.contract). The lesson's kernels are plain `@cuda.jit` functions: `Kernel.of(naive)` wraps
them (and any student's kernel) with the lesson's geometry, T×T threads for a T×T tile of C:

    @launch_geometry(block=lambda BM, BN: (BM, BN), threads=lambda BM, BN, TM, TN: (BN // TN, BM // TM),
                     BM=64, BN=64, BK=8, TM=4, TN=4, NTHREADS=lambda BM, BN, TM, TN: (BM // TM) * (BN // TN))
    @cuda.jit
    def my_kernel(A, B, C): ...

Integer keywords are constants with their defaults; functions are constants derived from them.
"""
import ast
import inspect
import textwrap
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Callable, NamedTuple

import numpy as np

from . import build, contract
from .rules import Rule, apply, check_all, show
from ..i18n import _

MAX_THREADS_PER_BLOCK = 1024  # CUDA's limit on every current GPU
MAX_GRID_Y = 65535  # gridDim.y limit; blockIdx.y walks the block rows of C
MAX_STATIC_SHARED_BYTES = 48 * 1024  # static shared memory per block; more needs dynamic shared memory


class Code(NamedTuple):
    tree: ast.FunctionDef  # the kernel's def
    helpers: str           # source of the device functions it calls ("" for none)
    filename: str          # where its line numbers point
    text: str = None       # the whole generated source, for generated kernels


def _lesson_tile(T):
    return (T, T)


@dataclass(frozen=True, eq=False)
class Kernel:
    name: str
    function: Callable = None      # the plain Python function of a hand-written kernel
    constants: dict = field(default_factory=lambda: {"T": 16})  # every constant, with its default
    derived: dict = field(default_factory=dict)  # name → function of the constants, computed in order
    rules: tuple = ()              # Rule objects the constants must keep
    block: Callable = _lesson_tile    # constants → (rows, cols) of C one block computes
    threads: Callable = _lesson_tile  # constants → threads per block along (x → columns, y → rows)
    idea: str = ""                 # the one idea this kernel adds to the one before it
    min_blocks: int = None         # launch bounds: ask the compiler to fit this many blocks per SM
    generator: Callable = None     # constants → (kernel source, helper source): generated kernels
    tree: ast.FunctionDef = None   # a changed syntax tree of `function`'s kernel (the variants)
    fixed: bool = False            # the code was written for `constants` and takes no others
    clamped: bool = False          # rows of A / columns of B past the edges are read again
    _builds: dict = field(default_factory=dict, init=False, repr=False)  # (constants, bounds) → build

    # --- constants -------------------------------------------------------------------------------
    def bind(self, given=None, **more):
        """All constants of a build: the defaults, then the given ones, then the derived ones,
        checked: unknown names, values that are not whole numbers, a block CUDA cannot launch, and
        the kernel's rules each give a ValueError that says what to change."""
        given = {**(given or {}), **more}
        for name, value in given.items():
            self._check_value(name, value)
        constants = {**self.constants, **{k: int(v) for k, v in given.items()}}
        for name, rule in self.derived.items():
            constants[name] = apply(rule, constants, self.name)
        self.sizes(constants)
        check_all(self.rules, constants, self.name)
        return constants

    def _check_value(self, name, value):
        if name not in self.constants:
            raise ValueError(f"{self.name} has no constant {name!r}: its constants are {', '.join(self.constants)}")
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be a whole number, got {value!r}")
        if value < 0:
            raise ValueError(f"{name} must not be negative, got {value}")
        if self.fixed and value != self.constants[name]:
            raise ValueError(f"{self.name} is code written for {show(self.constants)}; it cannot take "
                             f"{name}={value}: change the kernel it came from instead")

    def sizes(self, constants):
        """((rows, cols) of C per block, (x, y) threads per block), checked against CUDA's limits."""
        block = tuple(apply(self.block, constants, self.name))
        threads = tuple(apply(self.threads, constants, self.name))
        if min(block + threads) < 1:
            raise ValueError(f"{self.name}: {show(constants)} gives a block of {threads[0]}×{threads[1]} "
                             f"threads for {block[0]}×{block[1]} elements of C")
        if threads[0] * threads[1] > MAX_THREADS_PER_BLOCK:
            raise ValueError(f"{self.name}: {threads[0]} × {threads[1]} = {threads[0] * threads[1]} threads per "
                             f"block with {show(constants)}; CUDA allows at most {MAX_THREADS_PER_BLOCK}")
        return block, threads

    def grid(self, M, N, constants):
        """(blockspergrid, threadsperblock) covering an M×N result: one block per block tile of C."""
        block, threads = self.sizes(constants)
        blockspergrid = (-(-N // block[1]), -(-M // block[0]))
        if blockspergrid[1] > MAX_GRID_Y:
            raise ValueError(f"M={M} with {block[0]} rows of C per block needs {blockspergrid[1]} block rows; "
                             f"gridDim.y allows {MAX_GRID_Y}: use a larger tile")
        return blockspergrid, threads

    def launch_bounds(self, constants, given=None):
        """(max threads per block, min blocks per SM), checked: given, or from `min_blocks`, or None."""
        threads = int(np.prod(self.sizes(constants)[1]))
        if given is None:
            return (threads, self.min_blocks) if self.min_blocks else None
        if not (isinstance(given, tuple) and len(given) == 2 and
                all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1 for v in given)):
            raise ValueError(f"launch_bounds must be (max threads per block, min blocks per SM), two whole "
                             f"numbers of at least 1, got {given!r}")
        if threads > given[0]:
            raise ValueError(f"{self.name}: {threads} threads per block, more than the launch bounds {given} allow")
        return tuple(int(v) for v in given)

    # --- code ------------------------------------------------------------------------------------
    def code(self, constants):
        """The code that runs at `constants`: its syntax tree (what a build compiles and the counting
        lab rewrites, with real line numbers), the source of helpers it calls, and its file name."""
        if self.generator is not None:
            text, helpers = self._generated(constants)
            filename = build.remember(text, f"<tiledlab generated {self.name} {build.digest(text)}>")
            tree = contract.parse_kernel(text, filename, self.name) if self.tree is None else self.tree
            return Code(contract.copy_tree(tree), helpers, filename, text if self.tree is None else None)
        if self.tree is not None:
            return Code(contract.copy_tree(self.tree), "", self.filename, None)
        return Code(contract.syntax_tree(self.function, self.name), "", self.filename, None)

    def _generated(self, constants):
        return self.generator({k: constants[k] for k in self.constants})

    def source(self, constants=None):
        """The source text that runs at `constants` (the defaults when None): what `show()` prints."""
        constants = self.bind(constants)
        code = self.code(constants)
        if code.text is not None:
            return code.helpers + "\n\n" + code.text
        if self.tree is not None:
            return (code.helpers + "\n\n" if code.helpers else "") + ast.unparse(code.tree)
        return textwrap.dedent(inspect.getsource(self.function))

    @cached_property
    def namespace(self):
        """The globals the kernel's code runs in (its module's, or the generated code's)."""
        if self.function is not None:
            return dict(self.function.__globals__)
        from numba import cuda, float32, uint64

        from . import ptx
        return {"cuda": cuda, "float32": float32, "uint64": uint64, **{name: getattr(ptx, name) for name in ptx.ARITY}}

    @property
    def filename(self):
        return inspect.getsourcefile(self.function) if self.function is not None else f"<tiledlab {self.name}>"

    def build(self, constants=None, launch_bounds=None):
        """The compiled kernel at `constants` (checked and completed by `bind`), through the one builder."""
        bound = self.bind(constants)
        return self.compiled(bound, self.launch_bounds(bound, launch_bounds))

    def compiled(self, bound, launch_bounds=None):
        """The compiled kernel at constants that `bind` returned, built once per set of them."""
        key = (build.key(bound), launch_bounds)
        if key not in self._builds:
            self._builds[key] = self._compile(bound, launch_bounds)
        return self._builds[key]

    def checked_code(self, constants):
        """`code(constants)` after the kernel contract and the shared-memory limit are checked: what
        every build, counting builds included, compiles."""
        code = self.code(constants)
        contract.check(code.tree, self.name)
        self.check_shared_memory(constants, code.tree)
        return code

    def _compile(self, constants, launch_bounds):
        code = self.checked_code(constants)
        dynamic = contract.dynamic_bytes(code.tree, {**self.namespace, **constants})
        if dynamic:  # its tiles are dynamic shared memory: the build reserves them at every launch
            from .ptx import DynamicShared
            return DynamicShared(self._compile_code(code, constants, launch_bounds), dynamic)
        return self._compile_code(code, constants, launch_bounds)

    def _compile_code(self, code, constants, launch_bounds):
        if code.text is not None:
            return build.from_source(code.text, code.tree.name, self.namespace, launch_bounds, code.helpers)
        if self.tree is None:
            return build.bind(self.function, constants, launch_bounds)
        return build.from_tree(code.tree, {**self.namespace, **constants}, code.filename,
                               ("variant", self.function, code.helpers, ast.dump(code.tree), build.key(constants)),
                               launch_bounds, code.helpers)

    def shared_bytes(self, constants, tree=None):
        """Bytes of cuda.shared.array memory one block declares at `constants` (None when a shape
        cannot be evaluated here; numba then reports it when it compiles)."""
        tree = tree or self.code(constants).tree
        try:
            found = contract.shared_declarations(tree, {**self.namespace, **constants})
            return sum(int(np.prod(shape)) * np.dtype(str(dtype)).itemsize for _name, shape, dtype in found)
        except Exception:  # noqa: BLE001  a name only the kernel's own build knows, or an unusual dtype
            return None

    def check_shared_memory(self, constants, tree=None):
        tree = tree or self.code(constants).tree
        used = self.shared_bytes(constants, tree)
        if used is not None:
            used -= contract.dynamic_bytes(tree, {**self.namespace, **constants})  # reserved at launch instead
        if used is not None and used > MAX_STATIC_SHARED_BYTES:
            raise ValueError(_("{name} declares {used:,} bytes of shared memory per block with {constants}; a block "
                               "may declare at most {most:,} (48 KiB) statically: choose smaller tiles").format(
                                   name=self.name, used=used, constants=show({k: constants[k] for k in self.constants}),
                                   most=MAX_STATIC_SHARED_BYTES))

    # --- derived kernels -------------------------------------------------------------------------
    def changed(self, tree, derived=None, constants=None):
        """A kernel running `tree`, a changed syntax tree of this one; `constants` become its defaults.
        Generated code is changed as written at `constants` and takes no others."""
        self.bind(constants)  # refuse bad constants here, not at the variant's first launch
        defaults = {**self.constants, **{k: int(v) for k, v in (constants or {}).items()}}
        return replace(self, name=tree.name, tree=tree, constants=defaults, derived={**self.derived, **(derived or {})},
                       fixed=self.fixed or self.generator is not None)

    def __getitem__(self, config):
        """`kernel[grid, block](A, B, C)`: launch the build at the default constants, like a @cuda.jit kernel."""
        return self.build()[config]

    def __repr__(self):
        return f"<tiledlab kernel {self.name} ({show(self.constants)})>"

    # --- making one ------------------------------------------------------------------------------
    @classmethod
    def of(cls, obj):
        """`obj` as a Kernel: itself, or a @cuda.jit function with the lesson's geometry (one Kernel per
        function, so its builds are kept)."""
        if isinstance(obj, Kernel):
            return obj
        if contract.is_kernel(obj) and obj.py_func in _wrapped:
            return _wrapped[obj.py_func]
        if contract.is_device_function(obj):
            raise ValueError(_("{name} is a device function (@cuda.jit(device=True)): it runs inside a kernel and "
                               "cannot be launched on a grid; pass the @cuda.jit kernel").format(
                                   name=repr(getattr(obj, "__name__", obj))))
        if not contract.is_kernel(obj):
            raise ValueError(_("{name} is not a kernel: decorate a function of (A, B, C) with @cuda.jit").format(
                name=repr(getattr(obj, "__name__", type(obj).__name__))))
        return lesson(obj)


_wrapped = {}  # plain function → its Kernel with the lesson's geometry


def lesson(kernel, idea=""):
    """A @cuda.jit kernel with the lesson's geometry: T×T threads for a T×T tile of C, T = 16 unless given."""
    plain = contract.plain_function(kernel)
    _wrapped[plain] = Kernel(plain.__name__, function=plain, idea=idea)
    return _wrapped[plain]


def launch_geometry(block=_lesson_tile, threads=_lesson_tile, requires=(), idea="", min_blocks=None, **constants):
    """Declare a kernel's constants and geometry (see the module's docstring); a decorator above
    @cuda.jit that returns the `Kernel`. `requires` lists Rule objects; the geometry is the lesson's
    (T×T threads, a T×T tile of C) unless `block` and `threads` say otherwise."""
    defaults = {k: v for k, v in constants.items() if not callable(v)}
    derived = {k: v for k, v in constants.items() if callable(v)}
    rules = tuple(requires)
    if not all(isinstance(r, Rule) for r in rules):
        raise ValueError("requires= takes Rule objects: Rule(lambda BM, TM: BM % TM == 0, 'why')")

    def declare(kernel):
        plain = contract.plain_function(kernel)
        return Kernel(plain.__name__, function=plain, constants=defaults, derived=derived, rules=rules,
                      block=block, threads=threads, idea=idea, min_blocks=min_blocks)
    return declare
