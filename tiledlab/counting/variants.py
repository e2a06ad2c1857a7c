"""Deliberately changed copies of a kernel, derived from its one source, for experiments.

- `without_barrier(tiled, 0)`: the tiled kernel with its first `cuda.syncthreads()` deleted;
- `swapped_xy(naive)`: x and y exchanged in every thread and block index, so threadIdx.x walks rows;
- `transposed(tiled, "sB")`: B's tile stored transposed and read down a column (bank conflicts);
- `padded(kernel, "sB")`: that tile declared one column wider, (T, T + 1), which spreads a column
  over all 32 banks;
- `without_write_back(tiled)`: C written only where the sum is NaN, never for finite inputs, so the
  computation stays and the M·N stores go.

A variant is a kernel like any other: matmul, count_loads and the experiments accept it, and a tile
width given here binds T at once (as `specialize` would).
"""
import ast
import copy

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


class _Transpose(ast.NodeTransformer):
    def __init__(self, name):
        self.name, self.changed = name, 0

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == self.name and \
                isinstance(node.slice, ast.Tuple) and len(node.slice.elts) == 2:
            node.slice.elts.reverse()
            self.changed += 1
        return node


class _Pad(ast.NodeTransformer):
    def __init__(self, name):
        self.name, self.changed = name, 0

    def visit_Assign(self, node):
        target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == self.name and is_call(node.value, "cuda.shared.array"):
            shape = node.value.args[0]  # (T, T) → (T, T_PAD): numba wants a constant, not the sum T + 1
            shape.elts[1] = ast.copy_location(ast.Name(id="T_PAD", ctx=ast.Load()), shape.elts[1])
            self.changed += 1
        return node


class _StoreNever(ast.NodeTransformer):
    def __init__(self, output):
        self.output, self.changed = output, 0

    def visit_Assign(self, node):
        target = node.targets[0]
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == self.output:
            nan = ast.Compare(left=copy.deepcopy(node.value), ops=[ast.NotEq()], comparators=[copy.deepcopy(node.value)])
            self.changed += 1
            return ast.copy_location(ast.If(test=nan, body=[node], orelse=[]), node)
        return node


def _changed(kernel, transformer, suffix, T, derived=None):
    func = transformer.visit(syntax_tree(kernel))
    if not transformer.changed:
        raise ValueError(f"{kernel.__name__}: nothing to change for {suffix}")
    func.name = f"{func.name}_{suffix}"
    return _bound(derive(kernel, func, derived), T)


def transposed(kernel, name="sB", T=None):
    """`kernel` with every access name[i, j] of its shared tile `name` made name[j, i]."""
    return _changed(kernel, _Transpose(name), f"{name}_transposed", T)


def padded(kernel, name="sB", T=None):
    """`kernel` with its shared tile `name` declared one column wider: (T, T) becomes (T, T + 1)."""
    return _changed(kernel, _Pad(name), f"{name}_padded", T, {"T_PAD": lambda c: c["T"] + 1})


def without_write_back(kernel, T=None):
    """`kernel` storing into C (its third argument) only where the value is NaN: never, for finite data."""
    output = syntax_tree(kernel).args.args[2].arg
    return _changed(kernel, _StoreNever(output), "without_write_back", T)


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
