"""One kernel source, many builds: bind compile-time constants, or compile a rewritten syntax tree.

A kernel whose source is generated (tiledlab.core.unrolled) carries its generator: building it for
other constants writes its source again, since the unrolled code itself changes with them.
"""
import ast
import copy
import inspect
import linecache
import textwrap
import types

import numpy as np
from numba import cuda

from ..backend import SIMULATOR
from .geometry import evaluate, fixed, geometry_of

_cache = {}
CARRIED = ("tiledlab_tree", "tiledlab_derived", "tiledlab_geometry", "tiledlab_generator")  # what a build keeps
MAX_STATIC_SHARED_BYTES = 48 * 1024  # static shared memory per block; more needs dynamic shared memory


def py_func(kernel):
    """The plain Python function behind a @cuda.jit kernel (or the function itself)."""
    return getattr(kernel, "py_func", kernel)


def is_kernel(obj):
    """True for a @cuda.jit kernel (GPU dispatcher or simulator kernel), False for anything else."""
    return hasattr(obj, "py_func") and callable(getattr(obj, "__getitem__", None))


def constants_for(kernel, T=None, **constants):
    """The compile-time constants a build of `kernel` binds: its geometry's defaults, overridden by T and
    the others given, then those computed from them (the geometry's `derived`, and a derived kernel's
    `tiledlab_derived`, e.g. a padded row length T + 1). Unknown names and broken rules: ValueError."""
    if T is not None:
        constants["T"] = T
    name = getattr(kernel, "__name__", "kernel")
    constants = geometry_of(kernel).bind(constants, name)
    for extra, rule in getattr(kernel, "tiledlab_derived", {}).items():
        constants[extra] = evaluate(rule, constants, name)
    return constants


def specialize(kernel, T=None, launch_bounds=None, **constants):
    """`kernel` compiled with its globals `T` (and any other named constants) bound: same code, new sizes.
    `launch_bounds` (max threads per block, min blocks per SM) caps the registers a thread may use; a
    kernel decorated with launch bounds keeps them. Generated kernels are generated again instead."""
    constants = constants_for(kernel, T, **constants)
    launch_bounds = launch_bounds or getattr(kernel, "targetoptions", {}).get("launch_bounds")
    if hasattr(kernel, "tiledlab_generator"):
        return kernel.tiledlab_generator(constants, launch_bounds)
    fn = py_func(kernel)
    key = (fn, tuple(sorted(constants.items())), launch_bounds)
    if key not in _cache:
        check_contract(syntax_tree(kernel), fn.__name__)
        bound = types.FunctionType(fn.__code__, {**fn.__globals__, **constants}, fn.__name__,
                                   fn.__defaults__, fn.__closure__)
        _cache[key] = jit(bound, launch_bounds)
        carry(kernel, _cache[key])
    return _cache[key]


def jit(fn, launch_bounds=None):
    """cuda.jit(fn), with launch bounds on a GPU (the simulator has no registers to cap)."""
    return cuda.jit(fn, launch_bounds=launch_bounds) if launch_bounds and not SIMULATOR else cuda.jit(fn)


def carry(source, build, attrs=CARRIED):
    """Give a build of `source` what tiledlab knows about it: its syntax tree, rules and generator."""
    for attr in attrs:
        if hasattr(source, attr):
            setattr(build, attr, getattr(source, attr))
    return build


def for_constants(kernel, constants):
    """The kernel whose source is the one run at `constants`: the kernel itself, or for generated
    source the build generated for them (its syntax tree is what the counting lab rewrites)."""
    return specialize(kernel, **constants) if hasattr(kernel, "tiledlab_generator") else kernel


def shared_declarations(func, namespace):
    """(statement, shape, dtype) of each `s = cuda.shared.array(shape, dtype)` in a kernel's FunctionDef,
    its shape and dtype evaluated in `namespace` (the kernel's globals and constants)."""
    found = []
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and is_call(node.value, "cuda.shared.array"):
            call = node.value
            args = call.args[:2] + [k.value for k in call.keywords if k.arg in ("shape", "dtype")]
            shape, dtype = (eval(compile(ast.Expression(a), "<shared>", "eval"), namespace) for a in args[:2])
            found.append((node, tuple(int(n) for n in np.atleast_1d(shape)), dtype))
    return found


def static_shared_bytes(kernel, constants):
    """Bytes of cuda.shared.array memory one block of `kernel` declares at `constants` (None when
    a shape cannot be evaluated here; numba then reports it when it compiles)."""
    try:
        found = shared_declarations(syntax_tree(kernel), {**py_func(kernel).__globals__, **constants})
        return sum(int(np.prod(shape)) * np.dtype(str(dtype)).itemsize for _, shape, dtype in found)
    except Exception:  # noqa: BLE001  a name only the kernel's own build knows, or an unusual dtype
        return None


def check_shared_memory(kernel, constants, name):
    """A ValueError when a build declares more static shared memory than a block may have."""
    if not hasattr(kernel, "tiledlab_shared_bytes"):  # a build's constants are fixed: count once
        kernel.tiledlab_shared_bytes = static_shared_bytes(kernel, constants)
    used = kernel.tiledlab_shared_bytes
    if used is not None and used > MAX_STATIC_SHARED_BYTES:
        raise ValueError(f"{name} declares {used:,} bytes of shared memory per block with "
                         f"{', '.join(f'{k}={v}' for k, v in constants.items())}; a block may declare at most "
                         f"{MAX_STATIC_SHARED_BYTES:,} (48 KiB) statically: choose smaller tiles")


def syntax_tree(kernel):
    """The kernel's `def` as an ast.FunctionDef, with its original line numbers and no decorators."""
    if hasattr(kernel, "tiledlab_tree"):  # a derived kernel: its source is the rewritten tree
        return copy.deepcopy(kernel.tiledlab_tree)
    fn = py_func(kernel)
    lines, first = inspect.getsourcelines(fn)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first - 1)  # keep real line numbers: the simulator keys shared arrays by line
    func = tree.body[0]
    func.decorator_list = []
    return func


def check_contract(func, name):
    """Refuse kernels that break the rules every build relies on (see tiledlab.core.kernels)."""
    params = [a.arg for a in func.args.args]
    if len(params) != 3:
        raise ValueError(f"kernel {name}({', '.join(params)}) must take exactly three arguments (A, B, C), "
                         "computing C = A @ B")
    lines = {}
    for node in ast.walk(func):
        if is_call(node, "cuda.shared.array") or is_call(node, "cuda.local.array"):
            shape = node.args[0] if node.args else None
            dims = shape.elts if isinstance(shape, ast.Tuple) else [shape]
            if not all(isinstance(d, ast.Name) or isinstance(d, ast.Constant) and isinstance(d.value, int)
                       for d in dims):
                raise ValueError(f"kernel {name}, line {node.lineno}: array shape {ast.unparse(shape)}: numba "
                                 "compiling for a GPU needs every dimension as a number or a constant's name, "
                                 "not an expression; bind the expression as a constant of its own")
        if is_call(node, "cuda.shared.array"):
            lines[node.lineno] = lines.get(node.lineno, 0) + 1
    for line, n in lines.items():
        if n > 1:
            raise ValueError(f"kernel {name}, line {line}: {n} cuda.shared.array declarations on one line; "
                             "write one per line (numba's simulator merges them into one array)")


def build(kernel, func, constants, tag, extra_globals=None, helpers=""):
    """Compile the rewritten FunctionDef `func` of `kernel` with `constants` bound; cached under `tag`.

    `helpers` is source for functions the rewritten kernel calls. They are compiled into the kernel's
    own namespace, as device functions on a GPU and as plain Python on the simulator, where sharing
    the namespace lets them see the simulator's per-launch `cuda` module.
    """
    fn = py_func(kernel)
    key = (fn, tuple(sorted(constants.items())), tag)
    if key not in _cache:
        namespace = with_helpers({**fn.__globals__, **constants, **(extra_globals or {})}, helpers)
        _cache[key] = _compile(func, namespace, fn)
    return _cache[key]


def with_helpers(namespace, helpers, filename="<tiledlab helpers>"):
    """`namespace` with the functions of the source text `helpers` compiled into it: device functions
    on a GPU, plain Python on the simulator (where they then see its per-launch `cuda` module)."""
    exec(compile(remember(helpers, filename), filename, "exec"), namespace)
    if not SIMULATOR:
        for name in _defined(helpers):
            namespace[name] = cuda.jit(device=True)(namespace[name])
    return namespace


def remember(source, filename):
    """Keep source text that has no file in linecache under `filename`, so that inspect.getsource,
    tracebacks and the simulator's line-keyed shared arrays work for code compiled from it."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return source


def derive(kernel, func, derived=None):
    """A new kernel from a changed syntax tree of `kernel`, with its globals (constants still unbound).
    `derived` maps extra constants to rules computing them from the bound ones: {"T_PAD": lambda c: c["T"] + 1}."""
    fn = py_func(kernel)
    rules = {**getattr(kernel, "tiledlab_derived", {}), **(derived or {})}
    key = (fn, ast.dump(func), tuple(rules), "derived")
    if key not in _cache:
        check_contract(func, func.name)
        _cache[key] = _compile(func, dict(fn.__globals__), fn)
        _cache[key].tiledlab_derived = rules
        geometry = geometry_of(kernel)
        if hasattr(kernel, "tiledlab_generator"):  # changed generated source: it stays at its constants
            geometry = fixed(geometry, geometry.defaults)
        _cache[key].tiledlab_geometry = geometry
    return _cache[key]


def _compile(func, namespace, fn):
    tree = copy.deepcopy(func)
    module = ast.fix_missing_locations(ast.Module(body=[func], type_ignores=[]))
    exec(compile(module, inspect.getsourcefile(fn) or "<kernel>", "exec"), namespace)
    kernel = cuda.jit(namespace[func.name])
    kernel.tiledlab_tree = tree
    return kernel


def _defined(source):
    return [node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)]


def is_call(node, dotted):
    """True when `node` is a call of the dotted name, e.g. 'cuda.syncthreads'."""
    return isinstance(node, ast.Call) and ast.unparse(node.func) == dotted
