"""Deliberately changed copies of a kernel, derived from its one source, for experiments: `without_barrier`,
`swapped_xy` (threadIdx.x walks rows), `transposed` (B's tile stored transposed and read down a column: bank
conflicts), `padded` (that tile one column wider, which spreads a column over all 32 banks) and
`without_write_back` (C stored only where the sum is NaN: the computation stays, the M·N stores go).

A variant is a Kernel like any other: matmul, count_loads and the experiments accept it. Constants given here
(a tile width T, or BM=... of a generated kernel, whose code depends on them) become the variant's defaults.
"""
import ast
import copy

from ..core.contract import is_call
from ..core.launch import resolve


class _Change(ast.NodeTransformer):
    """Changes array `name` in a kernel's tree (_DropBarrier: barrier number `which`), counting its changes."""

    def __init__(self, name=None, which=None):
        self.name, self.which, self.changed, self.seen = name, which, 0, -1


class _DropBarrier(_Change):
    def nothing(self, kernel):
        return f"{kernel} has {self.seen + 1} cuda.syncthreads() calls, not {self.which + 1}"

    def visit_Expr(self, node):
        if is_call(node.value, "cuda.syncthreads"):
            self.seen += 1
            if self.seen == self.which:
                self.changed += 1
                return ast.copy_location(ast.Pass(), node)
        return node


class _SwapXY(_Change):
    def nothing(self, kernel):
        return f"{kernel} names no threadIdx/blockIdx/blockDim/gridDim .x or .y to swap"

    def visit_Attribute(self, node):
        self.generic_visit(node)
        inner = node.value
        if node.attr in ("x", "y") and isinstance(inner, ast.Attribute) and \
                inner.attr in ("threadIdx", "blockIdx", "blockDim", "gridDim"):
            node.attr = "y" if node.attr == "x" else "x"
            self.changed += 1
        return node


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

    def visit_Assign(self, node):
        target = node.targets[0]
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == self.name:
            nan = ast.Compare(left=copy.deepcopy(node.value), ops=[ast.NotEq()], comparators=[copy.deepcopy(node.value)])
            self.changed += 1
            return ast.copy_location(ast.If(test=nan, body=[node], orelse=[]), node)
        return node


def _changed(kernel, transformer, suffix, T, constants, derived=None):
    spec = resolve(kernel)
    if T is not None:
        constants["T"] = T
    tree = transformer.visit(spec.code.at(spec.name, spec.bind(constants)).tree)
    if not transformer.changed:
        nothing = getattr(transformer, "nothing", lambda name: f"{name}: nothing to change for {suffix}")
        raise ValueError(nothing(spec.name))
    tree.name = f"{tree.name}_{suffix}"
    return spec.changed(tree, derived, constants)


def transposed(kernel, name="sB", T=None, **constants):
    """`kernel` with every access name[i, j] of its shared tile `name` made name[j, i]."""
    return _changed(kernel, _Transpose(name), f"{name}_transposed", T, constants)


def padded(kernel, name="sB", T=None, **constants):
    """`kernel` with its shared tile `name` declared one column wider: (T, T) becomes (T, T + 1)."""
    return _changed(kernel, _Pad(name), f"{name}_padded", T, constants, {"T_PAD": lambda T: T + 1})


def without_write_back(kernel, T=None, **constants):
    """`kernel` storing into C (its third argument) only where the value is NaN: never, for finite data."""
    return _changed(kernel, _StoreNever(), "without_write_back", T, constants)


def without_barrier(kernel, which, T=None, **constants):
    """`kernel` with its `which`-th cuda.syncthreads() (0 = first) removed."""
    return _changed(kernel, _DropBarrier(which=which), f"without_barrier_{which}", T, constants)


def swapped_xy(kernel, T=None, **constants):
    """`kernel` with x and y exchanged in thread and block indices (for square launches)."""
    return _changed(kernel, _SwapXY(), "swapped_xy", T, constants)
