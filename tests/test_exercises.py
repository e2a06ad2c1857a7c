"""Every exercise of the series has a key, and each notebook's own exercise cell accepts the key's answer
(and refuses a wrong one). Runs the cells in-process: the notebook's first code cell, its kernel cells,
then the exercise cell: with the key's kernel in place of the stub, or as given (once, for both tests), then
a prediction exercise's verdict on the key's answer and on a wrong one, in the namespace it left."""
import ast
import contextlib
import inspect
import io
import json
import linecache
import pathlib
import re

import matplotlib
import pytest

from solutions.key import ANSWERS
from solutions.kernels import EXERCISES
from tiledlab.core.kernels import tiled
from tiledlab.counting.exercises import own_rules

matplotlib.use("Agg")
NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.ipynb"))
EXERCISE = re.compile(r"^# Exercise (\d+\.\d+)\s*$", re.M)


def cells(path):
    return [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def source(cell):
    return "".join(cell["source"])


def exercise_cells():
    for path in NOTEBOOKS:
        code = [c for c in cells(path) if "colab-install" not in c["metadata"].get("tags", [])]  # Colab's own
        setup = [source(code[0])] + [source(c) for c in code if "kernel-source" in c["metadata"].get("tags", [])]
        for c in code:
            m = EXERCISE.match(source(c))
            if m:
                yield pytest.param(path.name, m.group(1), setup, source(c), id=m.group(1))


def run(setup, cell, namespace=None):
    namespace, out = {} if namespace is None else namespace, io.StringIO()
    with contextlib.redirect_stdout(out):
        for k, src in enumerate(setup + [cell]):
            name = f"<notebook cell {k} {hash(src)}>"  # in linecache, so the kernels' source can be read
            linecache.cache[name] = (len(src), None, src.splitlines(True), name)
            exec(compile(src, name, "exec"), namespace)
    return out.getvalue()


_AS_GIVEN = {}  # exercise -> (what its cell as given prints, its namespace after): each cell run as given once


def as_given(exercise, setup, cell):
    if exercise not in _AS_GIVEN:
        namespace = {}
        _AS_GIVEN[exercise] = (run(setup, cell, namespace), namespace)
    return _AS_GIVEN[exercise]


def verdict(cell):
    """The last statement of a prediction exercise's cell, the only one that reads `prediction` (its
    measurement is made before it): re-run after the cell with another prediction, it judges that one."""
    *before, last = ast.parse(cell).body
    reads = [any(isinstance(n, ast.Name) and n.id == "prediction" and isinstance(n.ctx, ast.Load) for n in ast.walk(s))
             for s in (*before, last)]
    assert reads[-1] and not any(reads[:-1]), "only the cell's last statement may read `prediction`"
    return ast.get_source_segment(cell, last)


def predicting(namespace, value, cell):
    """What the cell's verdict prints for the prediction `value`, after the cell as given ran in `namespace`."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(f"prediction = {value!r}\n{verdict(cell)}", "<the exercise's verdict>", "exec"), dict(namespace))
    return out.getvalue()


def with_solution(cell, solution):
    """The exercise cell with its stub kernel replaced by the solution, under the stub's name."""
    stub = re.search(r"^@cuda\.jit\ndef (\w+)\(.*?(?=^\S)", cell, re.M | re.S)
    code = inspect.getsource(getattr(getattr(solution, "code", None), "function", None) or solution.py_func)
    code = code[code.index("\ndef ") + 1:] if not code.startswith("def ") else code  # the cell keeps its decorators
    code = "@cuda.jit\n" + re.sub(r"def \w+\(", f"def {stub.group(1)}(", code, count=1)
    return cell[:stub.start()] + code + "\n\n" + cell[stub.end():]


def test_every_exercise_has_a_key_and_every_key_an_exercise():
    found = {p.values[1] for p in exercise_cells()}
    assert found == set(ANSWERS) and set(EXERCISES) <= found


@pytest.mark.parametrize("notebook,exercise,setup,cell", list(exercise_cells()))
def test_the_notebook_accepts_the_key(notebook, exercise, setup, cell):
    """The key's kernel in the cell passes, a pass under the cell's own rules (the key's options are the cell's too)."""
    if exercise in EXERCISES:
        kernel, options = EXERCISES[exercise]
        namespace = {}
        said = run(setup, with_solution(cell, kernel), namespace)
        assert "Passed." in said and "Not noted" not in said, said
        stub = ast.parse(cell).body[-1].value.args[0].id
        assert own_rules(cell, namespace, (namespace[stub],), options) == []
    else:
        # the cell as given (its measurement) once, then its verdict on the key's answer and on a wrong one
        answer = ANSWERS[exercise].value
        assert "prediction = None" in cell
        namespace = as_given(exercise, setup, cell)[1]
        assert "Right" in predicting(namespace, answer, cell)
        wrong = tuple(2 * v + 1 for v in answer) if isinstance(answer, tuple) else 2 * answer + 1
        assert "not yet" in predicting(namespace, wrong, cell)


@pytest.mark.parametrize("notebook,exercise,setup,cell", list(exercise_cells()))
def test_the_stub_as_given_does_not_pass(notebook, exercise, setup, cell):
    out = as_given(exercise, setup, cell)[0]
    assert "Passed." not in out and "Right" not in out


@pytest.mark.parametrize("exercise, says", [
    ("2.1", "Right answer, but B is loaded 1,024 times at 16×16·16×16, where this exercise reads it straight from "
            "global memory, as often as the naive kernel: 4,096 times."),
    ("6.1", "Right answer, but blocked_loop declares shared memory (sA, sB) and this exercise asks for none")])
def test_exercises_2_1_and_6_1_check_their_rules(exercise, says):
    """Exercise 2.1 reads B straight from global memory and 6.1 uses no shared memory: the cells' checks said neither,
    so notebook 2's tiled kernel, which loads fewer, passed both."""
    _notebook, _exercise, setup, cell = next(p.values for p in exercise_cells() if p.values[1] == exercise)
    said = run(setup, with_solution(cell, tiled))
    assert says in said and "Passed." not in said, said
