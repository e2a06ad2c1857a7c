"""The kernel contract (tiledlab.core.kernels), checked on every path that builds a kernel. A kernel's code is read
as a syntax tree from its file as it is now (a file edited since the import is refused); what breaks a rule is
a ValueError that names the line, before anything is compiled or launched.
"""
import ast
import builtins
import linecache
import os
import re
import sysconfig
import types
from collections import Counter

import numpy as np

from ..i18n import N_, _
from . import barriers

OPERANDS = ("A", "B", "C")
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def is_kernel(obj):
    """True for a @cuda.jit kernel (GPU dispatcher or simulator kernel), False for anything else."""
    return hasattr(obj, "py_func") and callable(getattr(obj, "__getitem__", None))


def is_device_function(obj):
    """True for a @cuda.jit(device=True) function, on a GPU or on the simulator."""
    return bool(getattr(obj, "_device", False) or getattr(obj, "targetoptions", {}).get("device", False))


def plain_function(kernel):
    """The plain function behind a @cuda.jit kernel; refused when it cannot be built again with other constants."""
    fn = getattr(kernel, "py_func", kernel)
    if fn.__name__ == "<lambda>":
        raise ValueError(_("this kernel is a lambda; tiledlab reads a kernel's def to check and count it: write it as "
                           "def name(A, B, C): under @cuda.jit"))
    if fn.__code__.co_freevars:
        raise ValueError(_("kernel {name} uses {names} from the function it was defined in; tiledlab binds a "
                           "kernel's constants as module globals, so define the kernel at the top level of a module "
                           "or notebook cell, with its constants as globals").format(
                               name=fn.__name__, names=", ".join(fn.__code__.co_freevars)))
    syntax_tree(fn, fn.__name__)
    return fn


class Unreadable(ValueError):
    """A kernel's source cannot be read: refused when it is checked, counted or built, not where it is defined."""


CELL_MAGICS = ("<timed exec>", "<timed eval>", "<magic-timeit>")  # IPython's names for a cell's code run by a magic


def syntax_tree(fn, name):
    """The function's `def`, with its line numbers and no decorators; refused when its file changed since."""
    filename = fn.__code__.co_filename
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, fn.__globals__)
    if not lines and filename in CELL_MAGICS:
        raise Unreadable(_("kernel {name}: a cell magic (%%time, %%timeit) runs the cell without keeping its source, "
                           "which tiledlab reads to check and count a kernel: remove the magic from this cell, and "
                           "time the check alone if you like, on a line of its own: %time check(...)").format(
                               name=name))
    if not lines:
        raise Unreadable(_("kernel {name}: its source code cannot be read (typed at the Python prompt?); tiledlab "
                           "reads a kernel's source to check and count it: define it in a file or a notebook "
                           "cell").format(name=name))
    try:
        module = ast.parse("".join(lines), filename)
        code = next((c for c in _compiled(module, filename, fn.__name__, fn.__code__.co_firstlineno)
                     if c == fn.__code__), None)
    except SyntaxError:
        code = None
    if code is None:
        raise ValueError(_("kernel {name}: {file} changed since the kernel was defined, so the code that runs is not "
                           "the code tiledlab reads: import it again (or run its cell again), then retry").format(
                               name=name, file=filename))
    func = next(node for node in ast.walk(module) if isinstance(node, ast.FunctionDef) and node.name == fn.__name__
                and min([node.lineno] + [d.lineno for d in node.decorator_list]) == code.co_firstlineno)
    if typed := next(filter(None, map(_other_arrays, func.decorator_list)), None):
        raise ValueError(_("kernel {name}, line {line}: @cuda.jit({signature!r}) compiles it for {types} arrays only, "
                           "and tiledlab, like a launch on float32 A and B, passes float32 ones (a GPU finds no "
                           "matching definition): leave the signature out, @cuda.jit, and numba compiles for the "
                           "arrays given").format(name=name, line=typed[0], signature=typed[1], types=typed[2]))
    func.decorator_list = []
    return func


def _other_arrays(decorator):
    """(line, signature, its array types) of a `@cuda.jit("void(float64[:, :], ...)")` whose arrays are not all
    float32, else None."""
    if not (is_call(decorator, "cuda.jit") and decorator.args and isinstance(decorator.args[0], ast.Constant)
            and isinstance(decorator.args[0].value, str)):
        return None
    kinds = sorted(set(re.findall(r"(\w+)\s*\[", decorator.args[0].value)) - {"float32"})
    return (decorator.lineno, decorator.args[0].value, ", ".join(kinds)) if kinds else None


def _compiled(module, filename, name, line):
    """The code objects Python may have made of the def `name` at `line`: as a file, and as IPython runs a cell."""
    yield _code_at(compile(module, filename, "exec", dont_inherit=True), name, line)
    for node in module.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        if first <= line <= node.end_lineno:
            yield _code_at(compile(ast.Module([node], []), filename, "exec", dont_inherit=True), name, line)


def _code_at(code, name, line):
    """The code object of the function `name` defined at `line` inside `code`, or None."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found = const if (const.co_name, const.co_firstlineno) == (name, line) else _code_at(const, name, line)
            if found:
                return found
    return None


def parse_kernel(text, filename, name):
    """The FunctionDef named `name` in generated source `text` (the generator writes `def name`)."""
    return next(n for n in ast.parse(text, filename).body if isinstance(n, ast.FunctionDef) and n.name == name)


def enforce(func, name, namespace=None, threads=None, constants=None):
    """Refuse kernels that break the rules every build relies on (see tiledlab.core.kernels); what numba cannot
    build for a GPU is refused in the device functions the kernel calls (found in `namespace`) too. Given the
    block's `threads` (x, y) and its `constants`, a guard every thread of the block passes sends none apart."""
    params = [a.arg for a in func.args.args]
    if len(params) != len(OPERANDS) or func.args.vararg or func.args.kwarg or func.args.kwonlyargs or \
            func.args.posonlyargs:
        raise ValueError(_("kernel {name}({args}) must take exactly three arguments (A, B, C), as plain parameters, "
                           "computing C = A @ B").format(name=name, args=ast.unparse(func.args)))
    for node in ast.walk(func):
        if is_call(node, "cuda.shared.array") or is_call(node, "cuda.local.array"):
            _check_shape(node, name)
    for line, n in Counter(n.lineno for n in ast.walk(func) if is_call(n, "cuda.shared.array")).items():
        if n > 1:
            raise ValueError(_("kernel {name}, line {line}: {n} cuda.shared.array declarations on one line; write one "
                               "per line (numba's simulator merges them into one array)").format(name=name, line=line,
                                                                                                n=n))
    for tree, scope in ((func, namespace or {}), *_helpers(func, namespace or {})):
        if found := _unbuildable(list(ast.walk(tree))) or _unbuilt_python(tree, scope, kernel=tree is func):
            raise Fault(refused(*found))
    if found := barriers.apart(func, threads, constants) or _endless(func):
        raise Hangs(refused(*found))


def _unbuildable(nodes):
    """(node, why) for the first of a function's `nodes` numba cannot compile for a GPU though the simulator runs."""
    if walrus := next((n for n in nodes if isinstance(n, ast.NamedExpr)), None):
        return walrus, _("numba cannot compile an assignment expression (:=) for a GPU (the simulator runs it): "
                         "assign {name} on a line of its own").format(name=walrus.target.id)
    truths = _truths(_given(nodes))
    if flag := next((n for n in nodes if barriers.is_barrier(n) and n.args and _is_truth(n.args[0], truths)), None):
        return flag, unbuildable_vote(ast.unparse(flag.func), "bool")
    walked = {id(n.iter) for n in nodes if isinstance(n, ast.For)} | {id(c) for n in nodes if isinstance(
        n, ast.Compare) for op, c in zip(n.ops, n.comparators) if isinstance(op, (ast.In, ast.NotIn))}
    if made := next((n for n in nodes if isinstance(n, CONTAINERS) and isinstance(getattr(n, "ctx", ast.Load()),
                     ast.Load) and not (isinstance(n, ast.List) and id(n) in walked)), None):  # for x in [..]: fine
        return made, _("numba cannot build a list, dict, set or generator inside a GPU kernel (the simulator "
                       "runs it): write a tuple, (a, b), or a cuda.local.array")
    return None


def unbuildable_vote(vote, kind):
    """Why numba cannot build `vote` (cuda.syncthreads_or, ...) of a value of numba's type `kind` for a GPU."""
    kind = "float" if kind.startswith("float") else kind  # float32 on the simulator may be float64 on a GPU
    what = _("a condition (True or False)") if kind == "bool" else _("a {kind} value").format(kind=kind)
    return _("numba cannot compile {vote} of {what} for a GPU (the simulator runs it): give it a whole number, as in "
             "{vote}(1 if ... else 0)").format(vote=vote, what=what)


def _unbuilt_python(func, namespace, kernel):
    """(node, why) for the first Python form in `func` (a kernel, or a device function it calls) that numba's GPU
    compiler refuses though the simulator runs it: statements, calls and globals outside numba's CUDA Python."""
    local = local_names(func)
    inner = {id(n) for d in ast.walk(func) if isinstance(d, (*DEFINITIONS, ast.Lambda)) and d is not func
             for n in ast.walk(d)}  # a def inside the kernel may return a value
    for node in ast.walk(func):
        if found := _python_only(node, namespace, local, kernel and id(node) not in inner):
            what, fix, name = found
            why = _("numba cannot compile {what} in a GPU kernel (the simulator runs it): {fix}").format(
                what=_(what).format(name=name), fix=_(fix).format(name=name))
            return node, why, ast.unparse(node).splitlines()[0]
    return None


def _python_only(node, namespace, local, kernel):
    """(what, fix, name) when `node` is Python that numba's CUDA target cannot build, else None (each form checked with
    numba-cuda 0.30's compiler for sm_90: a def or lambda inside, type(), iter(), next() and isinstance() it may
    build)."""
    if isinstance(node, tuple(PYTHON_ONLY)):
        return (*PYTHON_ONLY[type(node)], "")
    if kernel and isinstance(node, ast.Return) and node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None):
        return N_("return with a value"), N_("store the result in C: a kernel returns nothing"), ""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        return N_("a string method ({name})"), N_("print numbers and plain text only"), ast.unparse(node)
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local and \
            isinstance(namespace.get(node.id), (list, dict, set)):
        return N_("a Python list, dict or set ({name}, a global)"), N_("make it a tuple"), node.id
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) and \
            node.value.id not in local and isinstance(namespace.get(node.value.id), np.ndarray):
        return N_("a store into the global array {name} (numba makes it a constant)"), \
            N_("store only into C and into shared or local arrays"), node.value.id
    if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in local):
        return _python_call(node, namespace)
    return None


def in_library(fn):
    """True for a function of Python's library, an installed package or tiledlab (whose tiledlab.core.ptx copies are
    plain functions on the simulator only): not the student's helper."""
    where = os.path.abspath(fn.__code__.co_filename)
    return any(where.startswith(os.path.abspath(p) + os.sep) for p in LIBRARIES)


LIBRARIES = {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
             os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}


def _python_call(node, namespace):
    """(what, fix, name) for a call numba's CUDA target cannot build: a plain Python function, a builtin it lacks,
    numpy making an array; else None."""
    fn = _called(node.func, namespace)
    if fn is None and isinstance(node.func, ast.Name) and node.func.id not in namespace:
        fn = getattr(builtins, node.func.id, None)
    name = ast.unparse(node.func)
    if isinstance(fn, types.FunctionType) and not is_device_function(fn) and not in_library(fn):
        return N_("a call of the plain Python function {name}"), N_("decorate {name} with @cuda.jit(device=True)"), \
            name
    if any(fn is b for b in PYTHON_BUILTINS):
        return N_("a call of {name}"), N_("write it with numbers, comparisons and if: numba fixes every type when it "
                                          "compiles the kernel"), name
    if getattr(fn, "__name__", None) in NUMPY_ARRAYS and fn is getattr(np, fn.__name__, None):
        return N_("a call of {name}"), N_("give each thread an array of its own with cuda.local.array"), name
    return None


PYTHON_ONLY = {ast.Try: (N_("try/except"), N_("test the condition with if instead")),
               ast.With: (N_("a with block"), N_("write its body without with")),
               ast.JoinedStr: (N_("an f-string"), N_("print the values as arguments: print(\"acc\", acc)")),
               ast.Yield: (N_("a generator (yield)"), N_("loop in the kernel itself")),
               ast.YieldFrom: (N_("a generator (yield)"), N_("loop in the kernel itself"))}
PYTHON_ONLY.update({getattr(ast, "TryStar"): PYTHON_ONLY[ast.Try]} if hasattr(ast, "TryStar") else {})
PYTHON_BUILTINS = (getattr, hasattr, setattr, id, repr, str, format, open, input, eval, exec, sorted, list,
                   dict, set, hash)  # (locals, globals, vars: the count says they look names up)
NUMPY_ARRAYS = {"zeros", "ones", "empty", "full", "array", "arange", "zeros_like", "ones_like", "empty_like",
                "full_like", "linspace", "eye", "identity", "asarray", "copy", "concatenate", "stack"}


CONTAINERS = (ast.List, ast.ListComp, ast.Dict, ast.DictComp, ast.Set, ast.SetComp, ast.GeneratorExp)


def _given(nodes):
    """{name: the values assigned to it} among a function's `nodes`."""
    given = {}
    for node in nodes:
        for target, value in barriers.assignments(node):
            if isinstance(target, ast.Name):
                given.setdefault(target.id, []).append(value)
    return given


def _helpers(func, namespace, seen=None):
    """(syntax tree, globals) of the device functions `func` calls, and of those they call, with their files' lines."""
    seen = set() if seen is None else seen
    for node in ast.walk(func):
        fn = _called(node.func, namespace) if isinstance(node, ast.Call) else None
        fn = getattr(fn, "py_func", None) if is_device_function(fn) else None
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        try:
            tree = syntax_tree(fn, fn.__name__)
        except (ValueError, TypeError, OSError):
            continue  # no source: the count refuses the call (countable.helper_problem)
        yield tree, fn.__globals__
        yield from _helpers(tree, fn.__globals__, seen)


def _called(func, namespace):
    """What a call's `func` names: a global, or a module's function (helpmod.mul); None for anything else."""
    if isinstance(func, ast.Name):
        return namespace.get(func.id)
    base = _called(func.value, namespace) if isinstance(func, ast.Attribute) else None
    return getattr(base, func.attr, None) if isinstance(base, types.ModuleType) else None


def _is_truth(e, truths=()):
    """True for an expression whose value is True or False: a comparison, `not`, a bool, bool(...), `and`, `or` and
    `x if c else y` of such values, and the names in `truths`."""
    if isinstance(e, (ast.BoolOp, ast.IfExp)):
        return all(_is_truth(v, truths) for v in (e.values if isinstance(e, ast.BoolOp) else (e.body, e.orelse)))
    return isinstance(e, ast.Compare) or isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not) or \
        isinstance(e, ast.Constant) and isinstance(e.value, bool) or isinstance(e, ast.Name) and e.id in truths or \
        isinstance(e, ast.Call) and ast.unparse(e.func) == "bool"


def _truths(given):
    """The names every assignment of which gives True or False (through one another too: b = a, a = x < y)."""
    truths = set()
    while grown := {n for n, values in given.items() if n not in truths and all(_is_truth(v, truths) for v in values)}:
        truths |= grown
    return truths


class Fault(ValueError):
    """A fault of the kernel (a GPU cannot build it, or it would never finish there), not a limit of the count."""


class Hangs(Fault):
    """A kernel that would never finish on a GPU."""


PURE = ("min", "max", "len", "abs", "int", "float", "float32", "int32", "int64")  # calls that change nothing


def _endless(func):
    """(loop, why, its first line) for a while loop no pass can leave: nothing in its body changes a name its
    condition reads (names, shapes, tuples and pure calls only: memory may change; k += 0 changes nothing), and no
    break of its own or return leaves it (its else runs only once it is left)."""
    tuples = {name for name, values in _given(ast.walk(func)).items()
              if all(isinstance(v, ast.Tuple) or ast.unparse(v).endswith(".shape") for v in values)}
    for loop in (n for n in ast.walk(func) if isinstance(n, ast.While)):
        parts, body = list(ast.walk(loop.test)), [n for s in loop.body for n in ast.walk(s)]
        memory = (isinstance(n, ast.Call) and ast.unparse(n.func) not in PURE or isinstance(n, ast.Subscript) and
                  not ast.unparse(n.value).endswith(".shape") and getattr(n.value, "id", None) not in tuples
                  for n in parts)
        if any(memory) or any(isinstance(n, ast.Return) for n in body) or breaks(loop.body):
            continue
        read = sorted({n.id for n in parts if isinstance(n, ast.Name)} & local_names(func) - {
            a.arg for a in func.args.args})
        changed = {t for n in body for target, value in barriers.assignments(n) if not _same(target, value)
                   for t in barriers.names(target)}
        if not changed & set(read):
            why = _("nothing in this loop changes {names} and nothing leaves it (break or return), so a thread that "
                    "enters it never comes out and the kernel never finishes: step the loop (e.g. k += 1), or write it "
                    "as a for loop over range(...)").format(names=_(" or ").join(read) or _("its condition"))
            return loop, why, f"while {ast.unparse(loop.test)}:"
    return None


def _same(target, value):
    """True when assigning `value` to `target` leaves it as it was: k = k, k += 0, k -= 0, k *= 1, k /= 1."""
    if isinstance(value, ast.Name):
        return ast.unparse(target) == value.id
    identity = {ast.Add: 0, ast.Sub: 0, ast.Mult: 1, ast.Div: 1}.get(type(getattr(value, "op", None)))
    return isinstance(value, ast.BinOp) and ast.unparse(value.left) == ast.unparse(target) and \
        isinstance(value.right, ast.Constant) and value.right.value == identity and identity is not None


def breaks(body):
    """True when a break in `body` leaves the loop `body` belongs to: not one of a loop nested in it, but one in such a
    loop's else (which runs in this loop) or in a case of a match."""
    for node in body:
        if isinstance(node, ast.Break):
            return True
        inner = node.orelse if isinstance(node, (ast.For, ast.While)) else [] if isinstance(node, DEFINITIONS) else \
            [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)] + \
            [s for case in getattr(node, "cases", ()) for s in case.body]
        if breaks(inner):
            return True
    return False


def _check_shape(node, name):
    shape = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "shape"), None)
    dims = shape.elts if isinstance(shape, ast.Tuple) else [shape]
    if not all(isinstance(d, ast.Name) or isinstance(d, ast.Constant) and isinstance(d.value, int) for d in dims):
        raise ValueError(_("kernel {name}, line {line}: array shape {shape}: numba compiling for a GPU needs every "
                           "dimension as a number or a constant's name, not an expression; bind the expression as a "
                           "constant of its own").format(name=name, line=node.lineno, shape=ast.unparse(shape)))


def refused(node, why, code=None):
    """The ValueError for `node`: its line, its code, and why it cannot be counted."""
    code = repr(code or ast.unparse(node).strip())
    return ValueError(_("line {line}: {code}: {why}").format(line=node.lineno, code=code, why=why))


SHARED_ARGUMENTS = ("shape", "dtype", "alignment")  # cuda.shared.array's parameters, in order


def shared_arguments(call):
    """{parameter: its expression} of a cuda.shared.array(...) call, given by position or keyword."""
    given = dict(zip(SHARED_ARGUMENTS, call.args))
    given.update((k.arg, k.value) for k in call.keywords)
    if len(call.args) > 3 or any(isinstance(a, ast.Starred) for a in call.args) or \
            not {"shape", "dtype"} <= set(given) <= set(SHARED_ARGUMENTS):
        raise refused(call, _("give cuda.shared.array its shape and dtype (and alignment, if any), by position "
                              "or by name, and nothing else"))
    return given


def shared_declarations(func, namespace):
    """(statement, shape, dtype, alignment or None) of each `s = cuda.shared.array(shape, dtype)` and `s =
    shared_view(smem, ...)` of a kernel, evaluated in `namespace`; one written otherwise is a ValueError."""
    parents = {child: node for node in ast.walk(func) for child in ast.iter_child_nodes(node)}
    local, found = local_names(func), []
    for call in (n for n in ast.walk(func) if is_call(n, "cuda.shared.array")):
        node = parents.get(call)
        if not (isinstance(node, ast.Assign) and node.value is call and len(node.targets) == 1 and
                isinstance(node.targets[0], ast.Name)):
            raise refused(call, _("declare each shared array as a statement of its own, name = "
                                  "cuda.shared.array(shape, dtype), so that its reads and stores are counted"),
                          ast.unparse(node if isinstance(node, ast.stmt) else call))
        given = shared_arguments(call)
        shape, dtype, alignment = (_value(given[k], namespace, local, node) if k in given else None
                                   for k in SHARED_ARGUMENTS)
        try:
            dims = tuple(int(n) for n in np.atleast_1d(shape))
        except (TypeError, ValueError):
            raise refused(node, _("a shared array's shape must be whole numbers, not {shape}").format(
                shape=repr(shape))) from None
        found.append((node, dims, dtype, alignment))
    aligned = {node.targets[0].id: alignment for node, _dims, _dtype, alignment in found}
    for node in ast.walk(func):
        if view := _view(node, namespace):
            base = aligned.get(getattr(node.value.args[0], "id", None))  # smem's alignment, where the offset keeps it
            kept = isinstance(base, int) and 4 * view[0] % base == 0
            found.append((node, view[1:], "float32", base if kept else None))
    return found


def local_names(func):
    """The names a function's code binds: assigned, its parameters, its nested definitions."""
    names = {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    names |= {a.arg for a in ast.walk(func) if isinstance(a, ast.arg)}
    return names | {d.name for d in ast.walk(func) if isinstance(d, DEFINITIONS) and d is not func}


def _view(node, namespace):
    """(offset, rows, cols) of a statement `s = shared_view(smem, offset, rows, cols)`, or None."""
    from . import ptx
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
            and namespace.get(node.value.func.id) is ptx.shared_view and len(node.value.args) == 4:
        return tuple(int(_value(a, namespace, set(), node)) for a in node.value.args[1:])
    return None


def dynamic_bytes(func, namespace):
    """Bytes of dynamic shared memory a launch must reserve: the end of its last shared_view; overlaps refused."""
    views = sorted((v[0], v[0] + v[1] * v[2], n) for n in ast.walk(func) if (v := _view(n, namespace)))
    for (_start, end, _node), (start, _end, node) in zip(views, views[1:]):
        if start < end:
            raise ValueError(_("line {line}: {code}: overlaps the shared view before it").format(
                line=node.lineno, code=ast.unparse(node)))
    return 4 * max((end for _start, end, _node in views), default=0)


def _value(node, namespace, local, statement):
    """A declaration's shape or dtype: numbers, constants' names, tuples of them, dotted names (np.float32)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id not in local and node.id in namespace:
        return namespace[node.id]
    if isinstance(node, ast.Tuple):
        return tuple(_value(e, namespace, local, statement) for e in node.elts)
    if isinstance(node, ast.Attribute):
        owner = _value(node.value, namespace, local, statement)
        if hasattr(owner, node.attr):
            return getattr(owner, node.attr)
    raise refused(statement, _("{part}: a shared array's shape and type must be numbers, the names of constants "
                               "(module globals, known when the kernel compiles) or dotted names such as "
                               "numba.float32").format(part=ast.unparse(node)))


def accumulates(func):
    """True when the kernel `func` adds into C with cuda.atomic.add(C, ...): C must start at zero."""
    params = [a.arg for a in func.args.args]
    return len(params) == len(OPERANDS) and any(
        is_call(n, "cuda.atomic.add") and n.args and isinstance(n.args[0], ast.Name) and n.args[0].id == params[2]
        for n in ast.walk(func))


def is_call(node, dotted):
    """True when `node` is a call of the dotted name, e.g. 'cuda.syncthreads'."""
    return isinstance(node, ast.Call) and ast.unparse(node.func) == dotted
