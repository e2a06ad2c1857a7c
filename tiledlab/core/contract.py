"""The kernel contract, checked on every path that builds a kernel (see tiledlab.core.kernels).

A kernel's code is read as a syntax tree: to check the contract, to count its shared memory, and
for the counting lab to rewrite. Whatever cannot be read or breaks a rule is refused here with a
ValueError that names the line, before anything is compiled or launched.
"""
import ast
import copy
import inspect
import textwrap

import numpy as np

from ..i18n import _

OPERANDS = ("A", "B", "C")


def is_kernel(obj):
    """True for a @cuda.jit kernel (GPU dispatcher or simulator kernel), False for anything else."""
    return hasattr(obj, "py_func") and callable(getattr(obj, "__getitem__", None))


def is_device_function(obj):
    """True for a @cuda.jit(device=True) function, on a GPU or on the simulator."""
    return bool(getattr(obj, "_device", False) or getattr(obj, "targetoptions", {}).get("device", False))


def plain_function(kernel):
    """The plain Python function behind a @cuda.jit kernel, refused when its code cannot be built
    again with other constants: defined at the Python prompt (no source), or closing over names of
    an enclosing function (a build binds constants as globals and could not change those)."""
    fn = getattr(kernel, "py_func", kernel)
    if fn.__code__.co_freevars:
        raise ValueError(_("kernel {name} uses {names} from the function it was defined in; tiledlab binds a "
                           "kernel's constants as module globals, so define the kernel at the top level of a module "
                           "or notebook cell, with its constants as globals").format(
                               name=fn.__name__, names=", ".join(fn.__code__.co_freevars)))
    syntax_tree(fn, fn.__name__)
    return fn


def syntax_tree(fn, name):
    """The function's `def` as an ast.FunctionDef, with its original line numbers and no decorators."""
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        raise ValueError(_("kernel {name}: its source code cannot be read (typed at the Python prompt?); tiledlab "
                           "reads a kernel's source to check and count it: define it in a file or a notebook "
                           "cell").format(name=name)) from None
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first - 1)  # keep real line numbers: the simulator keys shared arrays by line
    func = tree.body[0]
    func.decorator_list = []
    return func


def parse_kernel(text, filename, name):
    """The FunctionDef named `name` in generated source `text`."""
    for node in ast.parse(text, filename).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise ValueError(f"generated source defines no function {name}")


def copy_tree(func):
    return copy.deepcopy(func)


def check(func, name):
    """Refuse kernels that break the rules every build relies on (see tiledlab.core.kernels)."""
    params = [a.arg for a in func.args.args]
    if len(params) != len(OPERANDS) or func.args.vararg or func.args.kwarg or func.args.kwonlyargs:
        raise ValueError(f"kernel {name}({', '.join(params)}) must take exactly three arguments (A, B, C), "
                         "computing C = A @ B")
    lines = {}
    for node in ast.walk(func):
        if is_call(node, "cuda.shared.array") or is_call(node, "cuda.local.array"):
            _check_shape(node, name)
        if is_call(node, "cuda.shared.array"):
            lines[node.lineno] = lines.get(node.lineno, 0) + 1
    for line, n in lines.items():
        if n > 1:
            raise ValueError(f"kernel {name}, line {line}: {n} cuda.shared.array declarations on one line; "
                             "write one per line (numba's simulator merges them into one array)")


def _check_shape(node, name):
    shape = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "shape"), None)
    dims = shape.elts if isinstance(shape, ast.Tuple) else [shape]
    if not all(isinstance(d, ast.Name) or isinstance(d, ast.Constant) and isinstance(d.value, int) for d in dims):
        raise ValueError(f"kernel {name}, line {node.lineno}: array shape {ast.unparse(shape)}: numba "
                         "compiling for a GPU needs every dimension as a number or a constant's name, "
                         "not an expression; bind the expression as a constant of its own")


def shared_declarations(func, namespace):
    """(statement, shape, dtype) of each shared tile of a kernel's FunctionDef: `s = cuda.shared.array(shape,
    dtype)`, and `s = shared_view(smem, offset, rows, cols)` of its dynamic shared memory (core.ptx), evaluated in
    `namespace` (the kernel's globals and constants). The dynamic array itself (shape 0) is none."""
    found = []
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and is_call(node.value, "cuda.shared.array"):
            call = node.value
            args = call.args[:2] + [k.value for k in call.keywords if k.arg in ("shape", "dtype")]
            shape, dtype = (_value(a, namespace) for a in args[:2])
            if shape != 0:
                found.append((node, tuple(int(n) for n in np.atleast_1d(shape)), dtype))
        elif view := _view(node, namespace):
            found.append((node, view[1:], "float32"))
    return found


def _view(node, namespace):
    """(offset, rows, cols) of a statement `s = shared_view(smem, offset, rows, cols)`, or None."""
    from . import ptx
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
            and namespace.get(node.value.func.id) is ptx.shared_view and len(node.value.args) == 4:
        return tuple(int(_value(a, namespace)) for a in node.value.args[1:])
    return None


def dynamic_bytes(func, namespace):
    """Bytes of dynamic shared memory a launch of the kernel must reserve: the end of its last shared_view
    (0 without any); a ValueError when two views overlap (their accesses could not be told apart)."""
    views = sorted((v[0], v[0] + v[1] * v[2], n) for n in ast.walk(func) if (v := _view(n, namespace)))
    for (_start, end, _node), (start, _end, node) in zip(views, views[1:]):
        if start < end:
            raise ValueError(f"line {node.lineno}: {ast.unparse(node)}: overlaps the shared view before it")
    return 4 * max((end for _start, end, _node in views), default=0)


def _value(node, namespace):
    """The value of a declaration's shape or dtype: numbers, constants' names, tuples of them, and
    dotted names (np.float32); anything else is a ValueError (the contract allows nothing else)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return namespace[node.id]
    if isinstance(node, ast.Tuple):
        return tuple(_value(e, namespace) for e in node.elts)
    if isinstance(node, ast.Attribute):
        return getattr(_value(node.value, namespace), node.attr)
    raise ValueError(f"line {node.lineno}: {ast.unparse(node)}: a shared array's shape and type must be numbers, "
                     "constants' names or dotted names")


def is_call(node, dotted):
    """True when `node` is a call of the dotted name, e.g. 'cuda.syncthreads'."""
    return isinstance(node, ast.Call) and ast.unparse(node.func) == dotted
