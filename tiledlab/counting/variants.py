"""Deliberately changed copies of a kernel, derived from its one source, for experiments: each is a Kernel like any
other, and constants given here (T, or a generated kernel's BM=..., whose code depends on them) become its defaults."""
import ast
import copy

from numba import cuda

from ..core.contract import is_call, local_names, refused
from ..core.launch import resolve
from ..core.rules import whole
from ..i18n import N_, _


class _Change(ast.NodeTransformer):
    """Changes array `name` in a kernel's tree (_DropBarrier: barrier number `which`), counting its changes."""

    def __init__(self, name=None, which=None):
        self.name, self.which, self.changed, self.seen = name, which, 0, -1

    def nothing(self, kernel, suffix):
        return _("{kernel}: nothing to change for {suffix}").format(kernel=kernel, suffix=suffix)


class _DropBarrier(_Change):
    def nothing(self, kernel, suffix):
        calls = self.seen + 1
        said = _("which={which}: {kernel} has {calls} cuda.syncthreads() calls, not {asked}").format(
            which=self.which, kernel=kernel, calls=calls, asked=self.which + 1)
        return said + (_("; which counts them from 0: give 0 to {last}").format(last=calls - 1) if calls else "")

    def visit_Expr(self, node):
        if is_call(node.value, "cuda.syncthreads"):
            self.seen += 1
            if self.seen == self.which:
                self.changed += 1
                return ast.copy_location(ast.Pass(), node)
        return node


class _SwapXY(_Change):
    """Exchanges x and y in every index source: cuda.threadIdx/blockIdx/blockDim/gridDim .x and .y, and the values of
    cuda.grid(n) and cuda.gridsize(n); an index written otherwise (an alias, cuda.grid(d)) is refused by its line."""

    def __init__(self, namespace):
        super().__init__()
        self.namespace, self.local = namespace, None
        self.sources = [getattr(cuda, n) for n in _INDICES + _GRID if hasattr(cuda, n)]  # on a GPU

    def nothing(self, kernel, suffix):
        return _("{kernel} names no threadIdx/blockIdx/blockDim/gridDim .x or .y to swap").format(kernel=kernel)

    def visit_FunctionDef(self, node):
        if self.local is None:  # the kernel itself
            self.local = local_names(node)
        return self.generic_visit(node)

    def visit_Attribute(self, node):
        if node.attr in ("x", "y", "z") and _on_cuda(node.value, _INDICES):
            if node.attr != "z":
                node.attr = "y" if node.attr == "x" else "x"
                self.changed += 1
            return node
        if _on_cuda(node, _INDICES + _GRID):  # cuda.threadIdx as a value, cuda.grid not called
            raise refused(node, _(_UNSWAPPED))
        return self.generic_visit(node)

    def visit_Call(self, node):
        if not _on_cuda(node.func, _GRID):
            return self.generic_visit(node)
        n = node.args[0].value if len(node.args) == 1 and isinstance(node.args[0], ast.Constant) else None
        if node.keywords or n not in (1, 2, 3) or type(n) is not int:
            raise refused(node, _(_UNSWAPPED))
        whole = ast.Call(func=node.func, args=[ast.Constant(max(n, 2))], keywords=[])  # (y, x, z) of it, n of them
        values = [ast.Subscript(copy.deepcopy(whole), ast.Constant(i), ast.Load()) for i in (1, 0, 2)[:n]]
        self.changed += 1
        swapped = values[0] if n == 1 else ast.Tuple(values, ast.Load())
        return ast.fix_missing_locations(ast.copy_location(swapped, node))

    def visit_Name(self, node):  # from numba.cuda import grid, threadIdx: under its own name, or another
        if node.id in self.local:
            return node
        value = self.namespace.get(node.id)
        if node.id in _INDICES + _GRID or any(value is s for s in self.sources):
            raise refused(node, _(_UNSWAPPED))
        return node


_INDICES = ("threadIdx", "blockIdx", "blockDim", "gridDim")
_GRID = ("grid", "gridsize")
_UNSWAPPED = N_("swapped_xy exchanges x and y where the kernel writes cuda.threadIdx.x (blockIdx, blockDim, gridDim "
                "likewise) or cuda.grid(n), cuda.gridsize(n) with n a number: write each index so, or the copy would "
                "not be this kernel with x and y exchanged")


def _on_cuda(node, names):
    """True for cuda.<name>, one of `names`."""
    return isinstance(node, ast.Attribute) and node.attr in names and isinstance(node.value, ast.Name) and \
        node.value.id == "cuda"


class _Transpose(_Change):
    def visit_Subscript(self, node):
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == self.name and \
                isinstance(node.slice, ast.Tuple) and len(node.slice.elts) == 2:
            node.slice.elts.reverse()
            self.changed += 1
        return node


class _Pad(_Change):
    def visit_Assign(self, node):
        target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == self.name and is_call(node.value, "cuda.shared.array"):
            shape = node.value.args[0]  # (T, T) → (T, T_PAD): numba wants a constant, not the sum T + 1
            shape.elts[1] = ast.copy_location(ast.Name(id="T_PAD", ctx=ast.Load()), shape.elts[1])
            self.changed += 1
        return node


class _StoreNever(_Change):
    def visit_FunctionDef(self, node):
        if self.name is None:  # the kernel itself, not a function inside it
            self.name = node.args.args[2].arg  # C, the kernel's third argument, by the kernel's own name
        return self.generic_visit(node)

    def _into_C(self, target):
        return isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == self.name

    def visit_AugAssign(self, node):  # C[i, j] += v: the load of C and the sum stay, the store goes
        if not self._into_C(node.target):
            return node
        term, t = self._named(node, node.value, "term")
        total, s = self._named(node, ast.BinOp(left=_loaded(node.target), op=node.op, right=ast.Name(t, ast.Load())))
        store = ast.Assign(targets=[copy.deepcopy(node.target)], value=ast.Name(s, ast.Load()))
        return [term, total, self._where_nan(node, t, store)]  # C itself may be NaN: its term not

    def visit_Expr(self, node):  # cuda.atomic.add(C, (i, j), v)
        call = node.value
        if not (is_call(call, "cuda.atomic.add") and call.args and isinstance(call.args[0], ast.Name) and
                call.args[0].id == self.name):
            return node
        term, t = self._named(node, call.args[2], "term")
        call.args[2] = ast.Name(t, ast.Load())
        return [term, self._where_nan(node, t, node)]

    def visit_Assign(self, node):
        if not self._into_C(node.targets[0]):
            return node
        target, value = node.targets[0], node.value
        if isinstance(value, ast.BinOp) and ast.dump(value.left) == ast.dump(_loaded(target)):  # C[i, j] = C[i, j] + v
            return self.visit_AugAssign(ast.copy_location(ast.AugAssign(target, value.op, value.right), node))
        if any(self._into_C(n) for n in ast.walk(value)):
            raise ValueError(_("line {line}: without_write_back keeps a kernel's computation and drops its stores "
                               "into {name}; this value reads {name} other than as {name}[i, j] += v, so dropping the "
                               "store would change what it computes").format(line=node.lineno, name=self.name))
        if isinstance(value, ast.Name):  # C[i, j] = acc: acc already is computed once
            self.changed += 1
            return self._where_nan(node, value.id, node)
        named, v = self._named(node, value)
        node.value = ast.Name(v, ast.Load())
        return [named, self._where_nan(node, v, node)]

    def _named(self, node, value, kind="value"):
        """(name = value, the name): the value computed once, as in the kernel."""
        self.changed += 1
        name = f"written_back_{kind}_{self.changed}"
        assign = ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], value), node)
        return ast.fix_missing_locations(assign), name

    @staticmethod
    def _where_nan(node, name, store):
        """if name != name: store, the store made only where the value is NaN."""
        nan = ast.Compare(left=ast.Name(name, ast.Load()), ops=[ast.NotEq()], comparators=[ast.Name(name, ast.Load())])
        return ast.fix_missing_locations(ast.copy_location(ast.If(test=nan, body=[store], orelse=[]), node))


def _loaded(target):
    """The subscript `target` (C[i, j] as stored) as it reads."""
    return ast.Subscript(value=copy.deepcopy(target.value), slice=copy.deepcopy(target.slice), ctx=ast.Load())


def _changed(kernel, transformer, suffix, T, constants, derived=None):
    spec = resolve(kernel)
    if T is not None:
        constants["T"] = T
    tree = transformer.visit(spec.code.at(spec.name, spec.bind(constants)).tree)
    if not transformer.changed:
        raise ValueError(transformer.nothing(spec.name, suffix))
    tree.name = f"{tree.name}_{suffix}"
    return spec.changed(tree, derived, constants)


def transposed(kernel, name="sB", T=None, **constants):
    """`kernel` with each name[i, j] of shared tile `name` made name[j, i]: read down a column, bank conflicts."""
    return _changed(kernel, _Transpose(name), f"{name}_transposed", T, constants)


def padded(kernel, name="sB", T=None, **constants):
    """`kernel` with shared tile `name` declared (T, T + 1), one column wider: a column then spans all 32 banks."""
    return _changed(kernel, _Pad(name), f"{name}_padded", T, constants, {"T_PAD": lambda T: T + 1})


def without_write_back(kernel, T=None, **constants):
    """`kernel` storing into C (its third argument) only where the value is NaN: it computes, but never stores."""
    return _changed(kernel, _StoreNever(), "without_write_back", T, constants)


def without_barrier(kernel, which, T=None, **constants):
    """`kernel` with its `which`-th cuda.syncthreads() (0 = first) removed."""
    which = whole("which", which, least=0)
    return _changed(kernel, _DropBarrier(which=which), f"without_barrier_{which}", T, constants)


def swapped_xy(kernel, T=None, **constants):
    """`kernel` with x and y exchanged in thread and block indices and in cuda.grid/gridsize (for square launches)."""
    return _changed(kernel, _SwapXY(resolve(kernel).code.namespace), "swapped_xy", T, constants)
