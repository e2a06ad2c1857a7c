"""Barriers a GPU cannot pass: threads of one block sent by a condition to two different cuda.syncthreads().
numba emits each barrier as `bar.sync 0`, which every thread of a warp must reach at the same instruction; threads
waiting at two of them hang the block on a GPU (on an H100 such a kernel never finished), while the simulator lets
them meet. So the contract refuses it by its lines on both backends, before anything runs.
"""
import ast

from ..i18n import _

BARRIERS = ("syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or")


def is_barrier(node):
    """True for a call cuda.syncthreads(), cuda.syncthreads_count(p), _and(p) or _or(p)."""
    return isinstance(node, ast.Call) and ast.unparse(node.func) in {f"cuda.{b}" for b in BARRIERS}


PER_THREAD = ("cuda.threadIdx", "cuda.laneid", "cuda.grid", "cuda.atomic")  # differ between a block's threads


def thread_dependent(func):
    """Names in `func` whose value may differ between threads of one block: those computed from threadIdx,
    cuda.grid or laneid, or read from an array at such an index, and from them in turn."""
    found, size = set(), -1
    while size != len(found):
        size = len(found)
        for node in ast.walk(func):
            for target, value in assignments(node):
                if varies(value, found):
                    found.update(names(target))
    return found


def names(target):
    """The names a target binds: an element stored into an array leaves the array's other reads alike for all."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
        return [n for t in getattr(target, "elts", [getattr(target, "value", None)]) for n in names(t)]
    return []


def assignments(node):
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) and \
                    len(target.elts) == len(node.value.elts):
                yield from zip(target.elts, node.value.elts)
            else:
                yield target, node.value
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
        yield node.target, node.value
    elif isinstance(node, (ast.For, ast.comprehension)):
        yield node.target, node.iter


def varies(expr, names):
    """True when `expr` may have a different value in different threads of a block (`names`: thread_dependent)."""
    for n in ast.walk(expr):
        if isinstance(n, ast.Name) and n.id in names or \
                isinstance(n, ast.Attribute) and any(ast.unparse(n) in (p, f"{p}.{n.attr}") for p in PER_THREAD):
            return True
    return False


def _branches(node):
    """The arms of a statement that threads may take apart (an if's two, a loop's body and else) and what decides."""
    if isinstance(node, (ast.If, ast.While, ast.For)):
        return [node.body, node.orelse], getattr(node, "test", None) or node.iter
    return [], None


def apart(func):
    """(barrier, why) when threads of one block may wait at two different barriers of `func` at once: a barrier
    inside a branch whose condition varies between threads, and another outside that branch; else None."""
    names = thread_dependent(func)
    sites = [n for n in ast.walk(func) if is_barrier(n)]
    for node in ast.walk(func):
        arms, test = _branches(node)
        if not arms or not varies(test, names):
            continue
        inside = [{id(n) for s in arm for n in ast.walk(s)} for arm in arms]
        for arm in inside:
            here = [s for s in sites if id(s) in arm]
            elsewhere = [s for s in sites if id(s) not in arm]
            if here and elsewhere:
                first, other = sorted((here[0], elsewhere[0]), key=lambda s: s.lineno)
                return first, _("threads of one block can wait here and at the cuda.syncthreads() of line {other} at "
                                "the same time, sent apart by line {branch} ({test} differs between threads). On a GPU "
                                "every thread of a warp must reach the same barrier, so the block hangs (the simulator "
                                "lets them meet). Put one cuda.syncthreads() where every thread of the block passes "
                                "it, and guard only the loads and stores.").format(
                                    other=other.lineno, branch=node.lineno, test=ast.unparse(test))
    return None
