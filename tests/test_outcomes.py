"""check() and predict() record their outcome in the student's working copy, and only there; the record
never costs the student their feedback (a read-only folder, a notebook outside a working copy)."""
import json
import os
import runpy

import pytest
from numba import cuda, float32
from test_exercises import exercise_cells, run, with_solution

from classroom import grading
from solutions.kernels import EXERCISES
from tiledlab.counting import outcomes
from tiledlab.counting.exercises import check, predict


def exercise_cell(folder, source, name="cell.py"):
    """Run `source` as a file, as IPython runs a cell: its first line names the exercise."""
    path = folder / name
    path.write_text(source)
    return runpy.run_path(str(path))


@pytest.fixture
def copy(tmp_path, monkeypatch):
    """A working copy, as `lab` and `hub` make it (git ignores all of it), as the current folder."""
    (tmp_path / ".gitignore").write_text("# A working copy made by `python -m tiledlab lab`\n*\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def recorded(folder):
    path = folder / outcomes.FILE
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_predict_records_the_exercise_the_verdict_and_the_first_line(copy, capsys):
    exercise_cell(copy, "# Exercise 1.2\nfrom tiledlab.counting.exercises import predict\npredict(100, 120)\n"
                        "predict(120, 120)\npredict(None, 120)\n")
    said = capsys.readouterr().out
    assert "not yet: 100 is too low." in said and "Right: measured 120." in said  # the student still sees it
    wrong, right = recorded(copy)  # predict(None) is no attempt: not recorded
    assert (wrong["exercise"], wrong["passed"], wrong["feedback"]) == ("1.2", False, "not yet: 100 is too low.")
    assert (right["passed"], right["feedback"]) == (True, "Right: measured 120.")
    assert right["time"] >= wrong["time"] and "T" in right["time"] and right["started"] is None  # not in IPython


@pytest.mark.parametrize("above", ["# my attempt\n", "\n# my attempt\n\n", "#\n"])
def test_a_comment_above_the_exercise_line_still_names_the_exercise(copy, capsys, above):
    """The exercise's line need not stay first: a student's comment above it (and blank lines) is no other cell."""
    exercise_cell(copy, above + "# Exercise 1.2\nfrom tiledlab.counting.exercises import predict\npredict(120, 120)\n")
    assert [(row["exercise"], row["passed"]) for row in recorded(copy)] == [("1.2", True)]


def test_an_exercise_line_below_the_first_statement_names_no_exercise(copy):
    exercise_cell(copy, "x = 1\n# Exercise 1.2\nfrom tiledlab.counting.exercises import predict\npredict(120, 120)\n")
    assert recorded(copy) == []


NAIVE_IN_THE_CELL = """# Exercise 3.3
from numba import cuda, float32
from tiledlab.counting.exercises import check
@cuda.jit
def mine(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
passed = check(mine, tile=4)
"""


def test_check_records_its_outcome_too(copy):
    exercise_cell(copy, NAIVE_IN_THE_CELL)
    (row,) = recorded(copy)
    assert row["exercise"] == "3.3" and row["passed"] is False and row["feedback"].startswith("Correct on")


@pytest.mark.parametrize("kernel", ['"tiled"', "tiledlab.tiled", 'tiledlab.core.registry.KERNELS["tiled"]'])
def test_a_check_of_tiledlabs_own_kernel_in_an_exercise_cell_is_not_recorded(copy, capsys, kernel):
    exercise_cell(copy, "# Exercise 2.1\nimport tiledlab, tiledlab.core.registry\n"
                        f"from tiledlab.counting.exercises import check\npassed = check({kernel}, tile=4)\n")
    assert recorded(copy) == []
    assert "The kernel checked is tiledlab's, not yours: exercise 2.1 is noted" in capsys.readouterr().out


def test_nothing_is_recorded_outside_a_working_copy_or_an_exercise_cell(tmp_path, monkeypatch, copy):
    exercise_cell(copy, "from tiledlab.counting.exercises import predict\npredict(120, 120)\n")
    assert recorded(copy) == []  # a cell without "# Exercise" on its first line
    clone = tmp_path / "repo" / "notebooks"  # a clone's notebooks/: the repository's .gitignore ignores some files
    clone.mkdir(parents=True)
    (clone.parent / ".gitignore").write_text("*.pyc\nmy-notebooks/\n")
    monkeypatch.chdir(clone)
    exercise_cell(clone, "# Exercise 1.2\nfrom tiledlab.counting.exercises import predict\npredict(120, 120)\n")
    assert not (clone / outcomes.FILE).exists()
    assert predict(120, 120) is True and not (clone / outcomes.FILE).exists()


def test_an_assignment_fetched_into_the_working_copy_is_recorded_where_it_lies(tmp_path, copy):
    """nbgrader fetches an assignment into notebooks/<assignment>/: the nearest .gitignore (the working copy's `*`)
    decides, so its checks are recorded there, where the class report looks; a clone's folder still records none."""
    fetched = copy / "01_naive_reads"
    fetched.mkdir()
    assert outcomes.record("1.2", True, "Right", fetched) == fetched / outcomes.FILE
    clone = tmp_path / "clone"
    (clone / "notebooks" / "01_naive_reads").mkdir(parents=True)
    (clone / ".gitignore").write_text("my-notebooks/\n*.pyc\n")
    assert outcomes.record("1.2", True, "Right", clone / "notebooks" / "01_naive_reads") is None


def test_a_folder_that_cannot_be_written_costs_nothing(copy, capsys):
    (copy / outcomes.FILE).mkdir()  # open(..., "a") fails with an OSError, as in a read-only folder
    exercise_cell(copy, "# Exercise 1.2\nfrom tiledlab.counting.exercises import predict\nok = predict(120, 120)\n")
    assert "Right: measured 120." in capsys.readouterr().out
    assert outcomes.record("1.2", True, "Right", copy) is None


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_working_copy(copy):
    copy.chmod(0o555)
    try:
        assert outcomes.record("1.2", True, "Right", copy) is None
    finally:
        copy.chmod(0o755)


def test_read_skips_lines_that_are_not_outcomes(tmp_path):
    path = tmp_path / outcomes.FILE
    good = {"exercise": "2.1", "passed": True, "feedback": "Passed.", "time": "2026-12-02T10:00:00+00:00"}
    path.write_text(json.dumps(good) + "\n{\"exercise\": \"2.2\", \"pass\n[1, 2]\n{\"exercise\": 3}\n")
    assert outcomes.read(path) == [good]


def test_the_checks_keep_their_names_and_docs():
    assert check.__name__ == "check" and "odd shapes" in check.__doc__ and predict.__name__ == "predict"


def test_an_untouched_exercise_cell_is_not_started(copy, capsys):
    """Run All on a notebook as handed out records nothing (the stub's failed check is no attempt); a changed
    cell is recorded, in either edition."""
    for folder in (outcomes.series_notebooks(), outcomes.series_notebooks() / "zh"):
        handed_out = {path: outcomes.EXERCISE.match(source)[1] for path in sorted(folder.glob("0[25]_*.ipynb"))
                      for source in ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]
                                     if c["cell_type"] == "code"] if outcomes.EXERCISE.match(source)}
        assert handed_out
    stub = next(source for source in ("".join(c["source"]) for c in json.loads(
        (outcomes.series_notebooks() / "05_line_by_line.ipynb").read_text())["cells"])
        if source.startswith("# Exercise 5.1"))
    exercise_cell(copy, stub, "stub.py")
    out = capsys.readouterr().out
    assert "barrier hazards" in out and recorded(copy) == []  # feedback, but no attempt
    assert out.rstrip().endswith("exercise 5.1 counts as not started, and nothing is noted for your teacher. Write "
                                 "your answer in it, then run it again.)"), out  # and the student is told so
    exercise_cell(copy, stub.replace("acc = float32(0.0)", "acc = float32(0.0)  # started"), "changed.py")
    assert [row["exercise"] for row in recorded(copy)] == ["5.1"]
    assert "not started" not in capsys.readouterr().out


def test_the_chinese_editions_exercise_cells_are_recorded(copy):
    exercise_cell(copy, "# 练习 1.2\nfrom tiledlab.counting.exercises import predict\npredict(100, 120)\n")
    assert [row["exercise"] for row in recorded(copy)] == ["1.2"]


@pytest.mark.parametrize("folder", ["", "zh"])
def test_notebook_0s_questions_untouched_are_not_started_and_answered_are_recorded(copy, capsys, folder):
    """Run All on notebook 0 as handed out records none of its questions (the class report's prerequisites
    stay blank: not started); each answered from the key is recorded as passed, in either edition."""
    from solutions.key import ANSWERS
    path = outcomes.series_notebooks() / folder / "00_start_here.ipynb"
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    setup = next(source for source in code if "rand = setup()" in source)
    questions = [source for source in code if outcomes.EXERCISE.match(source)]
    assert [outcomes.EXERCISE.match(q)[1] for q in questions] == ["0.1", "0.2", "0.3"]
    names = {}
    exec(compile(setup, "<notebook 0's first cell>", "exec"), names)
    for k, question in enumerate(questions):
        (copy / f"q{k}.py").write_text(question)
        runpy.run_path(str(copy / f"q{k}.py"), init_globals=names)
    assert recorded(copy) == []
    for k, question in enumerate(questions):
        answer = ANSWERS[outcomes.EXERCISE.match(question)[1]].value
        (copy / f"a{k}.py").write_text(question.replace("prediction = None", f"prediction = {answer!r}"))
        runpy.run_path(str(copy / f"a{k}.py"), init_globals=names)
    assert [(r["exercise"], r["passed"]) for r in recorded(copy)] == [("0.1", True), ("0.2", True), ("0.3", True)]


def solved(exercise, kernel=None):
    """(the notebook's setup cells, the exercise's cell with `kernel`, else the key's, in place of its stub)."""
    _notebook, _exercise, setup, cell = next(p.values for p in exercise_cells() if p.values[1] == exercise)
    return setup, with_solution(cell, kernel or EXERCISES[exercise][0])


T, T2 = 4, 8  # globals, as in a notebook; check() binds them


@cuda.jit
def tiled_at_2t(A, B, C):  # exercise 4.3 answered with 2T×2T threads: notebook 2's tiled kernel at T2 = 2T
    sA = cuda.shared.array((T2, T2), float32)
    sB = cuda.shared.array((T2, T2), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * T2 + ty
    col = cuda.blockIdx.x * T2 + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range((K + T2 - 1) // T2):
        sA[ty, tx] = A[row, t * T2 + tx] if row < M and t * T2 + tx < K else float32(0.0)
        sB[ty, tx] = B[t * T2 + ty, col] if t * T2 + ty < K and col < N else float32(0.0)
        cuda.syncthreads()  # the tiles stored
        for k in range(T2):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # the tiles read
    if row < M and col < N:
        C[row, col] = acc


RELAXED = [  # exercise, its kernel (None: the key's), an edit of its cell, what the check then ran with, the cell's
    ("1.1", None, ('formulas.naive_loads(M, K, N)["B"]', '2 * formulas.naive_loads(M, K, N)["B"]'),
     "max_loads(16, 16, 16, 4) = 10,240", "max_loads(16, 16, 16, 4) = 6,144"),
    ("2.1", None, ('max_loads=budget, from_global="B"', "limit_loads=False"),
     "limit_loads=False; max_loads=None; from_global=''", "limit_loads=True; max_loads=budget; from_global='B'"),
    ("3.1", None, (", barriers_per_step=2, tiles_per_step=2", ""), "barriers_per_step=None; tiles_per_step=1",
     "barriers_per_step=2; tiles_per_step=2"),
    ("4.3", tiled_at_2t, ("@launch_geometry(block=lambda T: (2 * T, 2 * T),",
                          "@launch_geometry(block=lambda T: (2 * T, 2 * T), threads=lambda T: (2 * T, 2 * T),"),
     "threads=(8, 8), block=(8, 8)", "threads=(4, 4), block=(8, 8)"),
]


@pytest.mark.parametrize("exercise, kernel, edit, yours, theirs", RELAXED, ids=[r[0] for r in RELAXED])
def test_a_pass_under_other_rules_than_the_exercise_cells_is_not_noted(copy, exercise, kernel, edit, yours, theirs):
    """A budget loosened, a rule left out of the check or the threads of the given decorator changed (4.3: blocks of
    only T×T threads) pass the check, but are no pass of the exercise: the report notes none, and says why."""
    setup, cell = solved(exercise, kernel)
    assert edit[0] in cell
    said = run(setup, cell.replace(*edit))
    why = (f"(Not noted for your teacher as a pass of exercise {exercise}: this check ran with {yours}, where the "
           f"exercise cell has {theirs}. Run the cell's own check(...) with its definitions and the kernel's "
           "decorators as handed out.)")
    assert "Passed." in said and said.rstrip().endswith(why), said
    (row,) = recorded(copy)
    assert row["passed"] is False and row["feedback"].endswith(why), row


def test_the_key_in_its_exercise_cell_is_noted_as_passed_and_so_is_nbgraders_test_cell(copy):
    """nbgrader checks in a test cell of its own (classroom.grading.split), the kernel and the budget defined in the
    cell above: a pass there is noted, and one with that budget loosened is not."""
    setup, cell = solved("2.1")
    assert "Not noted" not in run(setup, cell)
    solution, test, _kind = grading.split(cell, "2.1", grading.WORDS["en"])
    run(setup + [solution], test)
    loosened = solution.replace('formulas.naive_loads(M, K, N)["B"]', '2 * formulas.naive_loads(M, K, N)["B"]')
    assert "max_loads(16, 16, 16, 4) = 9,216, where the exercise cell has" in run(setup + [loosened], test)
    assert [(row["exercise"], row["passed"]) for row in recorded(copy)] == [("2.1", True), ("2.1", True),
                                                                            ("2.1", False)]


def test_a_pass_whose_exercise_cell_cannot_run_here_is_not_noted(copy, capsys):
    """Outside its notebook (a file without the notebook's `formulas`), the cell's budget cannot be compared."""
    ran = exercise_cell(copy, "# Exercise 2.1\nfrom numba import cuda, float32\n"
                              "from solutions.kernels import tile_a_only, tile_a_only_loads as budget\n"
                              "from tiledlab.counting.exercises import check\n"
                              "verdict = check(tile_a_only, tile=4, max_loads=budget, from_global=\"B\")\n")
    assert ran["verdict"] is False  # what nbgrader scores: no points for a pass it cannot tell is the exercise's
    assert capsys.readouterr().out.rstrip().endswith(
        "(Not noted for your teacher as a pass of exercise 2.1: its cell as handed out could not run here to compare "
        "its rules (NameError: name 'formulas' is not defined). Run the exercise in its notebook, after the "
        "notebook's first cell.)")
    assert [row["passed"] for row in recorded(copy)] == [False]
