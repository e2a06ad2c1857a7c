"""CONTRIBUTING.md's "adding a rung", done: a rung added by one `_gen` line (here into the registry in
memory) gets every per-kernel test of its own from the registry and passes them, brings its own source-hash
case, and notebook 7's ladder cells run, naming it "not measured on a GPU yet" instead of failing. Its
"adding an exercise" names everything an exercise touches, and every file, command and name it gives is real."""
import functools
import importlib
import pathlib
import re
import tomllib

import nbformat
import pytest
from nbval.plugin import get_sanitize_patterns

import test_every_kernel
import test_generated_source
from tiledlab.core import registry

NAME = "gen_new_rung"
ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "07_register_tiling.ipynb"


@pytest.fixture
def new_rung(monkeypatch):
    rung = registry._gen("ladder", NAME, (64, 128, 8, 8, 8), "a rung no GPU has timed yet", buffers=2, warp=(4, 8))
    monkeypatch.setattr(registry, "_ALL", registry._ALL + [rung])
    monkeypatch.setitem(registry.KERNELS, NAME, rung)
    monkeypatch.setattr(registry, "LADDER", registry.LADDER + [NAME])
    return rung


def test_the_per_kernel_tests_are_its_own_and_pass(new_rung):
    assert registry.family("ladder")[-1] == NAME and registry.LADDER[-1] == NAME
    for case in (test_every_kernel.test_it_says_what_it_is_and_what_it_needs,
                 test_every_kernel.test_right_on_an_odd_shape_at_its_defaults,
                 test_every_kernel.test_counted_exactly_at_small_constants,
                 test_every_kernel.test_the_source_shown_is_the_source_built):
        case(NAME)
    cases = [(k.name, test_generated_source.tile(k), test_generated_source.generator_options(k))
             for k in registry.KERNELS.values() if k.name == NAME]
    assert cases == [(NAME, (64, 128, 8, 8, 8), {"buffers": 2, "warp": (4, 8)})]  # its hash, once recorded


def test_notebook_7_names_it_not_measured_yet(new_rung, capsys, monkeypatch):
    import matplotlib
    matplotlib.use("Agg")
    cells = nbformat.read(NOTEBOOK, as_version=4).cells
    ladder_cells = [c.source for c in cells if c.cell_type == "code" and "measured(ladder, registry.LADDER)" in c.source]
    assert ladder_cells, "notebook 7's ladder table no longer asks measured(ladder, registry.LADDER)"
    start = next(i for i, c in enumerate(cells) if c.source == ladder_cells[0])
    scope = {}
    exec(next(c.source for c in cells if "rand = setup()" in c.source), scope)  # its imports
    capsys.readouterr()
    exec(cells[start].source, scope)  # the ladder table, whose output nbval compares with the stored one
    out = capsys.readouterr().out
    exec(cells[start + 1].source, scope)  # and its figure
    assert f"{NAME}: counted on the simulator, not measured on a GPU yet" in out
    assert NAME not in scope["order"] and scope["order"][:2] == ["naive", "tiled"]
    stored = "".join(o.get("text", "") for o in cells[start].outputs if o.get("name") == "stdout")
    assert sanitized(out) == sanitized(stored) != sanitized(out + f"{NAME}: not the line\n")  # what nbval compares


def sanitized(text):
    """`text` as nbval compares it, with pyproject's --nbval-sanitize-with file."""
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    cfg = ROOT / re.search(r"--nbval-sanitize-with (\S+)", options)[1]
    for regex, replace in get_sanitize_patterns(cfg.read_text()):
        text = re.sub(regex, replace, text)
    return text


def test_it_names_every_family_and_the_one_line_helper_of_each():
    """CONTRIBUTING.md's families and `_gen` partials are the registry's (a new family is named there)."""
    text = (ROOT / "CONTRIBUTING.md").read_text()
    families = {k.family for k in registry.KERNELS.values()}
    helpers = [n for n, v in vars(registry).items() if isinstance(v, functools.partial) and v.func is registry._gen]
    assert len(helpers) >= 5 and [f for f in sorted(families) if f"`{f}`" not in text] == []
    assert [h for h in helpers if f"`{h}`" not in text] == []


def section(title):
    """The text of CONTRIBUTING.md's section `title`, up to the next one."""
    return (ROOT / "CONTRIBUTING.md").read_text().split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


# What adding exercise 9.9 to notebook 1 took, both editions, in a scratch clone (issue 40): the names below,
# each in the module that holds it, and the commands and files around them.
EXERCISE_NAMES = {"ANSWERS": "solutions.key", "EXERCISES": "solutions.kernels",
                  "NOTEBOOK_HINTS": "tiledlab.counting.exercises", "THREE_SESSIONS": "tools.plans",
                  "PLAN_90": "tools.plans", "POINTS": "classroom.grading"}
EXERCISE_STEPS = ("python -m tools.code_catalog", "tiledlab/locale/zh_CN/LC_MESSAGES/tiledlab.po",
                  "python -m tools.walkthrough notebooks/<stem>.ipynb", "docs/teaching.md",
                  "Learning outcomes and the rubric", "python -m tools translate update",
                  "locale/zh_CN/LC_MESSAGES/notebooks/<stem>.po", "locale/zh_CN/LC_MESSAGES/docs/teaching.po",
                  "python -m tools translate build", "python -m tools translate check")


def test_adding_an_exercise_names_everything_an_exercise_touches():
    text = " ".join(section("Adding an exercise").split())
    missing = [s for s in EXERCISE_STEPS if s not in text]
    missing += [f"`{n}` in {m}" for n, m in EXERCISE_NAMES.items()
                if not re.search(rf"`{n}\b", text) or f"`{m.replace('.', '/')}.py`" not in text]
    assert missing == []


MISSING = object()


def resolves(dotted):
    """Whether `dotted` names a module, or a name in one (tiledlab.i18n._)."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            found = getattr(found, attr, MISSING)
        return found is not MISSING
    return False


def test_the_files_modules_and_names_it_gives_exist():
    """Every file, `python -m` module and name the section gives is real (`tiledlab.counting.check` was not)."""
    text = " ".join(section("Adding an exercise").split())
    wrong = []
    for token in re.findall(r"`([^`]+)`", text):
        token = re.sub(r"\(.*\)$", "", token)  # a call: its function
        module = re.fullmatch(r"python -m ([\w.]+)(?: .*)?", token)
        if module and importlib.util.find_spec(module[1]) is None:
            wrong.append(token)
        elif re.fullmatch(r"[\w./<>-]+\.(py|md|po|mo|csv|ipynb)", token) and "/" in token:
            if not list(ROOT.glob(token.replace("<stem>", "*"))):
                wrong.append(token)
        elif re.fullmatch(r"(tiledlab|solutions|tools|classroom)(\.\w+)+", token) and not resolves(token):
            wrong.append(token)
    wrong += [f"{m}.{n}" for n, m in EXERCISE_NAMES.items() if not hasattr(importlib.import_module(m), n)]
    assert wrong == []
    from classroom.grading import POINTS
    assert f"{POINTS['kernel']} for a kernel, {POINTS['prediction']} for a prediction" in text
