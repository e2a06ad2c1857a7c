"""Rules over a kernel's compile-time constants, each a Python function whose parameters name the constants it
reads, with its reason: `Rule(lambda BM, TM: BM % TM == 0, "a thread computes TM of the block's BM rows")`.
Derived constants and launch sizes are functions of the same kind, evaluated by `apply`.
"""
import functools
import inspect
import numbers
from dataclasses import dataclass
from typing import Callable

from ..i18n import _


@functools.cache  # read once per function: `apply` asks at every rule of every bind
def names(fn):
    """The constants a rule or derived function reads: its parameters without a default (partial binds options)."""
    return tuple(p.name for p in inspect.signature(fn).parameters.values() if p.default is p.empty)


def apply(fn, constants, kernel="kernel"):
    """fn(**the constants it names); a ValueError when it divides by zero or names an unknown constant."""
    if missing := [n for n in names(fn) if n not in constants]:
        raise ValueError(_("{kernel}: a rule reads {names}, which the kernel does not have").format(
            kernel=kernel, names=", ".join(missing)))
    try:
        return fn(**{n: constants[n] for n in names(fn)})
    except ZeroDivisionError:
        zero = next((n for n in names(fn) if is_whole(constants[n]) and constants[n] == 0), None)
        if zero:  # a size of 0 (BK=0): say so, rather than which quotient it broke
            whole(zero, 0)
        raise ValueError(_("{kernel}: {constants} divides by zero").format(
            kernel=kernel, constants=listed(constants, names(fn)))) from None


def listed(constants, only=None):
    """'BM=64, TM=3': the constants named in `only` (all of them when None)."""
    return ", ".join(f"{k}={v}" for k, v in constants.items() if only is None or k in only)


@dataclass(frozen=True)
class Rule:
    """A condition the kernel's code relies on, and why."""
    holds: Callable
    why: str
    quotes: tuple = ()  # (name, value) of each {placeholder} in `why`: a limit it quotes, filled in once translated

    def enforce(self, constants, kernel="kernel"):
        try:
            ok = apply(self.holds, constants, kernel)
        except ValueError:  # a zero divisor: the rule cannot hold
            ok = False
        if not ok:
            carried = getattr(self.holds, "keywords", None) or {}  # the options a generated kernel's rule carries
            values = [listed(constants, names(self.holds)), listed(carried)]
            why = _(self.why).format(**dict(self.quotes)) if self.quotes else _(self.why)  # a student's may hold braces
            raise ValueError(_("{kernel}: {why}; {constants} breaks it").format(
                kernel=kernel, why=why, constants=", ".join(v for v in values if v)))


def is_whole(*values):
    """True when every value is a whole number: an int or a numpy integer, not a bool, a float or an array."""
    return all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in values)  # numpy's are Integral


def got(value):
    """repr(value), and for a float such as 4.0 the int to write instead: a whole number is an int, never a float."""
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral) and float(value).is_integer():
        return _("{value!r} (a float: write {whole})").format(value=value, whole=int(value))
    return repr(value)


def whole(name, value, least=1):
    """`value` as an int of at least `least`, or a ValueError naming `name`."""
    if not is_whole(value) or value < least:
        raise ValueError(_("{name} must be a whole number of at least {least}, got {value}").format(
            name=name, least=least, value=got(value)))
    return int(value)


def enforce_all(rules, constants, kernel="kernel"):
    """Enforce every rule in order: the first broken one raises."""
    for rule in rules:
        rule.enforce(constants, kernel)
