"""A student's real workflow in one Jupyter kernel, as in JupyterLab: notebook 2's first cells, then exercise 2.1's
cell run again and again as its kernel is edited: as handed out, with a barrier left out, with a tile read the
wrong way round, right, and wrong again. Each run gets its own feedback (the right kernel passes, no wrong one
passes, even after the right one did under the same name) and none shows a traceback or anything on stderr."""
import pathlib
import re

import pytest

from solutions.kernels import EXERCISES
from test_exercises import exercise_cells, with_solution

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")


def attempts():
    """(what the student changed, the exercise cell as run) for each run of exercise 2.1's cell."""
    notebook, exercise, setup, cell = next(p.values for p in exercise_cells() if p.values[1] == "2.1")
    right = with_solution(cell, EXERCISES[exercise][0])
    last_barrier = right.rindex("        cuda.syncthreads()")
    no_second_barrier = right[:last_barrier] + right[right.index("\n", last_barrier) + 1:]
    swapped = right.replace("sA[ty, k]", "sA[k, ty]")
    assert no_second_barrier != right and swapped != right
    return setup, [("as handed out", cell), ("second barrier left out", no_second_barrier),
                   ("tile read the wrong way round", swapped), ("right", right),
                   ("barrier left out again", no_second_barrier)]


def test_each_run_of_an_exercise_cell_gets_its_own_feedback(tmp_path):
    setup, runs = attempts()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in setup + [cell for _what, cell in runs]]
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    for cell in nb.cells:
        bad = [o for o in cell.outputs if o.output_type == "error" or o.get("name") == "stderr"]
        assert not bad, (cell.source[:200], bad)
    said = {what: "".join(o.get("text", "") for o in cell.outputs)
            for (what, _src), cell in zip(runs, nb.cells[len(setup):])}
    assert "Passed." in said["right"] and "Not noted" not in said["right"], said["right"]  # under the cell's own rules
    for what in ("as handed out", "second barrier left out", "tile read the wrong way round", "barrier left out again"):
        assert "Passed." not in said[what] and said[what].strip(), (what, said[what])
    lines = [re.findall(r"line \d+", said[what]) for what in ("second barrier left out", "barrier left out again")]
    assert lines[0] and lines[0] == lines[1], said  # the same lines blamed: nothing kept from the right run
