"""A size of the product read from a global outside the kernel (M, K = 5, 23 left by a notebook's earlier cell)
instead of from its arrays: the cause named when the kernel fails, for a global M, K or N, and for another whole
number that acts as a size (the product right given it as that size, at two sizes, and wrong given it one too large)."""
import ast
import itertools
import numbers
from dataclasses import replace

from ..core.contract import local_names
from ..core.kernel import Written
from ..core.launch import resolve
from ..core.operands import operands
from ..i18n import N_, _
from .count import count_loads
from .diagnosis import close, quiet

LETTERS = ("M", "K", "N")  # the product's sizes, as the lesson names them
SIDES = (N_("the rows of A"), N_("the columns of A"), N_("the columns of B"))


def global_size(kernel, A, B, tile):
    """Why the kernel fails at A·B when a global it reads stands for a size of this product that it is not; else
    None. The lab's constants (T, BM, ...) are no globals here: it binds them."""
    spec = resolve(kernel)
    if not isinstance(spec.code, Written):
        return None
    bound = spec.bind(None, tile if "T" in spec.constants else None)
    tree = bound.code.tree
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - local_names(tree) - set(bound)
    namespace = spec.namespace
    found = {name: value for name in sorted(read) if _whole(value := namespace.get(name))}
    sizes = (A.shape[0], A.shape[1], B.shape[1])
    named = [(LETTERS[side], side) for side in range(3) if found.get(LETTERS[side], sizes[side]) != sizes[side]]
    other = ((name, side) for name, value in found.items() if name not in LETTERS
             for side in range(3) if sizes[side] != value and _stands_for(spec, name, side, sizes, tile))
    named = named or list(itertools.islice(other, 1))
    if not named:
        return None
    globals_read = _(", ").join(f"{name} = {found[name]}" for name, _side in named)
    has = _(", ").join(_("{letter} = {size} ({side})").format(letter=LETTERS[side], size=sizes[side],
                                                              side=_(SIDES[side])) for _name, side in named)
    return _("The kernel reads {read} from globals outside it, where this product has {sizes}: read the sizes from "
             "the arrays in the kernel, M, K = A.shape and N = B.shape[1].").format(read=globals_read, sizes=has)


def _whole(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _stands_for(spec, name, side, sizes, tile):
    """True when the global `name` acts as this product's size `side`: the kernel is right given it as that size, here
    and with that side one larger, and wrong given it one too large (a tile's width, or a guard's bound, is not)."""
    grown = tuple(size + (k == side) for k, size in enumerate(sizes))
    return _right(spec, name, sizes[side], sizes, tile) and not _right(spec, name, sizes[side] + 1, sizes, tile) and \
        _right(spec, name, grown[side], grown, tile)


def _right(spec, name, value, shape, tile):
    """True when the kernel with the global `name` bound to `value` computes a product of `shape` right; counted, so
    that a loop the value leaves endless is stopped."""
    A, B = operands(*shape)
    try:
        with quiet():
            return close(count_loads(replace(spec, constants={**spec.constants, name: value}), A, B, tile).C, A, B)
    except Exception:  # noqa: BLE001  an experiment that cannot run names no cause
        return False
