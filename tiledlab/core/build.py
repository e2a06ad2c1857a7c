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
from .contract import is_device_function

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
    """The globals `fn`'s code reads, and those of the device functions it calls, with their values now, as a key
    (numba freezes globals when it compiles)."""
    code = [(fn.__globals__, names(fn.__code__))] + [(f.__globals__, names(f.__code__))
                                                    for f in device_functions(fn.__globals__, names(fn.__code__))]
    return tuple((name, _token(scope[name])) for scope, read in code for name in sorted(read & scope.keys()))


def names(code):
    """The names a code object reads (globals and attributes), its nested code's too."""
    found, codes = set(), [code]
    while codes:
        code = codes.pop()
        found.update(code.co_names)
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return found


def _token(value):
    try:
        hash(value)
        return type(value), value
    except TypeError:  # an array or a list: the same object is taken for the same value
        return type(value), id(value)


def from_function(fn, constants, launch_bounds=None):
    """`fn` compiled as a kernel with the globals in `constants` bound (in the device functions it calls too): the same
    code, new sizes."""
    def make():
        return jit(_rebound(fn, at_constants(fn.__globals__, names(fn.__code__), constants)), launch_bounds)
    return _cached(("function", fn, key(constants), launch_bounds, reads(fn)), make)


def from_tree(func, namespace, filename, tag, launch_bounds=None, helpers="", called=False, constants=None):
    """The FunctionDef `func` compiled in a copy of `namespace` with `constants` bound; cached under `tag`, which names
    all they came from. A counting build's helpers are called, not inlined (`_called`)."""
    def make():
        read = {n.id for n in ast.walk(func) if isinstance(n, ast.Name)} | \
            {n.attr for n in ast.walk(func) if isinstance(n, ast.Attribute)}
        scope = with_helpers(at_constants(namespace, read, constants or {}), helpers, called)
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


def at_constants(scope, read, constants):
    """`scope` with `constants` bound, and with each device function that the names `read` reach there (and those it
    calls) compiled again with them bound where it reads one of them, itself or through those it calls: a helper
    sees the sizes its kernel is built at, as the kernel does, on the simulator and on a GPU alike."""
    helpers = device_functions(scope, read)
    reading = {f for f in helpers if names(f.__code__) & constants.keys()}
    while more := {f for f in helpers if f not in reading and
                   reading & set(device_functions(f.__globals__, names(f.__code__), deep=False))}:
        reading |= more
    made = {f: _device_copy(helpers[f], _rebound(f, {**f.__globals__, **constants})) for f in reading}
    for f, again in made.items():  # the copies call one another's copies
        again.py_func.__globals__.update(_swapped(f.__globals__, names(f.__code__), made))
    for f, again in made.items():
        _signatures(helpers[f], again)
    return {**scope, **constants, **_swapped(scope, read, made)}


def device_functions(scope, read, deep=True):
    """{plain function: device function} of those the names `read` reach in `scope` (a global, or a module's
    attribute: helpmod.f), and, if `deep`, of those they call in turn."""
    found, todo = {}, [(scope, read)]
    while todo:
        scope, read = todo.pop()
        for value in _reached(scope, read):
            if is_device_function(value) and value.py_func not in found:
                found[value.py_func] = value
                todo += [(value.py_func.__globals__, names(value.py_func.__code__))] * deep
    return found


def _reached(scope, read, seen=()):
    """The values the names `read` give in `scope`, through modules too (helpmod.f)."""
    for name in sorted(read & scope.keys()):
        value = scope[name]
        yield value
        if isinstance(value, types.ModuleType) and value not in seen:
            yield from _reached(vars(value), read, (*seen, value))


def _swapped(scope, read, made, seen=()):
    """{name: its value with the device functions in `made` swapped in} of the names `read` in `scope` that change;
    a module is copied with its functions swapped."""
    found = {}
    for name in read & scope.keys():
        value = scope[name]
        if is_device_function(value) and value.py_func in made:
            found[name] = made[value.py_func]
        elif isinstance(value, types.ModuleType) and value not in seen and \
                (inner := _swapped(vars(value), read, made, (*seen, value))):
            found[name] = types.ModuleType(value.__name__)
            vars(found[name]).update({**vars(value), **inner})
    return found


def _rebound(fn, scope):
    """The function `fn` with the globals `scope`."""
    return types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)


def _device_copy(helper, fn):
    """A device function of `fn`, declared as `helper` was (its options; its signatures: `_signatures`)."""
    return cuda.jit(device=True)(fn) if SIMULATOR else type(helper)(fn, targetoptions=dict(helper.targetoptions))


def _signatures(helper, again):
    """A helper declared with signatures (@cuda.jit("f4(f4)", device=True)) compiles those only: its copy too."""
    if not SIMULATOR and not helper._can_compile:
        for args, compiled in helper.overloads.items():
            again.compile_device(args, compiled.signature.return_type)
        again.disable_compile()


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
