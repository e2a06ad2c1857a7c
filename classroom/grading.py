"""`python -m classroom nbgrader DIR`: an nbgrader course from the series, graded by check() and predict().

One assignment per notebook that has exercises (``source/<stem>/<stem>.ipynb``), in English or, with
``--lang zh``, from the Chinese edition. Each exercise cell becomes two cells:
  - a solution cell: the notebook's cell without its last statement, the key filled in between
    ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (a kernel's body from solutions/kernels.py after the
    lines the stub already gives; a prediction's value from solutions/key.py after ``prediction = None``),
    which ``nbgrader generate_assignment`` replaces with CODE_STUB;
  - a read-only autograded test cell: that last statement, the cell's own check() or predict(), worth
    POINTS[kind]. Its output, the checker's feedback, is what a student sees when they run it and what
    nbgrader's feedback shows them. Its score is a hidden test (``### BEGIN HIDDEN TESTS``, which
    generate_assignment takes out of the students' version and autograde puts back): the points when the
    verdict passed, else 0, the number nbgrader reads as the cell's score. No assert: a student meets no
    traceback, and Run All runs every exercise.
The course's nbgrader_config.py names the course (COURSE_ID) and the class server's exchange, and puts its
interpreter's bin/ on PATH, where nbgrader looks for `alembic`: nbgrader's commands work from a virtual
environment that is not activated.
"""
import ast
import difflib
import inspect
import pathlib
import re
import shutil

from .series import NOTEBOOKS, ROOT, lessons, read_notebook

#: Points per exercise, in proportion to the guide's allowance for a first attempt (docs/teaching.md:
#: 15 minutes for a kernel, 5 for a prediction).
POINTS = {"kernel": 3, "prediction": 1}
EXERCISE = re.compile(r"# (?:Exercise|练习) (\d+\.\d+)")  # an exercise cell's first line, in either edition
VERDICT = "passed"  # the test cell's name for what check() or predict() returned
WORDS = {  # what the course adds to a notebook, in each edition's words
    "en": {"stub": "pass  # YOUR CODE HERE", "graded": "# Exercise {n}, graded: {points}, read-only",
           "score": "the points when it passed: nbgrader scores a test cell by the number it shows",
           "points": lambda k: f"{k} point" + ("s" if k != 1 else "")},
    "zh": {"stub": "pass  # 在这里写你的代码", "graded": "# 练习 {n} 的评分：{points}，只读",
           "score": "通过时的分数：nbgrader 按测试单元格显示的数字计分", "points": lambda k: f"{k} 分"},
}
COURSE_ID = "tiledlab"  # nbgrader's name for the course, the teacher's and the students' (classroom.hub)
CONFIG = '''# nbgrader's configuration for this course (python -m classroom nbgrader): run nbgrader's commands here.
import os
import sys
c = get_config()  # noqa: F821 (nbgrader defines it)
c.CourseDirectory.course_id = {course!r}
c.Exchange.root = {exchange!r}  # the class server's: its students fetch and submit there
# A submission is a file of the account that submitted it: on the one-account class server, the hub's
# account for every student, which nbgrader's owner check would call a "cheating attempt?" each time.
# With system users (LocalProcessSpawner) set it to True: a submission under another's name is then named.
c.ExchangeCollect.check_owner = False
# nbgrader runs `alembic` from PATH: this environment's, activated or not.
os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
# A stub that runs: an empty kernel body must still be valid Python, so an untouched exercise gets the
# checker's feedback (its result never written), not a SyntaxError.
c.ClearSolutions.code_stub = {{"python": {stub!r}}}
'''


def key():
    """The key, from the clone's solutions/: exercise -> worked kernel, exercise -> answer."""
    from solutions.kernels import EXERCISES
    from solutions.key import ANSWERS
    return {n: kernel for n, (kernel, _kwargs) in EXERCISES.items()}, {n: a.value for n, a in ANSWERS.items()}


def _code(line):
    return line.split("  #")[0].rstrip()


def _body(lines):
    """The statements of a function's body, `lines` after its def line: up to the first unindented line."""
    end = next((k for k, line in enumerate(lines) if line.strip() and not line.startswith(" ")), len(lines))
    while end and not lines[end - 1].strip():
        end -= 1
    return lines[:end]


def _region(lines, indent=""):
    return [f"{indent}### BEGIN SOLUTION", *lines, f"{indent}### END SOLUTION"]


def kernel_solution(cell, solution):
    """The exercise cell with its stub kernel's body completed by `solution`'s: the stub's lines kept
    where the solution starts with them, the rest of the solution in a solution region."""
    lines = cell.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("def ")) + 1
    stub = _body(lines[start:])
    source = inspect.getsource(getattr(getattr(solution, "code", None), "function", None) or solution.py_func)
    rest = _body(source.splitlines()[next(k for k, line in enumerate(source.splitlines())
                                         if line.startswith("def ")) + 1:])
    given = [_code(line) for line in stub if _code(line).strip()]
    if [_code(line) for line in rest[:len(given)]] == given:  # the stub's statements begin the solution
        body = stub + _region(rest[len(given):], "    ")
    else:  # the stub is another kernel to change (5.1): the whole body is the solution's
        body = _region(rest, "    ")
    return "\n".join(lines[:start] + body + lines[start + len(stub):])


def prediction_solution(cell, answer):
    """The exercise cell with the key's answer after its `prediction = None` line, in a solution region."""
    lines = cell.splitlines()
    at = next(k for k, line in enumerate(lines) if line.startswith("prediction = None"))
    return "\n".join(lines[:at + 1] + _region([f"prediction = {answer!r}"]) + lines[at + 1:])


def split(cell, exercise, words):
    """(the cell without its last statement, a test cell that runs that statement and asserts its verdict):
    each check() or predict() it calls (a statement of its own, possibly inside an if) sets VERDICT."""
    tree = ast.parse(cell)
    last = tree.body[-1]
    lines = cell.splitlines()
    graded = lines[last.lineno - 1:last.end_lineno]
    calls = [n for n in ast.walk(last) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
             and getattr(n.value.func, "id", None) in ("check", "predict")]
    if not calls:
        raise ValueError(f"exercise {exercise}: its cell's last statement calls neither check() nor predict()")
    for n in sorted(calls, key=lambda n: (n.lineno, n.col_offset), reverse=True):
        row = n.lineno - last.lineno
        graded[row] = f"{graded[row][:n.col_offset]}{VERDICT} = {graded[row][n.col_offset:]}"
    kind = "prediction" if "prediction = None" in cell else "kernel"
    nested = calls[0] is not last  # inside an if: the verdict stays False where no check runs
    test = [words["graded"].format(n=exercise, points=words["points"](POINTS[kind])),
            "from tiledlab.counting.exercises import check, predict  # the grader's own, whatever the cell defined",
            *([f"{VERDICT} = False"] if nested else []), *graded,
            "### BEGIN HIDDEN TESTS", f"{POINTS[kind]} if {VERDICT} else 0  # {words['score']}", "### END HIDDEN TESTS"]
    return "\n".join(lines[:last.lineno - 1]).rstrip() + "\n", "\n".join(test), kind


def _meta(exercise, points=None):
    """nbgrader's metadata: exercise's solution cell, or (with `points`) its read-only test cell."""
    grade_id = "exercise_" + exercise.replace(".", "_") + ("_graded" if points is not None else "")
    meta = {"grade": points is not None, "solution": points is None, "locked": points is not None,
            "grade_id": grade_id, "schema_version": 3}  # nbgrader's ids: letters, digits, _ and -
    return meta if points is None else {**meta, "points": points}


def source_notebook(path, lang="en", solved=None):
    """The nbgrader source version of one notebook (None when it has no exercise): each exercise's
    solution cell and test cell (see the module's docstring)."""
    import nbformat
    kernels, answers = solved or key()
    nb, cells = read_notebook(path), []
    for cell in nb.cells:
        found = EXERCISE.match(cell.source) if cell.cell_type == "code" else None
        if not found:
            cells.append(cell)
            continue
        n = found[1]
        if n in kernels:
            solved_cell = kernel_solution(cell.source, kernels[n])
        else:
            solved_cell = prediction_solution(cell.source, answers[n])
        work, test, kind = split(solved_cell, n, WORDS[lang])
        cells.append(nbformat.v4.new_code_cell(work, id=cell.id, metadata={"nbgrader": _meta(n)}))
        cells.append(nbformat.v4.new_code_cell(test, id=f"{cell.id}-graded",
                                               metadata={"nbgrader": _meta(n, POINTS[kind])}))
    if len(cells) == len(nb.cells):
        return None
    for cell in cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.cells = cells
    return nb


def rubric(lang="en"):
    """(notebook stem, exercise, kind, points) of every graded exercise, in the series' order."""
    folder = NOTEBOOKS / "zh" if lang == "zh" else NOTEBOOKS
    kernels, _answers = key()
    rows = []
    for path in lessons(folder):
        for cell in read_notebook(path).cells:
            found = EXERCISE.match(cell.source) if cell.cell_type == "code" else None
            if found:
                kind = "kernel" if found[1] in kernels else "prediction"
                rows.append((path.stem, found[1], kind, POINTS[kind]))
    return rows


def course(dest, lang="en", only=None, exchange="/srv/nbgrader/exchange"):
    """Write the course into `dest` (new, or an empty folder): nbgrader_config.py (its exchange:
    `exchange`, nbgrader's default unless given) and source/<stem>/ for each notebook with exercises
    (`only`: those stems alone); return the assignments' names."""
    import nbformat
    dest = pathlib.Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ValueError(f"{dest} already exists and is not an empty folder: give a new folder's name")
    if dest.resolve().is_relative_to(ROOT.resolve() / "notebooks"):
        raise ValueError(f"{dest} is inside notebooks/: give a folder outside the series")
    folder = NOTEBOOKS / "zh" if lang == "zh" else NOTEBOOKS
    stems = [path.stem for path in lessons(folder)]
    for name in (n for n in only or [] if n not in stems):  # refused before anything is written
        close = difflib.get_close_matches(name, stems, 1, 0.5)
        raise ValueError(f"--notebooks {name}: no such notebook" + (f"; did you mean {close[0]}?" if close else "")
                         + f" (the series: {' '.join(stems)})")
    dest.mkdir(parents=True, exist_ok=True)
    # The teacher's alone: source/ holds the key, and nbgrader adds the gradebook and every student's submission
    # and feedback. With system users the clone is the students' to read (docs/classroom.md), and so was DIR.
    dest.chmod(0o700)
    solved, written = key(), []
    for path in lessons(folder):
        if only is not None and path.stem not in only:
            continue
        nb = source_notebook(path, lang, solved)
        if nb is None:
            continue
        assignment = dest / "source" / path.stem
        assignment.mkdir(parents=True)
        nbformat.write(nb, assignment / path.name)
        if (folder / "LANGUAGE").is_file():  # tiledlab.i18n: the checker's feedback in the edition's language
            shutil.copy2(folder / "LANGUAGE", assignment / "LANGUAGE")
        written.append(path.stem)
    if not written:
        raise ValueError(f"no notebook with exercises among {sorted(only or [])}")
    config = CONFIG.format(course=COURSE_ID, exchange=str(exchange), stub=WORDS[lang]["stub"])
    (dest / "nbgrader_config.py").write_text(config)
    return written
