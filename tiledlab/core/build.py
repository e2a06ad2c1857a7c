"""The one builder: every compiled kernel of the package comes from here, once per code and constants, by one way in
per source of code (core.kernel): `from_function`, `from_tree` (rewrites, variants) and `from_source` (generated
kernels; the text is kept in linecache for `inspect`, tracebacks and the simulator). `helpers` is source of the
functions a kernel calls, compiled into its namespace: device functions on a GPU, plain Python on the simulator.
"""
import ast
import copy
import hashlib
import linecache
import types

from numba import cuda

from ..backend import SIMULATOR

_cache = {}


def jit(fn, launch_bounds=None):
    """cuda.jit(fn), with launch bounds on a GPU (the simulator has no registers to cap)."""
    return cuda.jit(fn, launch_bounds=launch_bounds) if launch_bounds and not SIMULATOR else cuda.jit(fn)


def _cached(key, make):
    if key not in _cache:
        _cache[key] = make()
    return _cache[key]


def key(constants):
    """A set of constants as a hashable, ordered key."""
    return tuple(sorted((constants or {}).items()))


def reads(fn):
    """The globals `fn`'s code reads, with their values now, as a key (numba freezes globals when it compiles)."""
    names, codes = set(), [fn.__code__]
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return tuple((name, _token(fn.__globals__[name])) for name in sorted(names & fn.__globals__.keys()))


def _token(value):
    try:
        hash(value)
        return type(value), value
    except TypeError:  # an array or a list: the same object is taken for the same value
        return type(value), id(value)


def from_function(fn, constants, launch_bounds=None):
    """`fn` compiled as a kernel with the globals in `constants` bound: the same code, new sizes."""
    def make():
        bound = types.FunctionType(fn.__code__, {**fn.__globals__, **constants}, fn.__name__,
                                   fn.__defaults__, fn.__closure__)
        return jit(bound, launch_bounds)
    return _cached(("function", fn, key(constants), launch_bounds, reads(fn)), make)


def from_tree(func, namespace, filename, tag, launch_bounds=None, helpers=""):
    """The FunctionDef `func` compiled in a copy of `namespace`; cached under `tag`, which names all they came from."""
    def make():
        scope = with_helpers(dict(namespace), helpers)
        module = ast.fix_missing_locations(ast.Module(body=[copy.deepcopy(func)], type_ignores=[]))
        exec(compile(module, filename, "exec"), scope)
        return jit(scope[func.name], launch_bounds)
    return _cached(("tree", tag, launch_bounds), make)


def from_source(text, name, namespace, launch_bounds=None, helpers=""):
    """Kernel `name` defined by the source `text`, compiled in a copy of `namespace`."""
    def make():
        scope = with_helpers(dict(namespace), helpers)
        filename = remember(text, f"<tiledlab generated {name} {digest(text)}>")
        exec(compile(text, filename, "exec"), scope)
        return jit(scope[name], launch_bounds)
    return _cached(("source", text, name, helpers, tuple(sorted(namespace)), launch_bounds), make)


def with_helpers(namespace, helpers):
    """`namespace` with the functions of the source text `helpers` compiled into it."""
    if not helpers:
        return namespace
    filename = remember(helpers, f"<tiledlab helpers {digest(helpers)}>")
    exec(compile(helpers, filename, "exec"), namespace)
    if not SIMULATOR:
        for node in ast.parse(helpers).body:
            if isinstance(node, ast.FunctionDef):
                namespace[node.name] = cuda.jit(device=True)(namespace[node.name])
    return namespace


def remember(source, filename):
    """Keep source text that has no file in linecache under `filename`; returns the filename."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename


def digest(text):
    return hashlib.sha1(text.encode()).hexdigest()[:10]
