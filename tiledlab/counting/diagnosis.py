"""Why a kernel's product is wrong: C read before stored or stored again (from its count), the first tile step whose
partial product differs (K cut after each step), or the operand whose values go astray (the other the identity)."""
import ast
import contextlib
import warnings

import numpy as np

from ..core.contract import is_call
from ..core.launch import matmul, resolve
from ..i18n import _


def close(C, A, B):
    """True when C is A @ B (computed in float64) to float32's accuracy."""
    return C is not None and np.isclose(C, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-4, atol=1e-4).all()


@contextlib.contextmanager
def quiet():
    """No numpy warnings from a student's kernel (1 / 0 gives inf, and the product says so): np.errstate holds
    only in this thread, and the simulator runs each CUDA thread in a thread of its own, so a filter as well."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def run(kernel, A, B, tile):
    """matmul(A, B, kernel, tile) of contiguous copies, or None when it fails (the check has said why)."""
    try:
        with quiet():
            return matmul(np.ascontiguousarray(A), np.ascontiguousarray(B), kernel, tile)
    except Exception:  # noqa: BLE001  an experiment that cannot run names no cause
        return None


def read_before_stored(count, C, i, j):
    """The cause when C[i, j] came out NaN from a kernel that read C itself (C[i, j] += v with no C[i, j] = 0 first),
    or was stored NaN by one that declares a local array (FRESH on the simulator until its thread stores into it)."""
    if not np.isnan(C[i, j]):
        return None
    if not count.maps["C"][i, j]:
        return local_read_before_stored(count, i, j)
    return _("C[{i}, {j}] is read by the kernel (as in C[{i}, {j}] += v) before anything was stored into it: C holds "
             "no value when a kernel starts (NaN here, whatever was there on a GPU). Add up in a register set to 0 and "
             "store C[{i}, {j}] once, after the loop.").format(i=i, j=j)


def local_read_before_stored(count, i, j):
    """The cause when C[i, j], NaN, was stored by a kernel that declares local arrays: one of them read unset."""
    if not (count.local and count.C_stores[i, j]):
        return None
    arrays = _(", ").join(_("{name} at line {line}").format(name=name, line=line) for name, line in count.local.items())
    return _("C[{i}, {j}] was stored as NaN, the value a cuda.local.array holds on the simulator until its thread "
             "stores into it (on a GPU, whatever was there): an element of a local array ({arrays}) is read before "
             "this thread stored it. Set each element before adding to it (acc[i, j] = 0 for every i and j); a local "
             "array is each thread's own, so a tile the block's threads share goes in cuda.shared.array.").format(
        i=i, j=j, arrays=arrays)


def never_stored(count, kernel, tile, i, j):
    """The cause when no thread stored C[i, j]: none of C stored at all (a stub), or this element, the x index of a
    `row, col = cuda.grid(2)` storing C[row, col] named where the kernel has one."""
    if count.C_stores[i, j]:
        return None
    if not count.C_stores.any():
        return _("No thread stores any element of C: have each thread store its result, as C[row, col] = acc, where "
                 "row and col lie inside C.")
    unstored = _("No thread stores C[{i}, {j}] ({n} of the {size} elements of C are never stored): every element "
                 "needs a thread that stores it.").format(i=i, j=j, n=int((count.C_stores == 0).sum()),
                                                          size=count.C_stores.size)
    tree = _tree(kernel, tile)
    return unstored + " " + (tree and _grid_swapped(tree) or _(
        "Look at how row and col follow from the thread's indices (x runs along C's columns, y along its rows) and at "
        "the guard around the store."))


def _tree(kernel, tile):
    """The kernel's def at `tile` (its T, where it has one), or None where its code cannot be read here."""
    try:
        spec = resolve(kernel)
        return spec.bind(None, tile if "T" in spec.constants else None).code.tree
    except Exception:  # noqa: BLE001  no cause is read from code that cannot be read
        return None


def _grid_swapped(tree):
    """`row, col = cuda.grid(2)` (line and names) in a kernel's def `tree` that stores C[row, col]: said, or None."""
    output = tree.args.args[2].arg
    stored = {ast.unparse(n.slice) for n in ast.walk(tree) if _subscript_of(n, {output}) and
              isinstance(n.ctx, ast.Store)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and is_call(node.value, "cuda.grid") and ast.unparse(node.value.args) == "2" \
                and isinstance(node.targets[0], ast.Tuple) and ast.unparse(node.targets[0]) in stored:
            first, second = (ast.unparse(e) for e in node.targets[0].elts)
            return _("Line {line}: {first}, {second} = cuda.grid(2) makes {first} the x index, but cuda.grid(2) "
                     "gives (x, y) and x runs along C's columns (the grid's x covers N): write {second}, {first} = "
                     "cuda.grid(2).").format(line=node.lineno, first=first, second=second)
    return None


def half_precision(kernel, tile, A, B, C):
    """The cause when a kernel that names float16 differs from A @ B by no more than rounding A and B to float16
    (and adding in float16) explains, at every element: its lines are named."""
    tree = _tree(kernel, tile)
    lines = sorted({n.lineno for n in ast.walk(tree) if getattr(n, "id", getattr(n, "attr", None)) == "float16"}
                   if tree else ())
    A, B = A.astype(np.float64), B.astype(np.float64)
    rounding = (A.shape[1] + 2) * 2.0 ** -11 * (np.abs(A) @ np.abs(B))  # float16 keeps 11 bits: 2^-11 of each value
    if not lines or not (np.abs(C - A @ B) <= rounding).all():
        return None
    return _("Every element differs from numpy's by no more than rounding to float16 explains, and the kernel works in "
             "float16 ({lines}), which keeps about 3 significant digits: check() asks for float32's accuracy (a "
             "relative difference of 1e-4). Declare the tiles, and convert the values, in float32.").format(
        lines=_(", ").join(_("line {line}").format(line=line) for line in lines))


def alike(yours, numpy, i, j):
    """C[i, j] with enough digits to tell yours from numpy's, when check()'s four digits show them alike; else None."""
    if f"{yours:.4g}" != f"{numpy:.4g}":
        return None
    digits = next((d for d in range(5, 17) if f"{yours:.{d}g}" != f"{numpy:.{d}g}"), 17)
    return _("To {digits} digits, C[{i}, {j}] is {yours} (yours) and {numpy} (numpy): closer than four digits show, "
             "but further apart than float32's accuracy (a relative difference of 1e-4) allows.").format(
        digits=digits, i=i, j=j, yours=f"{yours:.{digits}g}", numpy=f"{numpy:.{digits}g}")


def stored_again(count, i, j):
    """The cause when C[i, j] was stored more than once by the one thread that owns it, never reading it back."""
    stores = int(count.C_stores[i, j])
    if stores < 2 or count.C_races or count.maps["C"][i, j]:
        return None
    return _("C[{i}, {j}] is stored {n} times by the thread that owns it, which never reads it back: each store "
             "replaces the one before, so only the last stays. Add up in a register and store C[{i}, {j}] once, after "
             "the loop over tile steps.").format(i=i, j=j, n=stores)


def first_wrong_step(kernel, A, B, tile, step):
    """The cause when the product is right for K cut after some tile steps and wrong once the next is added."""
    K = A.shape[1]
    ends = [*range(step, K, step), K]
    s, k = next(((s, k) for s, k in enumerate(ends) if not close(run(kernel, A[:, :k], B[:k], tile), A[:, :k], B[:k])),
                (0, K))
    if s == 0:
        return None  # never wrong, or wrong from the first step: the operands' experiment says more
    if k == K and K % step:
        return _("The product is right while K is a whole number of tiles (K = {right}: {steps} tile steps) and wrong "
                 "at K = {K}, whose last tile step is partial ({part} of {step} columns of A): loop over all "
                 "⌈K/T⌉ = {all} tile steps, and load zeros past K.").format(right=ends[s - 1], steps=s, K=K,
                                                                           part=K % step, step=step, all=len(ends))
    return _("The product is right for the first {steps} tile steps (K = {right}) and wrong once step {next} is added "
             "(K = {K}): look at what changes from one step to the next, the tile's offset in A's columns and B's "
             "rows, and the barrier that ends a step.").format(steps=s, right=ends[s - 1], next=s + 1, K=k)


def wrong_operand(kernel, A, B, tile):
    """The cause when C is right with A the identity and wrong with B the identity (or the other way round)."""
    (M, K), N = A.shape, B.shape[1]
    eye_B, eye_A = np.eye(K, N, dtype=np.float32), np.eye(M, K, dtype=np.float32)
    a_wrong = not close(run(kernel, A, eye_B, tile), A, eye_B)
    b_wrong = not close(run(kernel, eye_A, B, tile), eye_A, B)
    if a_wrong == b_wrong:
        return None
    name, other = ("A", "B") if a_wrong else ("B", "A")
    try:
        found = _tile_of(kernel, tile, 0 if a_wrong else 1)
    except Exception:  # noqa: BLE001  a kernel whose code cannot be read here: the operand alone is named
        found = None
    if found == {}:
        where = _("Look at every read of {name} in the kernel: its index, and any condition that skips it or "
                  "changes the value it adds.").format(name=name)
    elif found:
        where = _("Look at {tile}, the shared tile {name} goes through: the index it is stored at (line {store}: "
                  "{stored}) and the one it is read at (line {read}: {read_code}); one of them has its indices "
                  "swapped or offset.").format(name=name, **found)
    else:
        where = _("Look at the shared tile {name} goes through: the index it is stored at and the one it is read "
                  "at.").format(name=name)
    return _("With {other} the identity matrix, C should hold {name}'s values and does not, while with {name} the "
             "identity C is right: {name}'s values reach the wrong place.").format(name=name, other=other) + " " + where


def _tile_of(kernel, tile, operand):
    """{tile, store, stored, read, read_code}: the shared array the kernel stores operand `operand` (0: A, 1: B)
    into, the line of that store and of its first read, with their code; None when there is no such array, {} when
    the kernel has no shared array."""
    spec = resolve(kernel)
    tree = spec.bind(None, tile if "T" in spec.constants else None).code.tree
    source = tree.args.args[operand].arg
    shared = {node.targets[0].id for node in ast.walk(tree) if isinstance(node, ast.Assign) and
              is_call(node.value, "cuda.shared.array") and isinstance(node.targets[0], ast.Name)}
    if not shared:  # {}: no tile at all, the operand is read from global memory
        return {}
    stores = [node for node in ast.walk(tree) if isinstance(node, ast.Assign) and _subscript_of(node.targets[0], shared)
              and any(_subscript_of(n, {source}) for n in ast.walk(node.value))]
    if not stores:
        return None
    name = stores[0].targets[0].value.id
    reads = sorted((n for n in ast.walk(tree) if _subscript_of(n, {name}) and isinstance(n.ctx, ast.Load)),
                   key=lambda n: n.lineno)
    if not reads:
        return None
    return {"tile": name, "store": stores[0].lineno, "stored": repr(ast.unparse(stores[0].targets[0])),
            "read": reads[0].lineno, "read_code": repr(ast.unparse(reads[0]))}


def _subscript_of(node, names):
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in names
