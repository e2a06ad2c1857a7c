"""One kernel source, many builds: bind the tile width, or compile a rewritten syntax tree of it."""
import ast
import copy
import inspect
import textwrap
import types

from numba import config, cuda

_cache = {}


def py_func(kernel):
    """The plain Python function behind a @cuda.jit kernel (or the function itself)."""
    return getattr(kernel, "py_func", kernel)


def specialize(kernel, T):
    """`kernel` compiled with its global T bound to `T`: same code, another tile width."""
    key = (py_func(kernel), T, None)
    if key not in _cache:
        fn = py_func(kernel)
        bound = types.FunctionType(fn.__code__, {**fn.__globals__, "T": T}, fn.__name__,
                                   fn.__defaults__, fn.__closure__)
        _cache[key] = cuda.jit(bound)
    return _cache[key]


def syntax_tree(kernel):
    """The kernel's `def` as an ast.FunctionDef, with its original line numbers and no decorators."""
    if hasattr(kernel, "tiledlab_tree"):  # a variant built below: its source is the rewritten tree
        return copy.deepcopy(kernel.tiledlab_tree)
    fn = py_func(kernel)
    lines, first = inspect.getsourcelines(fn)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first - 1)  # keep real line numbers: the simulator keys shared arrays by line
    func = tree.body[0]
    func.decorator_list = []
    return func


def build(kernel, func, T, tag, extra_globals=None, helpers=""):
    """Compile the rewritten FunctionDef `func` of `kernel` with T bound; cached under `tag`.

    `helpers` is source for functions the rewritten kernel calls. They are compiled into the kernel's
    own namespace, as device functions on a GPU and as plain Python on the simulator, where sharing
    the namespace lets them see the simulator's per-launch `cuda` module.
    """
    key = (py_func(kernel), T, tag)
    if key not in _cache:
        fn = py_func(kernel)
        namespace = {**fn.__globals__, "T": T, **(extra_globals or {})}
        exec(compile(helpers, "<tiledlab helpers>", "exec"), namespace)
        if not config.ENABLE_CUDASIM:
            for name in _defined(helpers):
                namespace[name] = cuda.jit(device=True)(namespace[name])
        tree = copy.deepcopy(func)
        module = ast.fix_missing_locations(ast.Module(body=[func], type_ignores=[]))
        exec(compile(module, inspect.getsourcefile(fn) or "<kernel>", "exec"), namespace)
        _cache[key] = cuda.jit(namespace[func.name])
        _cache[key].tiledlab_tree = tree
    return _cache[key]


def _defined(source):
    return [node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)]


def is_call(node, dotted):
    """True when `node` is a call of the dotted name, e.g. 'cuda.syncthreads'."""
    return isinstance(node, ast.Call) and ast.unparse(node.func) == dotted
