"""The package's wings stay layered: no module imports one from a wing above its own, i18n at the bottom needs only
the standard library, tools and classroom use only public names of the package, and no package has an import cycle."""
import ast
import pathlib
import re
import sys
from importlib.util import resolve_name

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "tiledlab"


def layers():
    """{wing: its height} from the package docstring's list of wings, bottom to top (one home for it)."""
    doc = ast.get_docstring(ast.parse((ROOT / "__init__.py").read_text()))
    rows = re.findall(r"^  (\w+(?:, \w+)*)  ", doc.split("Wings, bottom to top", 1)[1], re.M)
    found = {wing: height for height, row in enumerate(rows) for wing in row.split(", ")}
    return {**found, "__init__": len(rows)}  # the package's own __init__ sits on top


LAYERS = layers()


def module_name(path, root=ROOT):
    return ".".join((root.name,) + path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")


def wing(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def is_module(name, root=ROOT):
    path = root.joinpath(*name.split(".")[1:])
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def imports(path, root=ROOT):
    """Modules of the package `root` imported anywhere in `path` (function-level imports included)."""
    me = module_name(path, root)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = resolve_name("." * node.level + (node.module or ""), package) if node.level else node.module
            found |= {f"{base}.{a.name}" if is_module(f"{base}.{a.name}", root) else base for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {m for m in found if m.split(".")[0] == root.name} - {me}


def graph(root=ROOT):
    return {module_name(p, root): imports(p, root) for p in root.rglob("*.py")}


def test_no_module_imports_from_a_wing_above_its_own():
    upward = [(m, i) for m, targets in graph().items() for i in targets
              if LAYERS[wing(i)] > LAYERS[wing(m)]]
    assert upward == []


@pytest.mark.parametrize("root", [ROOT, ROOT.parent / "tools", ROOT.parent / "classroom"], ids=lambda r: r.name)
def test_no_import_cycles(root):
    """Within the package, the maintainers' tools and the classroom (tools/cli, execute and links once
    imported each other in a circle)."""
    g = graph(root)
    state = {}

    def visit(m, path):
        state[m] = "open"
        for n in g.get(m, ()):
            if n == m.rsplit(".", 1)[0] or m.startswith(n + "."):
                continue  # a module may use its own package's __init__
            if state.get(n) == "open":
                raise AssertionError(" -> ".join(path + [n]))
            if n not in state:
                visit(n, path + [n])
        state[m] = "done"

    for m in g:
        if m not in state:
            visit(m, [m])


def test_the_language_at_the_bottom_imports_only_the_standard_library():
    """i18n translates strings: running a notebook's cells (IPython) or finding a font for figures
    (matplotlib) belongs to the notebook wing above it."""
    tree = ast.parse((ROOT / "i18n.py").read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names} | \
        {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert {n for n in names if n.split(".")[0] not in sys.stdlib_module_names} == set()


def private_uses(folder):
    """'file: name' for each private name of tiledlab that a .py file under `folder` imports
    (`from tiledlab.cli import _out_folder`) or reads from a tiledlab module it imported (`i18n._catalog`)."""
    found = []
    for path in folder.rglob("*.py"):
        tree, modules = ast.parse(path.read_text()), set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "tiledlab":
                found += [f"{path.relative_to(folder)}: {node.module}.{a.name}" for a in node.names
                          if a.name.startswith("_")]
                modules |= {a.asname or a.name for a in node.names}
            elif isinstance(node, ast.Import):
                modules |= {a.asname or a.name for a in node.names if a.name.split(".")[0] == "tiledlab"}
        found += [f"{path.relative_to(folder)}: {n.value.id}.{n.attr}" for n in ast.walk(tree)
                  if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in modules
                  and n.attr.startswith("_") and not n.attr.startswith("__")]
    return found


@pytest.mark.parametrize("room", ["tools", "classroom"])
def test_tools_and_the_classroom_use_only_public_names_of_the_package(room):
    """What they need of tiledlab (the command line's helpers, say) has a public name, kept as such."""
    assert private_uses(ROOT.parent / room) == []


def test_every_wing_says_what_it_holds():
    for package in ROOT.glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(package.read_text()))
        assert doc and len(doc) > 60, package


def absolute_imports(folder, of):
    """'file: module' for each import of the top-level package `of` in a .py file under `folder`."""
    found = []
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            found += [f"{path.relative_to(folder)}: {n}" for n in names if n.split(".")[0] == of]
    return found


@pytest.mark.parametrize("room", ["tools", "classroom"])
def test_the_package_never_imports_what_runs_only_from_a_clone(room):
    """tools/ (the maintainers') and classroom/ (the teacher's) are not installed with tiledlab: nothing
    in the package may need them."""
    assert absolute_imports(ROOT, room) == []


def test_the_classroom_never_imports_the_maintainers_tools():
    """A teacher's clone needs no maintainers' extra: tools may use classroom, never the reverse."""
    assert absolute_imports(ROOT.parent / "classroom", "tools") == []


# What a newcomer can read: the lesson's core and what students run, at most 8,000 lines (issue 25). The
# maintainers' GPU measurements went to tools/measure and the teacher's commands to classroom/; the rest was
# simplified with every figure and generated kernel unchanged. A ratchet: lower it as modules get simpler; it
# rose by 7 lines for bug fixes a review found (whole numbers, tune's backends, a variant's refusal), by 44 for
# issue 39 (the fair headline, --version, the Chinese command line), and by 879 for issues 36 and 38: the lab's
# partial-tile shapes, the causes of a wrong product (counting/diagnosis.py), unstored shared reads, barriers
# counted per thread, the refusals of lookups at run time, atomic adds into C, the Build each kernel binds once,
# best's model of the card and its split-K rungs, and a review's fixes. Issue 40 asks for 7,500; the counting path
# made one way held it level; a rule's one-use helper and the check's own operands went (8,838); shorter docstrings,
# one-use helpers folded in and the simulator's checks of numba written as data, wing by wing (8,155); contracts
# a review found cut put back (8,161); a student's wrong arguments and a broken rule's real cause said in one line,
# in both languages, in check(), the counting helpers, the notebook helpers and the core's refusals (8,355); a
# build's shared declarations found once, and the generator's rules marked for the catalog with their quoted limits
# (8,364); the lowest block and thread as a hazard's and a race's example (8,373); a hurried teacher's command
# lines refused before they run (tune's kernel names and simulator forecast, an empty or unwritable --out, a
# misspelt command or option, a pasteable dry run, tune --shape with --n tunes both: 8,407). A round of cuts that
# keep behaviour, messages and generated source (dead code: none found; one-use helpers folded, docstrings that
# restated their code cut, constants at the top): 8,153; above 7,500 remain the 879 lines of issues 36 and 38 (above).
# Lowering it further would take docstrings that say why, or code a student runs. A shape past the largest shared
# extent in check() and a wrong product's cause for a kernel with no shared tile (a probe's findings): 8,176. The
# first GPU suite's findings (a kernel whose threads wait at two barriers, which hangs an H100, refused by its lines
# on both backends; a shared read classified once) and a while loop nothing changes or leaves, refused alike:
# 8,299; the barrier check made flow-sensitive (a name reassigned, breaks and continues, a hostile review's 15
# cases; each barrier's holders found once, not per pair: 2.3 s → 0.03 s for the largest rung): 8,380. A counting
# build's helpers compiled once per kind of argument and called, not inlined (a rung's count on a GPU: minutes): 8,401.
# A while loop left by the count after more passes than the arrays have elements, named by line and thread, and a
# barrier inside an expression some threads skip refused as one in an if is (probe misses closed): 8,461. What numba
# compiles for no GPU but the simulator runs (:=, a block vote of a condition), refused on both (the barrier check's
# walrus handling, now unreachable, gone): 8,475; the loop guard's message honest about its limit: 8,476. What a GPU
# cannot build refused in a kernel's helpers too (and lists, a vote of a flag), a range too long to count left
# before its first pass by its line, a range of the arrays' sides told apart so the lesson's rewrite stays as shown,
# and a helper that loops refused: 8,615. Four probe misses closed (a flag kept in a local array, a step only in
# the loop's else, a bound read through a local tuple, k += 0): 8,647; the contract's walks made one per tree
# (8,637); eight of the largest modules read for cuts that keep behaviour, generated source and figures: 14 lines
# (no dead code, no repeated run of four lines found): 8,623; a pass that counts every shape it ran: 8,624; an
# untouched stub's check says it is not started: 8,630. A hostile review's findings, each by its class: ranges
# bounded by a multiple of the arrays' sides (names shadowing globals and doubling one another no longer pass), for
# loops over anything else guarded pass by pass, helpers through modules, votes of conditions however written, lists
# only iterated accepted, breaks in a nested else or a match, local arrays stored at a per-thread index, through an
# alias or a helper, and match statements in the barrier check: 8,705. The class report's gist of a feedback (a
# check's cause, a prediction's verdicts; outcomes.summary): 8,716.
# The final review: range_length's eval of constant ranges folded into the bound the guard already reads
# (a product of constants alone): 8,698.
# A vote of anything but a whole number refused on the simulator at run time, as numba's GPU compiler does (a
# helper's condition, a float), in the one message of the static check: 8,726. A thread's passes through the loops
# inside a guarded loop counted in all (nested loops that never end left within one loop's passes): 8,759. A number
# past 64 bits said as such: 8,762. Checks in an assignment nbgrader fetched into the working copy recorded (the
# nearest .gitignore decides): 8,772. Python a GPU cannot build though the simulator runs it (a plain helper,
# try/except, numpy arrays, f-strings, global lists and dicts, stores into global arrays, a kernel's return value)
# refused as the kernel's fault: 8,852. check() counting at a shape smaller than one block and one step, and past a
# large shared buffer in one dimension at a time (thin products, not a cube): 8,854. A check of tiledlab's own
# kernel in an exercise cell not recorded as the student's pass: 8,867. launch_geometry misused (one number for a
# block, no parentheses, below @cuda.jit, a constant it was not given, a wrong min_blocks) said in one line: 8,901.
# swapped_xy exchanging cuda.grid/gridsize too (refusing by line an index it cannot), warp operations refused, a
# return of a def inside the kernel allowed: 8,962. check() counting (its loops guarded) at each shape before it
# runs the kernel there, so a loop that never ends at one shape only is said, not waited for: 8,965. Barriers per
# step of several tiles of K (exercise 3.1's rule): 8,973. A GPU compiler's refusal of a vote found by the vote's
# line, a float vote said alike on both backends (float32 there, float64 here): 8,983.
# A thread guard every thread of the block passes, and len(X) and X.size read as shapes, accepted (the block's
# extent given to the contract by the build): 9,084. Tiles sized without T in the lesson's blocks said so: 9,099.
# English f-strings a student could meet sent through _(), a float index's example named whole (k * 2 / 2), a local
# array FRESH (NaN) on the simulator, and a NaN stored by a kernel declaring one named as the cause (+65): 9,164;
# a declaration the count refuses left to say so there: 9,167; the shared sides read once for both uses: 9,171.
# An unstored shared read by a thread that stores no element of C said to be thrown away, with the fix (+19): 9,190.
# check()'s rules from_global (2.1: B straight from global memory) and shared_memory=False (6.1) (+28): 9,218.
# A pass noted only under the exercise cell's own rules, read from the cell as handed out (+86): 9,304. Its
# return False there (nbgrader's score), an exercise named below a student's comment, atomic adds into C noted: 9,313.
# Loads over the budget by threads that store no element of C said so (the count's idle_loads): 9,328.
# A loop that never ends whose test is != told it can step over its end: 9,342.
# A @cuda.jit signature for other arrays than float32 refused by its line: 9,358.
# Device functions a kernel calls built again with its constants bound (hostile51 S1, +83), a size read from a global
# outside the kernel (M, K, N, or a whole number that acts as one) named as the cause (hostile51 N3, +70): 9,511.
# Hostile review 51: a kernel's failure said in words alike on both backends, at the line that failed (N5); a kernel
# in a cell run by %%time refused in one line (N4); three wrong results' causes named (N6) (+132): 9,643.
# A GPU compiler's refusal naming no line placed at the kernel's line naming it (found on the H100): 9,651.
LINE_BUDGET = 9651


def test_the_installed_package_stays_within_its_line_budget():
    """tiledlab/**/*.py, every line counted (docstrings and comments too); maintainers' tools live in tools/,
    the teacher's in classroom/."""
    lines = {str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in ROOT.rglob("*.py")}
    largest = sorted(lines.items(), key=lambda kv: -kv[1])[:5]
    assert sum(lines.values()) <= LINE_BUDGET, f"{sum(lines.values())} lines; the largest: {largest}"


def test_the_docstring_names_every_wing():
    assert {wing(module_name(p)) for p in ROOT.rglob("*.py")} <= set(LAYERS)
    assert LAYERS["backend"] < LAYERS["core"] < LAYERS["counting"] < LAYERS["notebook"] < LAYERS["cli"]


def calls_from(below, above, run):
    """'caller -> callee' for each call that a function of the package's wing `below` makes into a function of the
    wing `above` while `run()` runs (in this thread): a callback handed down, or a duck-typed object from above."""
    low, high = str(ROOT / below) + "/", str(ROOT / above) + "/"
    found = set()

    def profile(frame, event, arg):
        if event == "call" and frame.f_back and frame.f_code.co_filename.startswith(high) and \
                frame.f_back.f_code.co_filename.startswith(low):
            found.add(f"{frame.f_back.f_code.co_name} -> {frame.f_code.co_name}")
    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return sorted(found)


def test_the_counting_path_runs_one_way():
    """The counting lab asks the core for a kernel's Build and for the launch of what it compiled itself: the core
    never calls back into the lab (it imports nothing of it: test_no_module_imports_from_a_wing_above_its_own)."""
    import numpy as np

    import tiledlab
    from tiledlab.counting import count_loads
    from tiledlab.counting.exercises import check

    A = np.ones((6, 5), np.float32)
    assert calls_from("core", "counting", lambda: count_loads("tiled", A, A.T.copy(), 4)) == []
    assert calls_from("core", "counting", lambda: check(tiledlab.tiled, tile=4, seed=0)) == []


def test_check_is_the_exercise_check_and_enforce_raises():
    """One meaning per name (issue 40): `check` prints a student's feedback (counting.exercises.check, the notebooks'
    API); what raises a ValueError when a kernel breaks a rule or the contract is `enforce` (rules, contract)."""
    trees = {str(p.relative_to(ROOT)): ast.parse(p.read_text()) for p in ROOT.rglob("*.py")}
    defined = {name: sorted(path for path, tree in trees.items() for n in ast.walk(tree)
                            if isinstance(n, ast.FunctionDef) and n.name == name) for name in ("check", "enforce")}
    assert defined == {"check": ["counting/exercises.py"], "enforce": ["core/contract.py", "core/rules.py"]}
