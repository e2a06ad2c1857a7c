"""Deliberately changed copies of a kernel, derived from its one source, for experiments.

`without_barrier(tiled, 0)` is the tiled kernel with its first `cuda.syncthreads()` deleted;
`swapped_xy(naive)` exchanges x and y in every thread and block index, so threadIdx.x walks rows.
"""
import ast

from .source import build, is_call, syntax_tree


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
    def visit_Attribute(self, node):
        self.generic_visit(node)
        inner = node.value
        if node.attr in ("x", "y") and isinstance(inner, ast.Attribute) and \
                inner.attr in ("threadIdx", "blockIdx", "blockDim", "gridDim"):
            node.attr = "y" if node.attr == "x" else "x"
        return node


def without_barrier(kernel, which, T):
    """`kernel` at tile width T with its `which`-th cuda.syncthreads() (0 = first) removed."""
    dropper = _DropBarrier(which)
    func = dropper.visit(syntax_tree(kernel))
    if dropper.seen < which:
        raise ValueError(f"{kernel.__name__} has {dropper.seen + 1} cuda.syncthreads() calls, not {which + 1}")
    func.name = f"{func.name}_without_barrier_{which}"
    return build(kernel, func, T, f"without_barrier_{which}")


def swapped_xy(kernel, T):
    """`kernel` at tile width T with x and y exchanged in thread and block indices (square launches)."""
    func = _SwapXY().visit(syntax_tree(kernel))
    func.name = f"{func.name}_swapped_xy"
    return build(kernel, func, T, "swapped_xy")
