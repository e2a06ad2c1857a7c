"""Deliberately changed copies of a kernel, derived from its one source, for experiments.

`without_barrier(tiled, 0)` is the tiled kernel with its first `cuda.syncthreads()` deleted;
`swapped_xy(naive)` exchanges x and y in every thread and block index, so threadIdx.x walks rows.
A variant is a kernel like any other: matmul, count_loads and the experiments accept it, and a tile
width given here binds T at once (as `specialize` would).
"""
import ast

from ..core.source import derive, is_call, specialize, syntax_tree


class _DropBarrier(ast.NodeTransformer):
    def __init__(self, which):
        self.which, self.seen = which, -1

    def visit_Expr(self, node):
        if is_call(node.value, "cuda.syncthreads"):
            self.seen += 1
            if self.seen == self.which:
                return ast.copy_location(ast.Pass(), node)
        return node


class _SwapXY(ast.NodeTransformer):
    def __init__(self):
        self.swapped = 0

    def visit_Attribute(self, node):
        self.generic_visit(node)
        inner = node.value
        if node.attr in ("x", "y") and isinstance(inner, ast.Attribute) and \
                inner.attr in ("threadIdx", "blockIdx", "blockDim", "gridDim"):
            node.attr = "y" if node.attr == "x" else "x"
            self.swapped += 1
        return node


def _bound(kernel, T):
    return kernel if T is None else specialize(kernel, T)


def without_barrier(kernel, which, T=None):
    """`kernel` with its `which`-th cuda.syncthreads() (0 = first) removed."""
    dropper = _DropBarrier(which)
    func = dropper.visit(syntax_tree(kernel))
    if dropper.seen < which:
        raise ValueError(f"{kernel.__name__} has {dropper.seen + 1} cuda.syncthreads() calls, not {which + 1}")
    func.name = f"{func.name}_without_barrier_{which}"
    return _bound(derive(kernel, func), T)


def swapped_xy(kernel, T=None):
    """`kernel` with x and y exchanged in thread and block indices (for square launches)."""
    swapper = _SwapXY()
    func = swapper.visit(syntax_tree(kernel))
    if not swapper.swapped:
        raise ValueError(f"{kernel.__name__} names no threadIdx/blockIdx/blockDim/gridDim .x or .y to swap")
    func.name = f"{func.name}_swapped_xy"
    return _bound(derive(kernel, func), T)
