"""One kernel source, many builds: bind compile-time constants, or compile a rewritten syntax tree."""
import ast
import copy
import inspect
import textwrap
import types

from numba import cuda

from ..backend import SIMULATOR

_cache = {}


def py_func(kernel):
    """The plain Python function behind a @cuda.jit kernel (or the function itself)."""
    return getattr(kernel, "py_func", kernel)


def is_kernel(obj):
    """True for a @cuda.jit kernel (GPU dispatcher or simulator kernel), False for anything else."""
    return hasattr(obj, "py_func") and callable(getattr(obj, "__getitem__", None))


def constants_for(kernel, T=None, **constants):
    """The compile-time constants a build of `kernel` binds: T and the others given, plus those a
    derived kernel computes from them (its `tiledlab_derived`, e.g. a padded row length T + 1)."""
    if T is not None:
        constants["T"] = T
    for name, rule in getattr(kernel, "tiledlab_derived", {}).items():
        constants[name] = rule(constants)
    return constants


def specialize(kernel, T=None, **constants):
    """`kernel` compiled with its globals `T` (and any other named constants) bound: same code, new sizes."""
    constants = constants_for(kernel, T, **constants)
    fn = py_func(kernel)
    key = (fn, tuple(sorted(constants.items())), None)
    if key not in _cache:
        check_contract(syntax_tree(kernel), fn.__name__)
        bound = types.FunctionType(fn.__code__, {**fn.__globals__, **constants}, fn.__name__,
                                   fn.__defaults__, fn.__closure__)
        _cache[key] = cuda.jit(bound)
        for attr in ("tiledlab_tree", "tiledlab_derived"):
            if hasattr(kernel, attr):
                setattr(_cache[key], attr, getattr(kernel, attr))
    return _cache[key]


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
        namespace = {**fn.__globals__, **constants, **(extra_globals or {})}
        exec(compile(helpers, "<tiledlab helpers>", "exec"), namespace)
        if not SIMULATOR:
            for name in _defined(helpers):
                namespace[name] = cuda.jit(device=True)(namespace[name])
        _cache[key] = _compile(func, namespace, fn)
    return _cache[key]


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
