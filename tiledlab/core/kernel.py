"""What tiledlab knows about a kernel, in one object (`Kernel`): its code, constants and their rules, how it covers
C, its family and idea, what it needs of the card. Its code is a hand-written function (`Written`), a source
generator (`Generated`) or a changed syntax tree of another kernel's code (`Changed`, the variants), behind one
interface. `kernel.bind(BM=64)` checks and completes constants once into a `Build`; `kernel.build(...)` compiles
it through core.build after checking the contract (core.contract) and the card. `Kernel.of(naive)` wraps a
@cuda.jit kernel with the lesson's geometry (T×T threads for a T×T tile of C); others declare theirs, integer
keywords being constants with their defaults and functions constants derived from them:

    @launch_geometry(block=lambda BM, BN: (BM, BN), threads=lambda BM, BN, TM, TN: (BN // TN, BM // TM),
                     BM=64, BN=64, BK=8, TM=4, TN=4, NTHREADS=lambda BM, BN, TM, TN: (BM // TM) * (BN // TN))
    @cuda.jit
    def my_kernel(A, B, C): ...
"""
import ast
import copy
import functools
import inspect
import os
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Callable, NamedTuple

import numpy as np

from . import build, card as cards, contract
from .card import MAX_THREADS_PER_BLOCK, Needs, Shared
from .rules import Rule, apply, enforce_all, got, is_whole, listed, names, whole
from ..i18n import _

MAX_GRID_Y = 65535  # gridDim.y limit; blockIdx.y walks the block rows of C
ANY_CARD = (0, 0)  # the compute capability a kernel of plain numba needs: none in particular


class Code(NamedTuple):
    tree: ast.FunctionDef  # the kernel's def
    helpers: str           # source of the device functions it calls ("" for none)
    filename: str          # where its line numbers point
    text: str = None       # the whole generated source, for generated kernels


@dataclass(frozen=True, eq=False)
class Written:
    """A hand-written kernel's plain function; a build binds the constants as its globals."""
    function: Callable
    options = {}  # a generator's options: none
    holds_constants = False  # its text names the constants, bound as globals: a changed copy takes others too
    base = property(lambda self: self)  # the code a variant is changed from
    namespace = property(lambda self: dict(self.function.__globals__))  # at each build: a cell may change a global

    def at(self, name, constants):
        return Code(contract.syntax_tree(self.function, name), "", inspect.getsourcefile(self.function))

    def text(self, code):
        return textwrap.dedent(inspect.getsource(self.function))

    def compile(self, code, constants, launch_bounds):
        return build.from_function(self.function, constants, launch_bounds)

    def reads(self):
        return build.reads(self.function)

    def stamp(self):
        """When and how large its file was last written; None for source that lives only in linecache."""
        try:
            found = os.stat(self.function.__code__.co_filename)
        except OSError:
            return None
        return found.st_mtime_ns, found.st_size

    def accumulates(self, code):
        return contract.accumulates(code.tree)


@dataclass(frozen=True, eq=False)
class Generated:
    """Source written by a program for each set of constants (core.unrolled)."""
    write: Callable  # constants → (kernel source, helper source)
    options: dict = field(default_factory=dict)  # the generator's options, as the kernel was declared with them
    holds_constants = True  # its text is written for one set of constants: a changed copy takes no others
    base = property(lambda self: self)

    @property
    def namespace(self):
        from numba import cuda, float32, uint64

        from . import ptx
        return {"cuda": cuda, "float32": float32, "uint64": uint64, **{n: getattr(ptx, n) for n in ptx.SIGNATURES}}

    def at(self, name, constants):
        text, helpers = self.write(constants)
        filename = build.remember(text, f"<tiledlab generated {name} {build.digest(text)}>")
        return Code(contract.parse_kernel(text, filename, name), helpers, filename, text)

    def text(self, code):
        return code.helpers + "\n\n" + code.text

    def compile(self, code, constants, launch_bounds):
        return build.from_source(code.text, code.tree.name, self.namespace, launch_bounds, code.helpers)

    def reads(self):
        return ()  # its namespace is fixed

    def accumulates(self, code):
        return self.options.get("splits", 1) > 1  # split-K: the blocks of a tile add their parts into C

    def stamp(self):
        return None  # its source is written from the constants alone


@dataclass(frozen=True, eq=False)
class Changed:
    """A changed syntax tree of another kernel's code, run with that code's helpers and globals."""
    tree: ast.FunctionDef
    helpers: str
    filename: str
    base: object  # the Written or Generated code it was changed from
    namespace = property(lambda self: self.base.namespace)  # its options and holds_constants are the base's

    def at(self, name, constants):
        return Code(copy.deepcopy(self.tree), self.helpers, self.filename)

    def text(self, code):
        return (code.helpers + "\n\n" if code.helpers else "") + ast.unparse(code.tree)

    def compile(self, code, constants, launch_bounds):
        return build.from_tree(code.tree, self.namespace, code.filename,
                               ("variant", self.base, code.helpers, ast.dump(code.tree), build.key(constants),
                                self.reads()), launch_bounds, code.helpers, constants=constants)

    def reads(self):
        return self.base.reads()

    def accumulates(self, code):
        return contract.accumulates(code.tree)

    def stamp(self):
        return self.base.stamp()


class Build(Mapping):
    """A kernel at constants checked once by `Kernel.bind`: every constant (build["T"]), its geometry and its code."""

    def __init__(self, kernel, constants, block, threads):
        self.kernel, self._constants = kernel, constants
        self.block, self.threads = block, threads  # (rows, cols) of C per block; threads per block along (x, y)
        self._code = self._shared = None  # (its file's stamp, the Code read then); (key, shared_declarations)

    def __getitem__(self, name):
        return self._constants[name]

    def __iter__(self):
        return iter(self._constants)

    def __len__(self):
        return len(self._constants)

    def __repr__(self):
        return f"<{self.kernel.name} at {listed(self._constants)}>"

    @property
    def code(self):
        """The kernel's Code (a shared tree: copy it to change it), read again when its file changed (then refused)."""
        stamp = self.kernel.code.stamp()
        if self._code is None or self._code[0] != stamp:
            self._code = (stamp, self.kernel.code.at(self.kernel.name, self.kernel._declared(self)))
        return self._code[1]

    @property
    def shared_declarations(self):
        """contract.shared_declarations of its code, found once per Code and per value of the globals it reads."""
        key = (self.code, self.kernel.code.reads())
        if self._shared is None or self._shared[0] != key:
            self._shared = key, tuple(contract.shared_declarations(key[0].tree, {**self.kernel.namespace, **self}))
        return self._shared[1]

    @functools.cached_property
    def accumulates(self):
        """True when this build adds into C with cuda.atomic.add: C starts at zero, not NaN."""
        return self.kernel.code.accumulates(self.code)


def lesson_tile(T):
    return (T, T)


def validate_tile(tile):
    """The lesson's tile width T as an int from 1 to 32, or a ValueError that says why not."""
    if not is_whole(tile) or tile < 1:
        raise ValueError(_("tile must be a whole number from 1 to 32, got {tile}").format(tile=got(tile)))
    if tile > 32:
        raise ValueError(_("tile={tile} gives {tile}×{tile} = {threads} threads per block; CUDA allows "
                           "1 to {most}, so tile must be from 1 to 32").format(tile=tile, threads=tile * tile,
                                                                             most=MAX_THREADS_PER_BLOCK))
    return int(tile)


@dataclass(frozen=True, eq=False)
class Kernel:
    name: str
    code: object                   # Written, Generated or Changed: see the module's docstring
    constants: dict = field(default_factory=lambda: {"T": 16})  # every constant, with its default
    derived: dict = field(default_factory=dict)  # name → function of the constants, computed in order
    rules: tuple = ()              # Rule objects the constants must keep
    block: Callable = lesson_tile    # constants → (rows, cols) of C one block computes
    threads: Callable = lesson_tile  # constants → threads per block along (x → columns, y → rows)
    idea: str = ""                 # the one idea this kernel adds to the one before it
    min_blocks: int = None         # launch bounds: ask the compiler to fit this many blocks per SM
    family: str = "student"        # its group in the registry ("lesson", "ladder", ...); a student's own kernel
    kind: str = None  # how it covers C: "naive" (a thread per element), "tiled" (T×T tiles), "register" (BM×BN tiles)
    compute_capability: tuple = ANY_CARD  # the oldest card with its instructions (card.CP_ASYNC for cp.async)
    shared: Callable = None        # constants → card.Shared; None: summed from its cuda.shared.array lines
    fixed: bool = False            # the code was written for `constants` and takes no others
    clamped: bool = False          # rows of A / columns of B past the edges are read again
    _builds: dict = field(default_factory=dict, init=False, repr=False)  # (constants, bounds) → build
    _bound: dict = field(default_factory=dict, init=False, repr=False)  # the constants asked for → their Build

    def __post_init__(self):  # no kind given: "tiled" with the lesson's T, else "register"
        object.__setattr__(self, "kind", self.kind or ("tiled" if "T" in self.constants else "register"))

    # --- constants -------------------------------------------------------------------------------
    def bind(self, given=None, tile=None, **more):
        """The Build of the defaults, the given constants (`tile`: the lesson's T) and derived ones, checked once."""
        given = {**(given or {}), **more}
        try:  # each value with its type: True == 1, but tile=True is refused where tile=1 is not
            asked = tuple(sorted((k, type(v).__name__, v) for k, v in given.items())), type(tile).__name__, tile
            found = self._bound.get(asked)
        except TypeError:  # an unhashable value (or name): refused by _check_value
            return self._bind(given, tile)
        if found is None:
            found = self._bound[asked] = self._bind(given, tile)
        return found

    def _bind(self, given, tile):
        if tile is not None:
            if "T" not in self.constants:
                raise ValueError(_("{kernel} has no tile width T: give its constants by name ({constants} by "
                                   "default)").format(kernel=self.name, constants=listed(self.constants)))
            tile = validate_tile(tile)
            if given.setdefault("T", tile) != tile:
                raise ValueError(_("tile={tile} and T={T} both give the tile width, differently: give one of them")
                                 .format(tile=tile, T=given["T"]))
        for name, value in given.items():
            self._check_value(name, value)
        constants = {**self.constants, **{k: int(v) for k, v in given.items()}}
        for name in (n for n in self.constants if n in names(self.block) + names(self.threads)):  # 0: no block
            whole(name, constants[name])
        first = [r for r in self.rules if set(names(r.holds)) <= set(self.constants)]  # before a derived constant
        enforce_all(first, constants, self.name)  # divides by zero: the rule broken is the one named
        for name, rule in self.derived.items():
            constants[name] = apply(rule, constants, self.name)
        block, threads = self.sizes(constants)
        enforce_all([r for r in self.rules if r not in first], constants, self.name)
        return Build(self, constants, block, threads)

    def _check_value(self, name, value):
        if name not in self.constants:
            raise ValueError(_("{kernel} has no constant {name!r}: its constants are {constants}").format(
                kernel=self.name, name=name, constants=", ".join(self.constants)))
        if not is_whole(value):
            raise ValueError(_("{name} must be a whole number, got {value}").format(name=name, value=got(value)))
        if value < 0:
            raise ValueError(_("{name} must not be negative, got {value}").format(name=name, value=value))
        if self.fixed and value != self.constants[name]:
            refusal = _("{kernel} is a changed copy of code written for {constants}; it cannot take {name}={value}: "
                        "change the kernel it came from instead") if isinstance(self.code, Changed) else \
                _("{kernel} was specialized for {constants}; it cannot take {name}={value} as well: give one value, or "
                  "pass the kernel it came from")
            raise ValueError(refusal.format(kernel=self.name, constants=listed(self.constants), name=name, value=value))

    def sizes(self, constants):
        """((rows, cols) of C per block, (x, y) threads per block), checked against CUDA's limits."""
        if isinstance(constants, Build) and constants.kernel is self:
            return constants.block, constants.threads
        block, threads = self._pair("block", constants), self._pair("threads", constants)
        if len(block) != 2 or len(threads) != 2 or not is_whole(*block, *threads):
            raise ValueError(_("{name}: with {constants} the geometry gives a block of {threads} threads for {block} "
                               "elements of C; tiledlab launches 2-D blocks: two whole numbers each, threads as "
                               "(x → columns, y → rows)").format(name=self.name, constants=listed(constants),
                                                                 threads=threads, block=block))
        if min(block + threads) < 1:
            raise ValueError(_("{kernel}: {constants} gives a block of {x}×{y} threads for {rows}×{cols} elements of "
                               "C").format(kernel=self.name, constants=listed(constants), x=threads[0], y=threads[1],
                                           rows=block[0], cols=block[1]))
        if threads[0] * threads[1] > MAX_THREADS_PER_BLOCK:
            raise ValueError(_("{kernel}: {x} × {y} = {threads} threads per block with {constants}; CUDA allows at "
                               "most {most}").format(kernel=self.name, x=threads[0], y=threads[1],
                                                     threads=threads[0] * threads[1], constants=listed(constants),
                                                     most=MAX_THREADS_PER_BLOCK))
        return block, threads

    def _pair(self, which, constants):
        """What `block` or `threads` gives at `constants`, as a tuple; one whole number is refused with the fix."""
        value = apply(getattr(self, which), constants, self.name)
        if is_whole(value):
            shape = _("(x, y), threads along x → columns and y → rows (a 1-D block of n threads is (n, 1))") \
                if which == "threads" else _("(rows, cols) of C per block")
            raise ValueError(_("{kernel}: {which} gives one number, {value}, with {constants}; tiledlab launches 2-D "
                               "blocks: return two, {shape}").format(kernel=self.name, which=which, value=value,
                                                                     constants=listed(constants), shape=shape))
        return tuple(value) if np.iterable(value) else (value,)  # (value,): refused by `sizes` as not two numbers

    def grid(self, M, N, constants):
        """(blockspergrid, threadsperblock) covering an M×N result: one block per block tile of C."""
        block, threads = self.sizes(constants)
        blockspergrid = (-(-N // block[1]), -(-M // block[0]))
        if blockspergrid[1] > MAX_GRID_Y:
            need = -(-M // MAX_GRID_Y)  # rows of C per block that would fit
            tiles = [T for T in range(constants["T"] + 1, 33)
                     if apply(self.block, {**constants, "T": T}, self.name)[0] >= need] if "T" in constants else []
            advice = _("use tile={tile} or larger").format(tile=tiles[0]) if tiles else \
                _("multiply A in parts of at most {rows:,} rows each").format(rows=MAX_GRID_Y * block[0])
            raise ValueError(_("M={M:,} with {rows} rows of C per block needs {blocks:,} block rows; gridDim.y allows "
                               "{most:,}: {advice}").format(M=M, rows=block[0], blocks=blockspergrid[1],
                                                           most=MAX_GRID_Y, advice=advice))
        return blockspergrid, threads

    def launch_bounds(self, constants, given=None):
        """(max threads per block, min blocks per SM), checked: given, or from `min_blocks`, or None."""
        threads = int(np.prod(self.sizes(constants)[1]))
        if given is None:
            return (threads, self.min_blocks) if self.min_blocks else None
        if not (isinstance(given, tuple) and len(given) == 2 and is_whole(*given) and min(given) >= 1):
            raise ValueError(_("launch_bounds must be (max threads per block, min blocks per SM), two whole numbers "
                               "of at least 1, got {given!r}").format(given=given))
        if threads > given[0]:
            raise ValueError(_("{kernel}: {threads} threads per block, more than the launch bounds {given} allow")
                             .format(kernel=self.name, threads=threads, given=given))
        return tuple(int(v) for v in given)

    # --- what it needs of the card ---------------------------------------------------------------
    def shared_memory(self, bound):
        """card.Shared of a Build's block: `shared`'s, else its declarations' (None where numba must report a shape)."""
        if self.shared is not None:
            return apply(self.shared, bound, self.name)
        try:
            return Shared(sum(int(np.prod(shape)) * np.dtype(str(dtype)).itemsize
                              for _name, shape, dtype, *_ in bound.shared_declarations))
        except Exception:  # noqa: BLE001  a name only the kernel's own build knows, or an unusual dtype
            return None

    def needs(self, bound=None, launch_bounds=None):
        """card.Needs of the build at constants that `bind` returned (the defaults when None)."""
        constants = self.bind() if bound is None else bound
        bounds = self.launch_bounds(constants, launch_bounds)
        return Needs(self.compute_capability, self.shared_memory(constants) or Shared(0),
                     int(np.prod(self.sizes(constants)[1])), bounds[1] if bounds else None)

    def refusal(self, card=None, bound=None, launch_bounds=None):
        """Why `card` (the card in hand when None) cannot run the build `bound` (the defaults'), or None."""
        why = self.needs(bound, launch_bounds).refusal(card or cards.current())
        return f"{self.name}: {why}" if why else None

    # --- code ------------------------------------------------------------------------------------
    def _declared(self, constants):
        return {k: constants[k] for k in self.constants}

    def source(self, constants=None):
        """The source text that runs at `constants` (the defaults when None): what `show()` prints."""
        return self.code.text(self.code.at(self.name, self._declared(self.bind(constants))))

    namespace = property(lambda self: self.code.namespace)  # the globals its code runs in, as they are now

    def build(self, constants=None, launch_bounds=None, tile=None):
        """The compiled kernel at `constants` (checked and completed by `bind`), through the one builder."""
        bound = self.bind(constants, tile)
        return self.compiled(bound, self.launch_bounds(bound, launch_bounds))

    def compiled(self, bound, launch_bounds=None):
        """The compiled kernel of a Build, once per card and per value of the globals its code reads."""
        key = (build.key(bound), launch_bounds, cards.current(), self.code.reads())
        if key not in self._builds:
            code = self.checked_code(bound, launch_bounds)
            compiled = self.code.compile(code, bound, launch_bounds)
            dynamic = contract.dynamic_bytes(code.tree, {**self.code.namespace, **bound})
            if dynamic:  # its tiles are dynamic shared memory: the build reserves them at every launch
                from .ptx import DynamicShared
                compiled = DynamicShared(compiled, dynamic)
            self._builds[key] = compiled
            _built[compiled] = (self, bound)
        return self._builds[key]

    def checked_code(self, bound, launch_bounds=None):
        """The code every build (counting ones too) compiles of a Build, once the contract and card are checked."""
        code = bound.code
        contract.enforce(code.tree, self.name, self.code.namespace, bound.threads, bound)
        if why := self.refusal(None, bound, launch_bounds):
            raise ValueError(why)
        return code

    # --- derived kernels -------------------------------------------------------------------------
    def changed(self, tree, derived=None, constants=None):
        """A kernel running `tree`, a changed syntax tree of this one's code at `constants` (its defaults)."""
        written = self.bind(constants).code  # refuse bad constants here, not at the variant's first launch
        code = Changed(tree, written.helpers, written.filename, self.code.base)
        defaults = {**self.constants, **{k: int(v) for k, v in (constants or {}).items()}}
        return replace(self, name=tree.name, code=code, constants=defaults, family="variant",
                       derived={**self.derived, **(derived or {})}, fixed=self.fixed or self.code.base.holds_constants)

    def __getitem__(self, config):
        """`kernel[grid, block](A, B, C)`: launch the build at the default constants, like a @cuda.jit kernel."""
        return self.build()[config]

    def __repr__(self):
        return f"<tiledlab kernel {self.name} ({listed(self.constants)})>"

    # --- making one ------------------------------------------------------------------------------
    @classmethod
    def of(cls, obj):
        """`obj` as a Kernel: itself, or a @cuda.jit function with the lesson's geometry (one Kernel per function)."""
        if isinstance(obj, Kernel):
            return obj
        if contract.is_kernel(obj) and obj in _built:  # a build (specialize): its kernel at its constants
            kernel, bound = _built[obj]
            return replace(kernel, constants={k: bound[k] for k in kernel.constants}, fixed=True)
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
_built = {}  # a compiled build → (the Kernel, the constants it was built with)


def lesson(kernel, idea="", family="student", kind=None):
    """A @cuda.jit kernel with the lesson's geometry: T×T threads for a T×T tile of C, T = 16 unless given."""
    plain = contract.plain_function(kernel)
    _wrapped[plain] = Kernel(plain.__name__, Written(plain), idea=idea, family=family, kind=kind)
    return _wrapped[plain]


def launch_geometry(block=lesson_tile, threads=lesson_tile, requires=(), idea="", min_blocks=None,
                    family="student", **constants):
    """A decorator above @cuda.jit declaring a kernel's constants, geometry and `requires` (Rule objects)."""
    defaults = {k: whole(k, v, least=0) for k, v in constants.items() if not callable(v)}
    derived = {k: v for k, v in constants.items() if callable(v)}
    rules = (requires,) if isinstance(requires, Rule) else requires
    if not isinstance(rules, (list, tuple)) or not all(isinstance(r, Rule) for r in rules):
        raise ValueError(_("requires= takes Rule objects: Rule(lambda BM, TM: BM % TM == 0, 'why')"))
    _refuse_misuse(block, threads, min_blocks, constants, rules)

    def declare(kernel):
        if not contract.is_kernel(kernel):
            raise ValueError(_("put @launch_geometry(...) above @cuda.jit: it declares a @cuda.jit kernel's geometry"))
        try:
            plain = contract.plain_function(kernel)
        except contract.Unreadable:  # said in one line where it is checked or run, not as a traceback here
            plain = kernel.py_func
        return Kernel(plain.__name__, Written(plain), constants=defaults, derived=derived, rules=tuple(rules),
                      block=block, threads=threads, idea=idea, min_blocks=min_blocks, family=family)
    return declare


def _refuse_misuse(block, threads, min_blocks, constants, rules):
    """A ValueError saying what to write where launch_geometry's arguments cannot declare a kernel."""
    if contract.is_kernel(block):  # @launch_geometry without its parentheses: the kernel came as `block`
        raise ValueError(_("call launch_geometry with the kernel's constants, as in @launch_geometry(T=4), "
                           "above @cuda.jit"))
    for name, fn in (("block", block), ("threads", threads)):
        if not callable(fn):
            raise ValueError(_("{name}= takes a function of the constants, as in {name}=lambda T: (T, T); got "
                               "{value!r}").format(name=name, value=fn))
    if min_blocks is not None:
        whole("min_blocks", min_blocks)
    geometry = [(name if fn is not lesson_tile else _("the lesson's T×T block"), fn) for name, fn in
                (("threads", threads), ("block", block))]
    derived = [(name, fn) for name, fn in constants.items() if callable(fn)]
    for what, fn in [*geometry, *derived, *((_("the rule {why!r}").format(why=r.why), r.holds) for r in rules)]:
        if missing := [n for n in names(fn) if n not in constants]:
            raise ValueError(_("{what} reads {names}, which launch_geometry was not given: add {given} to "
                               "@launch_geometry(...)").format(what=what, names=", ".join(missing),
                                                               given=", ".join(f"{n}=..." for n in missing)))
