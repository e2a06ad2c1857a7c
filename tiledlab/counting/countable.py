"""What the counting rewrite can follow, checked on a kernel's syntax tree before it is rewritten: whatever a load,
a store or a barrier could go unseen through (another name for an array or for numba's `cuda`, a view, an index that
is not one element, a nested function, `global`, a barrier inside an expression, a helper that uses `cuda`, core.ptx's
calls other than by their own names with arguments by position) is refused, with its line and what to write instead."""
import ast
import builtins
import functools
import inspect
import math
import textwrap
import types

from numba import cuda

from ..core import ptx
from ..core.barriers import BARRIERS, assignments, is_barrier
from ..core.contract import is_call, local_names, refused
from ..core.rules import is_whole
from ..i18n import N_, _

ARRAY_ATTRIBUTES = ("shape", "size")  # reading these reads no element (nor len(X), X.shape[0])
SHORT = 256  # the largest constant read as part of a bound (see unguarded): every limit on a loop's passes is above it
# core.ptx's functions: argument position → the kind of array it takes (ptx.SIGNATURES names them)
_ARRAY_ARGUMENTS = {"ldg4": {0: "input"}, "cp_async4": {0: "shared", 3: "input"}, "shared_view": {0: "dynamic"}}


def is_atomic_add(node, output):
    """True for a call cuda.atomic.add(C, ...) into the kernel's output `output`."""
    return is_call(node, "cuda.atomic.add") and bool(node.args) and isinstance(node.args[0], ast.Name) and \
        node.args[0].id == output


def is_len(node, namespace, local=()):
    """True for a call len(X) of Python's len with a name X: X.shape[0] of an array, which reads no element."""
    return isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords and \
        isinstance(node.args[0], ast.Name) and _callable(node.func, namespace, local) is len


# numba-cuda's operations across a warp: the simulator has none of them, a GPU computes them for 32 threads together
_WARP = ("activemask", "all_sync", "any_sync", "ballot_sync", "eq_sync", "lanemask_lt", "match_all_sync",
         "match_any_sync", "shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync")
# The parts of numba's cuda that a barrier, a shared array or a warp's operation could go unseen through under another
# name, with members (on a GPU; the simulator's module has none of them until a kernel runs)
_HIDDEN = {"shared": ("array",), "cg": ("this_grid",), "atomic": (), "syncwarp": (), **{b: () for b in BARRIERS},
           **{w: () for w in _WARP}}


@functools.cache
def _cuda_parts():
    """{id: 'cuda.shared', 'cuda.shared.array', ...}"""
    parts = {name: getattr(cuda, name, None) for name in _HIDDEN}
    parts.update({f"{name}.{m}": getattr(parts[name], m, None) for name, members in _HIDDEN.items() for m in members})
    return {id(part): f"cuda.{name}" for name, part in parts.items() if part is not None}


def cuda_part(value):
    """'cuda' for numba's cuda module, 'cuda.syncthreads', 'cuda.shared.array', ... for its parts; else None."""
    return "cuda" if value is cuda else _cuda_parts().get(id(value))


def _renamed(used, part):
    if part.removeprefix("cuda.") in _WARP:
        return _(_ACROSS_A_WARP).format(used=used)
    if part == "cuda":
        return _("{used} is numba's cuda module under another name: write cuda.syncthreads() and the like with the "
                 "module named cuda, so that every barrier is seen").format(used=used)
    return _("{used} is numba's {part} under another name: write {part} as it stands, with the module named cuda, "
             "so that every barrier and shared array is seen").format(used=used, part=part)


def ptx_name(node, namespace, local=()):
    """The name of the core.ptx function that `node` (a name, or dotted through modules) is; else None."""
    return _ptx_of(_global_value(node, namespace, local))


def _ptx_of(value):
    try:
        return ptx.FUNCTIONS.get(value)
    except TypeError:  # unhashable: no function of ptx
        return None


def _global_value(node, namespace, local):
    """The value of a global name or of a dotted name through modules (ptx.ldg4); None otherwise."""
    if isinstance(node, ast.Name):
        return None if node.id in local else namespace.get(node.id)
    if isinstance(node, ast.Attribute):
        owner = _global_value(node.value, namespace, local)
        return getattr(owner, node.attr, None) if isinstance(owner, types.ModuleType) else None
    return None


def ptx_call(node, namespace, local=()):
    """The ptx function a call `node` makes by its own name (ldg4(...), ...), or None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        name = ptx_name(node.func, namespace, local)
        return name if name == node.func.id else None
    return None


def check_countable(func, inputs, output, shared, namespace, declared):
    """Raise a ValueError naming the first line of the kernel's FunctionDef `func` through which a load, a store or
    a barrier could go unseen; `namespace` holds its globals and constants, `declared` its shared_declarations."""
    scan = _Scan(func, inputs, output, shared, namespace, declared)
    first = min((p for p in map(scan.problem, ast.walk(func)) if p), key=lambda p: (p[0].lineno, p[0].col_offset),
                default=None)
    if first:
        raise refused(first[0], first[1], scan.code(first[0]))


class _Scan:
    def __init__(self, func, inputs, output, shared, namespace, declared):
        self.func, self.inputs, self.output, self.shared = func, tuple(inputs), output, tuple(shared)
        self.alignment = {node.targets[0].id: alignment for node, _shape, _dtype, alignment in declared}
        self.dynamic = tuple(node.targets[0].id for node, shape, *_ in declared if shape == (0,))
        self.arrays = (*self.inputs, output, *self.shared, *self.dynamic)  # dynamic: used only by shared_view
        self.namespace = namespace
        self.parents = {child: node for node in ast.walk(func) for child in ast.iter_child_nodes(node)}
        self.local = local_names(func)
        self.atomic_line = next((n.lineno for n in ast.walk(func) if is_atomic_add(n, output)), None)

    def problem(self, node):
        """(node, why) when `node` could hide an access or a barrier; None when it is fine."""
        check = getattr(self, f"_{type(node).__name__}", None)
        why = check(node) if check else None
        return (node, why) if why else None

    def code(self, node):
        """The code to quote for `node`: its simple statement, or the first line of its compound one."""
        while node in self.parents and not isinstance(node, ast.stmt):
            node = self.parents[node]
        return ast.unparse(node).strip().splitlines()[0]

    # --- names: the arrays (A, B, C and the shared arrays), numba's cuda, core.ptx's functions ----------------
    def _Name(self, node):
        if node.id in self.arrays:
            return self._array_use(node)
        parent = self.parents.get(node)
        if node.id == "cuda":
            if self.namespace.get("cuda") is not cuda:
                return _("the kernel's global cuda is not numba's cuda module: import it as `from numba import cuda`, "
                         "so that every barrier is seen")
            if isinstance(node.ctx, ast.Load) and isinstance(parent, ast.Attribute) and parent.value is node:
                return None
            return _("name numba's cuda module only cuda, and use it as cuda.<name>, e.g. cuda.syncthreads()")
        name = ptx_name(node, self.namespace, self.local)
        if name:  # tiledlab.core.ptx's function
            if isinstance(parent, ast.Call) and parent.func is node:
                return None if node.id == name else \
                    _("{used} is tiledlab.core.ptx's {name} under another name: call it as {name}(...)").format(
                        used=node.id, name=name)
            return _("call {name}(...) where it stands; under another name (an alias, a container, an argument) "
                     "the loads, stores and groups it makes would not be counted").format(name=name)
        if node.id in self.local:
            return None
        value = self.namespace.get(node.id)
        if isinstance(value, slice):
            return _(_SLICE)
        part = cuda_part(value)
        return _renamed(node.id, part) if part else None

    def _array_use(self, node):
        name, parent = node.id, self.parents.get(node)
        if not isinstance(node.ctx, ast.Load):
            if name in self.shared + self.dynamic and isinstance(parent, ast.Assign) and parent.targets == [node] and \
                    (is_call(parent.value, "cuda.shared.array") or
                     ptx_call(parent.value, self.namespace) == "shared_view"):
                return None  # its declaration (shared_arrays refuses two of one name)
            return _("{name} names an array of the kernel: give other values other names").format(name=name)
        if isinstance(parent, ast.Subscript) and parent.value is node:
            return None  # X[i, j]: _Subscript checks the index
        if isinstance(parent, ast.Attribute) and parent.value is node:
            return None if parent.attr in ARRAY_ATTRIBUTES else \
                _("read only {name}.shape of an array; {name}.{attr} could read its elements uncounted").format(
                    name=name, attr=parent.attr)
        if is_len(parent, self.namespace, self.local):
            return None  # len(X): X.shape[0]
        if any(node is parent.args[k] for k in _ARRAY_ARGUMENTS.get(ptx_call(parent, self.namespace, self.local), {})
               if k < len(parent.args)):
            return None  # ldg4(A, i, j), cp_async4(sA, di, dj, A, si, sj): _Call checks which array goes where
        if name == self.output and is_atomic_add(parent, name) and parent.args[0] is node:
            index = parent.args[1] if len(parent.args) == 3 and not parent.keywords else None
            if isinstance(self.parents.get(parent), ast.Expr) and isinstance(index, ast.Tuple) and \
                    len(index.elts) == 2 and not any(isinstance(e, (ast.Slice, ast.Starred)) for e in index.elts):
                return None
            return _("write the add as a statement of its own, cuda.atomic.add({name}, (i, j), value): one element of "
                     "{name}, so that it can be counted").format(name=self.output)
        if isinstance(parent, ast.Call) and node in parent.args + [k.value for k in parent.keywords]:
            return _("passing {name} to {function}: loads and stores inside a function are not counted; index "
                     "{name}[i, j] in the kernel itself").format(name=name, function=ast.unparse(parent.func))
        return _("use {name} only as {name}[i, j] (or {name}.shape); through another name, a container or a "
                 "loop its loads could not be counted").format(name=name)

    def _Subscript(self, node):
        if not (isinstance(node.value, ast.Name) and node.value.id in self.arrays):
            return None
        name, index = node.value.id, node.slice
        if not (isinstance(index, ast.Tuple) and len(index.elts) == 2):
            return _("tiledlab counts 2-D accesses written as {name}[i, j], both indices in the brackets; "
                     "{access} is a row (a view) or an index it cannot see").format(name=name, access=ast.unparse(node))
        if any(isinstance(e, (ast.Slice, ast.Starred)) for e in index.elts):
            return _("a slice of {name} is a view whose loads could not be counted: index {name}[i, j]").format(
                name=name)
        if any(isinstance(e, (ast.Tuple, ast.List, ast.Set, ast.Dict)) or isinstance(e, ast.Constant) and
               not is_whole(e.value) for e in index.elts):
            return _("index {name}[i, j] with two whole numbers, one element at a time").format(name=name)
        if isinstance(node.ctx, ast.Load):
            return None
        if name in self.inputs:
            return _("{name} is an input of C = A @ B: a kernel stores only into {output}").format(
                name=name, output=self.output)
        parent = self.parents.get(node)
        if name == self.output and self.atomic_line:
            return _("{name} is added into with cuda.atomic.add at line {line}: where threads add into one element, "
                     "every store into {name} must be such an add").format(name=name, line=self.atomic_line)
        if isinstance(parent, ast.Assign) and parent.targets == [node] or \
                isinstance(parent, ast.AugAssign) and parent.target is node:
            return None
        kind = _("shared-memory") if name in self.shared else _("global")
        return _("write one {kind} store per statement, as {name}[i, j] = value, so that each can be counted").format(
            kind=kind, name=name)

    # --- numba's cuda module and its barriers -----------------------------------------------------------
    def _Attribute(self, node):
        if node.attr in _NAMESPACES:
            return _(_LOOKUP).format(what=ast.unparse(node))
        on_cuda = isinstance(node.value, ast.Name) and node.value.id == "cuda"
        owner, parent = _global_value(node.value, self.namespace, self.local), self.parents.get(node)
        if node.attr in _WARP and (on_cuda or owner is cuda):
            return _(_ACROSS_A_WARP).format(used=ast.unparse(node))
        if node.attr in _HIDDEN and not on_cuda and owner is not cuda:  # _HIDDEN: the barriers too
            return _("{used}: write cuda.{attr} with the module named cuda, as it stands, so that every barrier "
                     "and shared array is seen").format(used=ast.unparse(node), attr=node.attr)
        name = ptx_name(node, self.namespace, self.local)
        if name:
            return _("{used} is tiledlab.core.ptx's {name}: import it with `from tiledlab.core.ptx import {name}` "
                     "and call it as {name}(...), so that the count sees it").format(used=ast.unparse(node), name=name)
        if not on_cuda:
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id == "cuda" or owner is cuda:
                return None  # cuda.<name>.<more>, and cu.<name>: cuda.<name> and the name cu are checked
            part = cuda_part(_global_value(node, self.namespace, self.local))
            return _renamed(ast.unparse(node), part) if part else None
        if node.attr == "shared":
            if isinstance(parent, ast.Attribute) and parent.attr == "array" and \
                    isinstance(self.parents.get(parent), ast.Call) and self.parents[parent].func is parent:
                return None  # a declaration: contract.shared_declarations refuses any other form of it
            return _("use cuda.shared only to declare a shared array, name = cuda.shared.array(shape, dtype); "
                     "under another name its reads and stores would not be counted")
        if node.attr in BARRIERS:
            return None if isinstance(parent, ast.Call) and parent.func is node else \
                _("call cuda.{attr}(...) where it stands; under another name it would be an unseen barrier").format(
                    attr=node.attr)
        if node.attr == "cg" or node.attr.startswith("sync"):
            return _("cuda.{attr}: the hazard check knows the barriers cuda.syncthreads() and "
                     "cuda.syncthreads_count/_and/_or(p) only").format(attr=node.attr)
        return None

    def _Call(self, node):
        if is_barrier(node):
            parent = self.parents.get(node)
            if isinstance(parent, ast.Expr) or isinstance(parent, ast.Assign) and \
                    len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
                return None
            return _("write the barrier as a statement of its own, cuda.syncthreads() or "
                     "n = cuda.syncthreads_count(p), so that the count sees where it happens")
        name = ptx_call(node, self.namespace, self.local)
        if name:
            return self._ptx_call(node, name)
        if ptx_name(node.func, self.namespace, self.local):
            return None  # under another name: _Name or _Attribute refuses it
        func = node.func
        if isinstance(func, ast.Name) and func.id in self.local:
            return _("call {name}: call only functions defined outside the kernel").format(name=func.id)
        if not isinstance(func, (ast.Name, ast.Attribute)):
            return _("call functions by name: {call}(...) could not be followed").format(call=ast.unparse(func))
        return helper_problem(_callable(func, self.namespace, self.local), ast.unparse(func))

    # --- tiledlab.core.ptx: wide loads and asynchronous copies -------------------------------------------
    def _ptx_call(self, node, name):
        params = ptx.SIGNATURES[name]
        if node.keywords or len(node.args) != len(params) or any(isinstance(a, ast.Starred) for a in node.args):
            return _("{name} takes {arity} arguments, given by position: {signature}").format(
                name=name, arity=len(params), signature=f"{name}({', '.join(params)})")
        why = next(filter(None, (self._ptx_array(node.args[k], name, kind)
                                 for k, kind in _ARRAY_ARGUMENTS.get(name, {}).items())), None)
        if why:
            return why
        if name == "shared_view":
            target = self.parents.get(node)
            return None if isinstance(target, ast.Assign) and len(target.targets) == 1 and \
                isinstance(target.targets[0], ast.Name) and target.targets[0].id in self.shared else \
                _("declare each view as a shared tile of its own, sA = shared_view(smem, offset, rows, cols)")
        if name != "ldg4" and not isinstance(self.parents.get(node), ast.Expr):
            return _("write {name}(...) as a statement of its own, so that the count sees where it happens").format(
                name=name)
        if name == "cp_async_wait":
            return self._wait_count(node.args[0])
        return None

    def _ptx_array(self, arg, name, kind):
        given = arg.id if isinstance(arg, ast.Name) else ast.unparse(arg)
        if kind == "dynamic":
            return None if given in self.dynamic else _(
                "shared_view(smem, offset, rows, cols) views the dynamic shared array declared as "
                "smem = cuda.shared.array(0, float32, alignment=16); {given} is not one").format(given=given)
        if kind == "input":
            return None if given in self.inputs else _(
                "{name} reads global memory through the read-only path: its array is an input of the kernel, "
                "{inputs}, by name; {given} is not").format(name=name, inputs=_(" or ").join(self.inputs), given=given)
        if given not in self.shared:
            return _("cp_async4 copies into a shared array, named first: cp_async4(sA, di, dj, A, si, sj); "
                     "{given} is not one").format(given=given)
        alignment = self.alignment.get(given)
        if not (isinstance(alignment, int) and alignment % ptx.BYTES == 0):
            return _("cp_async4 writes 16 bytes at once into {given}: declare it with "
                     "cuda.shared.array(shape, float32, alignment=16)").format(given=given)
        return None

    def _wait_count(self, arg):
        if isinstance(arg, ast.Constant):
            value = arg.value
        elif isinstance(arg, ast.Name) and arg.id not in self.local:
            value = self.namespace.get(arg.id)
        else:
            return _("cp_async_wait(n) needs n known when the kernel compiles: a number or a constant's name, "
                     "not {given}").format(given=ast.unparse(arg))
        if not is_whole(value) or value < 0:
            return _("cp_async_wait(n) needs a whole number n ≥ 0 of groups left in flight, got "
                     "{given} = {value}").format(given=ast.unparse(arg), value=repr(value))
        return None

    # --- scopes -----------------------------------------------------------------------------------------
    def _nested(self, node):
        return None if node is self.func else \
            _("a function defined inside the kernel: its loads would go uncounted; write its code in the kernel")

    _FunctionDef = _AsyncFunctionDef = _Lambda = _ClassDef = _nested

    def _Slice(self, node):
        return _(_SLICE)

    def _Global(self, node):
        return _("global and nonlocal names in a kernel are not counted: pass values as constants")

    _Nonlocal = _Global


_ACROSS_A_WARP = N_("{used} works across a warp (32 threads at once), and tiledlab counts each thread on its own, not "
                    "warps: share values through a shared array and cuda.syncthreads()")
_SLICE = N_("a slice makes a view, whose loads and stores could not be counted: index one element, X[i, j]")
_LOOKUP = N_("{what} looks names up while the kernel runs: an array read or a barrier reached that way would go "
             "uncounted (and numba cannot compile it for a GPU); name the array or cuda.syncthreads() directly")
# builtins, attributes and modules that reach a namespace by a name given as data
_LOOKUPS = {getattr(builtins, n) for n in ("locals", "globals", "vars", "eval", "exec", "getattr", "setattr",
                                            "delattr", "__import__", "compile", "dir", "breakpoint")}
_NAMESPACES = ("__dict__", "__globals__", "__builtins__", "f_locals", "f_globals", "f_back", "__getattribute__",
               "__getitem__", "__setitem__")
_LOOKUP_MODULES = ("sys", "inspect", "importlib", "gc", "ctypes")


def _looks_up(value):
    """True for a function that reaches a namespace by a name given as data (locals(), importlib.import_module)."""
    try:
        if value in _LOOKUPS:
            return True
    except TypeError:  # unhashable: no such function
        return False
    module = (getattr(value, "__module__", None) or "").split(".")[0]
    return callable(value) and module in _LOOKUP_MODULES


def _callable(func, namespace, local):
    """The function a call's `func` names (a global, a builtin, dotted through modules); None for methods."""
    if isinstance(func, ast.Name):
        return None if func.id in local else namespace.get(func.id, getattr(builtins, func.id, None))
    return _global_value(func, namespace, local)


def helper_problem(value, name, seen=None):
    """Why a call of the helper `value` could hide a barrier or an access (None when it cannot): a helper may take
    and return numbers, but not use cuda (under any name), nor call a helper that does."""
    if value is slice:
        return _(_SLICE)
    if _looks_up(value):
        return _(_LOOKUP).format(what=f"{name}()")
    if _ptx_of(value):
        return _("{name} is tiledlab.core.ptx's {ptx} inside a helper: its loads, stores and "
                 "groups would not be counted; call it in the kernel itself").format(name=name, ptx=_ptx_of(value))
    if not (isinstance(value, types.FunctionType) or hasattr(value, "py_func")):
        return None  # a builtin, a numba type, a math function
    seen = set() if seen is None else seen
    fn = getattr(value, "py_func", value)
    if fn in seen:
        return None
    seen.add(fn)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return _("the helper {name} has no source tiledlab can read: write its code in the kernel").format(name=name)
    tree.decorator_list = []  # @cuda.jit(device=True) is not a use of cuda
    namespace, local = fn.__globals__, local_names(tree)
    bounded = unguarded(tree, namespace)
    for node in ast.walk(tree):
        if isinstance(node, ast.While) or isinstance(node, ast.For) and node not in bounded:
            return _("the helper {name} loops ({code}): tiledlab stops a loop that never ends, or runs too long to "
                     "count, only in the kernel itself; write the loop in the kernel").format(
                         name=name, code=repr(ast.unparse(node).splitlines()[0]))
        if isinstance(node, (ast.Name, ast.Attribute)) and \
                (getattr(node, "id", None) == "cuda" or cuda_part(_global_value(node, namespace, local))):
            return _("the helper {name} uses cuda: a barrier, shared array or atomic inside a helper would not be "
                     "seen; write it in the kernel").format(name=name)
        if isinstance(node, ast.Attribute) and node.attr in _NAMESPACES:
            return _(_LOOKUP).format(what=f"{name} → {ast.unparse(node)}")
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            inner = helper_problem(_callable(node.func, namespace, local), f"{name} → {ast.unparse(node.func)}", seen)
            if inner:
                return inner
    return None


def unguarded(func, namespace, arrays=()):
    """The for loops of `func` that cannot run away, so need no guard: over a tuple written out, or a range at most
    SIDES times the arrays' longest side (and SIDES × SHORT): one of sides (X.shape[i], len(X) of one of `arrays`),
    constants within SHORT and names given only such values, by +, -, //, %, min and max, and products of constants
    alone (BM * BK)."""
    given, local, memo = {}, local_names(func), {}
    for node in ast.walk(func):
        for target, value in assignments(node):
            shape = ast.unparse(value).endswith(".shape")
            for name in [target] if isinstance(target, ast.Name) else getattr(target, "elts", ()):
                given.setdefault(getattr(name, "id", None), []).append(
                    ast.Subscript(value, ast.Constant(0)) if shape else value)  # a, b = t: t's bound, unknown
    found = set()
    for loop in (n for n in ast.walk(func) if isinstance(n, ast.For)):
        a, b = _bound(loop.iter, given, local, namespace, memo, arrays) or (math.inf, 0) \
            if is_call(loop.iter, "range") else (0, 0) if isinstance(loop.iter, ast.Tuple) else (math.inf, 0)
        if a <= SIDES and b <= SIDES * SHORT:
            found.add(loop)
    return found


SIDES = 4  # a range this many times the longest side (and SHORT) at most cannot run away: no guard


def _bound(e, given, local, namespace, memo, arrays, seen=frozenset()):
    """(a, b) with |e| <= a × the arrays' longest side + b, or None when `e` may be anything (see `unguarded`)."""
    def of(x):
        return _bound(x, given, local, namespace, memo, arrays, seen)
    if isinstance(e, ast.Constant):
        return (0, abs(e.value)) if type(e.value) is int and abs(e.value) <= SHORT else None
    if isinstance(e, ast.Subscript):
        return (1, 0) if isinstance(e.value, ast.Attribute) and e.value.attr == "shape" else None
    if is_len(e, namespace, local) and e.args[0].id in arrays:
        return 1, 0
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        return of(e.operand)
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.FloorDiv, ast.Mod, ast.Mult)):
        left, right = of(e.left), of(e.right)
        if left is None or right is None:
            return None
        if isinstance(e.op, ast.Mult):  # constants only: a product of sides may be M × N × K
            return (0, left[1] * right[1]) if left[0] == right[0] == 0 else None
        if isinstance(e.op, ast.FloorDiv):  # |a // b| <= |a| + 1 for a whole b
            return left[0], left[1] + 1
        return right if isinstance(e.op, ast.Mod) else (left[0] + right[0], left[1] + right[1])
    if isinstance(e, ast.Call) and ast.unparse(e.func) in ("min", "max", "range") and e.args and not e.keywords:
        parts = [of(a) for a in e.args]
        return None if None in parts else (max(p[0] for p in parts), max(p[1] for p in parts))
    if not isinstance(e, ast.Name) or e.id in seen:
        return None  # a name given itself (k = k + 1) may grow without end
    if e.id not in local:
        value = namespace.get(e.id)
        return (0, abs(value)) if type(value) is int and abs(value) <= SHORT else None
    if e.id not in memo:  # each name once: a chain of names doubling one another is read in linear time
        parts = [_bound(v, given, local, namespace, memo, arrays, seen | {e.id}) for v in given.get(e.id, [None])]
        memo[e.id] = None if None in parts else (max(p[0] for p in parts), max(p[1] for p in parts))
    return memo[e.id]
