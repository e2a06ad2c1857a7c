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
from numba.core.types import unliteral

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


def from_tree(func, namespace, filename, tag, launch_bounds=None, helpers="", called=False):
    """The FunctionDef `func` compiled in a copy of `namespace`; cached under `tag`, which names all they came from.
    A counting build's helpers are called, not inlined (`_called`)."""
    def make():
        scope = with_helpers(dict(namespace), helpers, called)
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


def with_helpers(namespace, helpers, called=False):
    """`namespace` with the functions of the source text `helpers` compiled into it (`_called` ones if `called`)."""
    if not helpers:
        return namespace
    filename = remember(helpers, f"<tiledlab helpers {digest(helpers)}>")
    exec(compile(helpers, filename, "exec"), namespace)
    if not SIMULATOR:
        for node in ast.parse(helpers).body:
            if isinstance(node, ast.FunctionDef):
                namespace[node.name] = (_called if called else cuda.jit(device=True))(namespace[node.name])
    return namespace


def _called(fn):
    """`fn` as a device function that numba compiles once per kind of argument and NVVM keeps out of line. numba
    types each constant passed as its own literal type (line numbers, indices: 1,277 compiles of the counting
    helpers for one generated rung, not a dozen), and NVVM inlines every call (at a rung's 600 shared accesses:
    300,000 lines of PTX, minutes of NVVM and ptxas for a kernel only counted)."""
    helper = cuda.jit(device=True)(fn)
    template, compile_device = type(helper).get_call_template, type(helper).compile_device

    def out_of_line(args, return_type=None):
        new = args not in helper.overloads
        result = compile_device(helper, args, return_type)
        if new:
            result.library.get_function(result.fndesc.llvm_func_name).attributes.add("noinline")
        return result
    helper.compile_device = out_of_line
    helper.get_call_template = lambda args, kws: template(helper, tuple(map(unliteral, args)), kws)
    return helper


def remember(source, filename):
    """Keep source text that has no file in linecache under `filename`; returns the filename."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename


def digest(text):
    return hashlib.sha1(text.encode()).hexdigest()[:10]
