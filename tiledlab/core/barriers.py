"""Barriers a GPU cannot pass: threads of one block sent by a condition to two different cuda.syncthreads().
numba emits each barrier as `bar.sync 0`, which every thread of a warp must reach at the same instruction; threads
waiting at two of them hang the block on a GPU (on an H100 such a kernel never finished), while the simulator lets
them meet. So the contract refuses it by its lines on both backends, before anything runs.
"""
import ast
import contextlib
import operator
from collections import Counter

from ..i18n import _

BARRIERS = ("syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or")


def is_barrier(node):
    """True for a call cuda.syncthreads(), cuda.syncthreads_count(p), _and(p) or _or(p)."""
    return isinstance(node, ast.Call) and ast.unparse(node.func) in {f"cuda.{b}" for b in BARRIERS}


PER_THREAD = ("cuda.threadIdx", "cuda.laneid", "cuda.lanemask_lt", "cuda.activemask", "cuda.grid",
              "cuda.atomic")  # values that differ between a block's threads


def names(target):
    """The names a target binds: an element stored into an array leaves the array's other reads alike for all."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
        return {n for t in getattr(target, "elts", [getattr(target, "value", None)]) for n in names(t)}
    return set()


def assignments(node):
    """(target, value) of each binding `node` makes: an assignment's (element by element where both sides are
    written out), a loop's target and the values it takes."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, (ast.Tuple, ast.List)) and isinstance(node.value, (ast.Tuple, ast.List)) and \
                    len(target.elts) == len(node.value.elts):
                yield from zip(target.elts, node.value.elts)
            else:
                yield target, node.value
    elif isinstance(node, ast.AugAssign):
        yield node.target, ast.BinOp(node.target, node.op, node.value)
    elif isinstance(node, ast.AnnAssign) and node.value is not None:  # a walrus is refused before (contract)
        yield node.target, node.value
    elif isinstance(node, (ast.For, ast.comprehension)):
        yield node.target, node.iter


def varies(expr, found, extent=None):
    """True when `expr` may have a different value in different threads of a block (`found`: such names). A
    barrier's result (syncthreads_count, _and, _or) is one value for the whole block, and so is a comparison
    `extent` (an Extent) finds alike in all its threads."""
    if is_barrier(expr) or extent and isinstance(expr, ast.Compare) and extent.alike(expr):
        return False
    if isinstance(expr, ast.Name) and expr.id in found or \
            isinstance(expr, ast.Attribute) and any(ast.unparse(expr) in (p, f"{p}.{expr.attr}") for p in PER_THREAD):
        return True
    return any(varies(child, found, extent) for child in ast.iter_child_nodes(expr))


_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq,
            ast.NotEq: operator.ne}
_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
               ast.Mod: operator.mod, ast.Div: operator.truediv}


class Extent:
    """The threads of a block of `threads` (x, y) running `func` with its `constants`: a comparison of
    cuda.threadIdx.x or .y (or of a name given only that, once) with constants is alike in all of them when it
    holds for every thread (tx < T with T columns, tx >= 0), or for none."""

    def __init__(self, func, threads, constants):
        self.sizes = {"x": threads[0], "y": threads[1], "z": 1}
        bindings = _bindings(func)
        once = [n for n, count in bindings.items() if count == 1]
        self.constants = {k: v for k, v in constants.items() if k not in bindings}
        self.index = {t.id: _axis(v) for node in ast.walk(func) for t, v in assignments(node)
                      if isinstance(node, ast.Assign) and isinstance(t, ast.Name) and t.id in once and _axis(v)}

    def alike(self, compare):
        """True when the comparison `compare` has one value in every thread of the block."""
        sides = [compare.left, *compare.comparators]
        return all(self._pair(_COMPARE.get(type(op)), a, b) for op, a, b in zip(compare.ops, sides, sides[1:]))

    def _pair(self, op, a, b):
        """True when `a op b` has one value in every thread: constants both, or a thread's index and a constant."""
        left, right = self._value(a), self._value(b)
        if left is not None and right is not None:
            return True
        if op is None:
            return False
        if self._axis(a) and right is not None:
            return len({op(i, right) for i in range(self.sizes[self._axis(a)])}) == 1
        if self._axis(b) and left is not None:
            return len({op(left, i) for i in range(self.sizes[self._axis(b)])}) == 1
        return False

    def _axis(self, e):
        return self.index.get(e.id) if isinstance(e, ast.Name) else _axis(e)

    def _value(self, e):
        """The value of a constant expression (numbers, the build's constants, cuda.blockDim), else None."""
        if isinstance(e, ast.Constant) and type(e.value) in (int, float):
            return e.value
        if isinstance(e, ast.Name):
            return self.constants.get(e.id)
        if isinstance(e, ast.Attribute) and ast.unparse(e.value) == "cuda.blockDim":
            return self.sizes.get(e.attr)
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
            value = self._value(e.operand)
            return None if value is None else -value if isinstance(e.op, ast.USub) else value
        if isinstance(e, ast.BinOp) and type(e.op) in _ARITHMETIC:
            left, right = self._value(e.left), self._value(e.right)
            with contextlib.suppress(ArithmeticError, TypeError):
                return _ARITHMETIC[type(e.op)](left, right)
        return None


def _axis(e):
    """'x', 'y' or 'z' for cuda.threadIdx.x, .y or .z; else None."""
    is_index = isinstance(e, ast.Attribute) and e.attr in ("x", "y", "z") and ast.unparse(e.value) == "cuda.threadIdx"
    return e.attr if is_index else None


def _bindings(func):
    """{name: how many times `func` binds it}: stores, parameters, definitions, imports and captures."""
    found = Counter()
    for n in ast.walk(func):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            found[n.id] += 1
        elif isinstance(n, ast.arg):
            found[n.arg] += 1
        elif isinstance(n, ast.alias):
            found[n.asname or n.name] += 1
        elif n is not func and isinstance(name := getattr(n, "name", None) or getattr(n, "rest", None), str):
            found[name] += 1  # a def or a class, an except's or a match's capture
    return found


class _Flow:
    """The kernel's statements in order, tracking which names may differ between threads at each point (a name
    assigned a value alike for all threads is alike again); `decisions` are the ifs and loops whose outcome varies
    (with what decides), `jumps` the breaks and continues a varying if takes (that if, its test, the loop),
    `parts` the parts of expressions a varying condition may skip (`x if c else y`, `c and y`): statement, c, part."""

    def __init__(self, func, extent=None):
        self.decisions, self.jumps, self.loops, self.parts, self.guard = [], [], [], [], None
        self.extent = extent  # the block's Extent, when known
        bound = [(t.id, v) for node in ast.walk(func) for t, v in assignments(node) if isinstance(t, ast.Name)]
        self.local_arrays = {n for n, v in bound if isinstance(v, ast.Call) and
                             ast.unparse(v.func) == "cuda.local.array"}
        pairs = [(n, v.id) for n, v in bound if isinstance(v, ast.Name)]
        while aliases := {n for n, v in pairs if v in self.local_arrays} - self.local_arrays:
            self.local_arrays |= aliases  # other = flag: one array under two names, both stored into by either
        self.names_of = {n: {n} for n in self.local_arrays}
        for n, v in (p for p in pairs if p[0] in self.local_arrays and p[1] in self.local_arrays):
            for name in (group := self.names_of[n] | self.names_of[v]):
                self.names_of[name] = group
        self.block(func.body, set(), False, False)

    def varies(self, expr, found):
        return varies(expr, found, self.extent)

    def block(self, body, found, ctl, local):
        for statement in body:
            found = self.statement(statement, found, ctl, local)
        return found

    def statement(self, s, found, ctl, local):
        self.skipped(s, found)
        if isinstance(s, ast.If):
            split = self.varies(s.test, found)
            if split:
                self.decisions.append((s, s.test))
                self.guard = (s, s.test)
            return self.block(s.body, set(found), ctl or split, local or split) | \
                self.block(s.orelse, set(found), ctl or split, local or split)
        if isinstance(s, ast.Match):  # each case an arm, as of an if
            split = self.varies(s.subject, found)
            if split:
                self.decisions.append((s, s.subject))
                self.guard = (s, s.subject)
            return set().union(found, *(self.block(c.body, set(found), ctl or split, local or split) for c in s.cases))
        if isinstance(s, (ast.For, ast.While)):
            return self.loop(s, found, ctl)
        if isinstance(s, (ast.Break, ast.Continue)) and local and self.loops:
            self.jumps.append((*self.guard, s, self.loops[-1]))
        for node in ast.walk(s):
            for target, value in assignments(node):
                if ctl or self.varies(value, found):
                    found = found | names(target) | self.kept(target)
                else:  # a local array's other elements may still differ; one stored at a varying index differs
                    found = found - names(target) | self.kept(target, found)
            if isinstance(node, ast.Call) and (ctl or any(self.varies(a, found) for a in node.args)):
                found = found.union(*(self.names_of[a.id] for a in node.args if getattr(a, "id", None) in
                                      self.local_arrays))
        return found

    def kept(self, target, found=None):
        """The thread's own arrays (cuda.local.array) an element of which `target` stores into (at an index that
        differs between threads, if `found` is given; a helper given one may store into it: a call does too)."""
        return {name for n in ast.walk(target) if isinstance(n, ast.Subscript) and
                (found is None or self.varies(n.slice, found)) and isinstance(n.value, ast.Name) and
                n.value.id in self.local_arrays for name in self.names_of[n.value.id]}

    def skipped(self, s, found):
        """Record the parts of `s`'s own expressions (not its body's) that threads may evaluate unalike."""
        for e in [s.test] if isinstance(s, (ast.If, ast.While)) else [s.iter] if isinstance(s, ast.For) else [s]:
            for node in ast.walk(e):
                if isinstance(node, ast.IfExp) and self.varies(node.test, found):
                    self.parts += [(s, node.test, node.body), (s, node.test, node.orelse)]
                elif isinstance(node, ast.BoolOp):
                    for k, value in enumerate(node.values[1:], 1):
                        deciding = next((v for v in node.values[:k] if self.varies(v, found)), None)
                        if deciding is not None:
                            self.parts.append((s, deciding, value))

    def loop(self, s, found, ctl):
        test = getattr(s, "test", None) or s.iter
        self.loops.append(s)
        jumps, split, before = len(self.jumps), False, None
        while before != found:  # to a fixed point: what one pass makes varying, the next pass starts with
            before = found
            split = split or self.varies(test, found)
            if isinstance(s, ast.For):
                bound = names(s.target)
                found = found | bound if ctl or split else found - bound
            if split:
                self.guard = (s, test)
            found = before | self.block(s.body, set(found), ctl or split, split)
        self.loops.pop()
        if split:
            self.decisions.append((s, test))
        if split or len(self.jumps) > jumps:  # threads leave it after different numbers of passes
            found = found | {n for node in ast.walk(s) for t, _v in assignments(node)
                             for n in names(t) | self.kept(t)}
        return self.block(s.orelse, found, ctl or split, False)


def apart(func, threads=None, constants=None):
    """(barrier, why) when threads of one block may wait at two different barriers of `func` at once: a varying
    if or loop with a barrier inside one arm and another in the other arm, after it, or in a loop around it; or a
    varying break or continue that takes some threads past a barrier of their loop to another one; else None. With
    the block's `threads` (x, y) and `constants` a comparison of a thread's index alike in all of them (if tx < T:
    with T columns) sends none apart."""
    flow = _Flow(func, Extent(func, threads, constants) if threads else None)
    parent = {child: node for node in ast.walk(func) for child in ast.iter_child_nodes(node)}

    def up(node):  # the ids of `node` and of every node that holds it
        found = {id(node)}
        while node in parent:
            node = parent[node]
            found.add(id(node))
        return found
    sites = {x: up(x) for x in ast.walk(func) if is_barrier(x)}  # each barrier with what holds it
    loops = {id(n) for n in ast.walk(func) if isinstance(n, (ast.For, ast.While))}

    def around(node):  # the barriers of the loops that hold `node`: met again on the next pass
        held = (up(node) - {id(node)}) & loops
        return [x for x, holders in sites.items() if holders & held]
    for node, test in dict.fromkeys(flow.decisions):  # a loop's passes record a decision more than once
        again = around(node)
        arms = [node.body, node.orelse] if isinstance(node, ast.If) else [c.body for c in getattr(node, "cases", ())]
        for arm in arms or [node.body]:
            ids = {id(statement) for statement in arm}
            here = [x for x, holders in sites.items() if holders & ids]
            elsewhere = [x for x, holders in sites.items() if not holders & ids and (
                x.lineno > node.end_lineno or x in again or id(node) in holders)]
            if here and elsewhere:
                return _said(here[0], elsewhere[0], node, test)
    for statement, test, part in flow.parts:  # a barrier inside an expression that some threads skip
        held = {id(n) for n in ast.walk(part)}
        here = [x for x in sites if id(x) in held]
        elsewhere = [x for x, holders in sites.items() if id(x) not in held and (
            x.lineno > statement.end_lineno or x in around(statement) or id(statement) in holders)]
        if here and elsewhere:
            return _said(here[0], elsewhere[0], statement, test)
    for guard, test, jump, loop in flow.jumps:
        after = [x for x, holders in sites.items() if id(loop) in holders and x.lineno > guard.end_lineno]
        if isinstance(jump, ast.Break):
            met = [x for x, holders in sites.items() if id(loop) not in holders and (
                x.lineno > loop.end_lineno or x in around(loop))]
        else:
            met = [x for x, holders in sites.items() if id(loop) in holders and x.lineno < guard.lineno]
        if after and met:
            return _said(after[0], met[0], guard, test)
    return None


def _said(one, other, branch, test):
    first, other = sorted((one, other), key=lambda x: x.lineno)
    return first, _("threads of one block can wait here and at the cuda.syncthreads() of line {other} at the same "
                    "time, sent apart by line {branch} ({test} differs between threads). On a GPU every thread of a "
                    "warp must reach the same barrier, so the block hangs (the simulator lets them meet). Put one "
                    "cuda.syncthreads() where every thread of the block passes it, and guard only the loads and "
                    "stores.").format(other=other.lineno, branch=branch.lineno, test=ast.unparse(test))
