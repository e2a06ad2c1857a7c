"""`python -m classroom nbgrader DIR`, graded by nbgrader itself: the course it writes goes through
nbgrader's own commands (generate_assignment, autograde, generate_feedback, export), as a teacher runs
them. Three students submit one notebook: the worked solutions (the source version: full marks), the
release version untouched (zero), and a half-right one (the prediction right, a kernel that is right but
loads more than the exercise allows: the prediction's point only), whose feedback page shows check()'s
own words. Once in English (notebook 1), once in Chinese (notebook 2, the checker's feedback in Chinese).
Each autograde runs the notebook on the simulator, three times: about a minute a language on two busy cores,
so both runs are with the slow tests (`pytest -m slow`, which CI runs after the suite), as is the whole
series (every notebook's key full marks, every stub zero) at the end: the suite keeps its seven minutes.
docs/teaching.md's own commands run as written, from a clone whose .venv is not activated, and on the class
server two students fetch, submit and are graded each under their own name."""
import csv
import json
import logging
import os
import pathlib
import re
import subprocess
import sys
from types import SimpleNamespace

import nbformat
import pytest

from classroom import cli, grading, hub, series

pytest.importorskip("nbgrader", reason="needs nbgrader: pip install -e '.[nbgrader]'")

ENV = dict(os.environ, TILEDLAB_BACKEND="simulator")  # no bin/ put on PATH: the course's configuration does it
ENV.pop("TILEDLAB_LANG", None)
NOT_ACTIVATED = "/usr/bin:/bin"  # PATH without the environment's bin/, as in a shell that did not activate it
NAIVE_PAIR = """    if row < C.shape[0] and col < C.shape[1]:
        acc0 = float32(0.0)
        acc1 = float32(0.0)
        for k in range(A.shape[1]):
            acc0 += A[row, k] * B[k, col]  # A[row, k] read twice: right, but over the budget
            if col + 1 < C.shape[1]:
                acc1 += A[row, k] * B[k, col + 1]
        C[row, col] = acc0
        if col + 1 < C.shape[1]:
            C[row, col + 1] = acc1"""
NAIVE = """    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]  # B from global memory, and A too: right, but over the budget
        C[row, col] = acc"""
# language -> (notebook, its kernel exercise's half-right body, its prediction's right answer, check()'s words
# for a kernel over its budget, the feedback of an untouched kernel)
CASES = {"en": ("01_naive_reads", NAIVE_PAIR, (4, 3), "Right answer, but 8,192 loads is more than the 6,144",
                "NaN: never written, or computed from a value that was"),
         "zh": ("02_redundant_reads", NAIVE, (8, 2), "结果正确，但", "从未写入")}


def nbgrader(course, *args):
    force = ["--force"] if args[0] != "export" else []  # redo, never ask
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, *force], cwd=course, env=ENV,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def half_right(release, lang, body, answer):
    """The release notebook with its kernel exercise right but over budget, its prediction right."""
    nb = nbformat.read(release, as_version=4)
    stub = grading.WORDS[lang]["stub"]
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            kernel = "def " in cell.source
            cell.source = cell.source.replace(f"    {stub}" if kernel else stub,
                                              body if kernel else f"prediction = {answer!r}")
    return nb


@pytest.fixture(scope="module", params=[pytest.param(lang, marks=pytest.mark.slow) for lang in ("en", "zh")])  # CI's slow run
def graded(request, tmp_path_factory):
    """The course for one notebook, three submissions autograded: (lang, course folder, scores by student)."""
    lang = request.param
    notebook, body, answer, *_words = CASES[lang]
    course = tmp_path_factory.mktemp(f"course-{lang}")
    assert cli.main(["nbgrader", str(course), "--lang", lang, "--notebooks", notebook]) == 0
    nbgrader(course, "generate_assignment", notebook)
    release = course / "release" / notebook / f"{notebook}.ipynb"
    submissions = {"key": nbformat.read(course / "source" / notebook / f"{notebook}.ipynb", as_version=4),
                   "stubs": nbformat.read(release, as_version=4), "half": half_right(release, lang, body, answer)}
    for student, nb in submissions.items():
        folder = course / "submitted" / student / notebook
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{notebook}.ipynb")
        for extra in (course / "release" / notebook).iterdir():  # the LANGUAGE file the release holds
            if extra.suffix != ".ipynb":
                (folder / extra.name).write_bytes(extra.read_bytes())
    nbgrader(course, "autograde", notebook)
    nbgrader(course, "generate_feedback", notebook)
    nbgrader(course, "export")
    with open(course / "grades.csv") as f:
        scores = {row["student_id"]: (float(row["score"]), float(row["max_score"])) for row in csv.DictReader(f)}
    return lang, course, scores


def test_the_key_gets_full_marks_the_stubs_zero_and_half_right_partial(graded):
    lang, course, scores = graded
    notebook = CASES[lang][0]
    most = sum(points for stem, _n, _kind, points in grading.rubric(lang) if stem == notebook)
    assert scores == {"key": (most, most), "stubs": (0, most), "half": (grading.POINTS["prediction"], most)}, scores


def test_the_feedback_shows_what_check_said(graded):
    lang, course, scores = graded
    notebook, *_cases, over_budget, untouched = CASES[lang]
    page = (course / "feedback" / "{}" / notebook / f"{notebook}.html").as_posix()
    half, stubs = (pathlib.Path(page.format(who)).read_text() for who in ("half", "stubs"))
    assert over_budget in half, "check()'s feedback is missing from the half-right student's feedback page"
    assert untouched in stubs


def test_the_release_keeps_the_stub_and_hides_the_key(graded):
    """What students get: the notebook's own stub lines and nbgrader's stub, no line of the key; the test
    cells read-only."""
    lang, course, scores = graded
    notebook = CASES[lang][0]
    release = nbformat.read(course / "release" / notebook / f"{notebook}.ipynb", as_version=4)
    solved = nbformat.read(course / "source" / notebook / f"{notebook}.ipynb", as_version=4)
    text = "\n".join(c.source for c in release.cells)
    assert "BEGIN SOLUTION" not in text and grading.WORDS[lang]["stub"] in text
    assert "assert" not in text and "HIDDEN TESTS" not in text  # no traceback a student meets: the score is hidden
    assert "### BEGIN SOLUTION" in "\n".join(c.source for c in solved.cells)
    tests = [c for c in release.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert tests and all(c.metadata["nbgrader"]["locked"] for c in tests)
    assert (course / "release" / notebook / "LANGUAGE").is_file() == (lang == "zh")


def test_every_exercise_gets_a_solution_region_and_a_graded_cell(tmp_path):
    """Every exercise of both editions: its key in a region (a kernel after the lines its stub gives, or the
    whole body where the stub is another kernel), its check in a test cell worth the rubric's points."""
    for lang in ("en", "zh"):
        written = grading.course(tmp_path / lang, lang)
        found = {}
        for stem in written:
            nb = nbformat.read(tmp_path / lang / "source" / stem / f"{stem}.ipynb", as_version=4)
            for cell in nb.cells:
                meta = cell.metadata.get("nbgrader")
                if meta and meta["grade"]:
                    found[grading.EXERCISE.match(cell.source)[1]] = meta["points"]
                elif meta:
                    assert cell.source.count("### BEGIN SOLUTION") == 1, cell.source
        assert found == {n: points for _stem, n, _kind, points in grading.rubric(lang)}
        assert json.loads((tmp_path / lang / "source" / "01_naive_reads" / "01_naive_reads.ipynb").read_text())


def test_the_stub_lines_stay_where_the_solution_begins_with_them():
    from solutions.kernels import EXERCISES
    given = "    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y  # the stub's own comment\n"
    cell = f"@cuda.jit\ndef k(A, B, C):\n{given}    # your code\n\n\ncheck(k)"
    solved = grading.kernel_solution(cell, EXERCISES["6.1"][0])  # blocked_loop begins with the same row line
    assert solved.startswith(f"@cuda.jit\ndef k(A, B, C):\n{given}    # your code\n    ### BEGIN SOLUTION\n    col = ")
    assert solved.count("row = cuda.blockIdx.y") == 1 and solved.endswith("### END SOLUTION\n\n\ncheck(k)")
    other = grading.kernel_solution(cell.replace("row =", "x ="), EXERCISES["6.1"][0])
    assert "x = cuda" not in other and other.count("row = cuda.blockIdx.y") == 1  # another kernel: replaced whole


def test_a_cell_whose_last_statement_checks_nothing_is_refused():
    with pytest.raises(ValueError, match="neither check"):
        grading.split("# Exercise 9.9\nx = 1\nprint(x)", "9.9", grading.WORDS["en"])


def test_the_course_is_the_teachers_alone(tmp_path):
    """The course holds the key (source/), and nbgrader puts the gradebook and every submission beside it: closed
    to other accounts, as the students are with system users, where the clone itself is theirs to read."""
    assert cli.main(["nbgrader", str(tmp_path / "course"), "--notebooks", "01_naive_reads"]) == 0
    assert (tmp_path / "course").stat().st_mode & 0o777 == 0o700


def test_the_command_refuses_a_folder_in_use(tmp_path, capsys):
    (tmp_path / "x").write_text("")
    assert cli.main(["nbgrader", str(tmp_path)]) != 0
    assert "not an empty folder" in capsys.readouterr().err


@pytest.mark.slow
def test_the_whole_series_key_full_marks_stubs_zero(tmp_path):
    """Every notebook of the English edition: the source version gets full marks, the release zero."""
    written = grading.course(tmp_path, "en")
    for notebook in written:
        nbgrader(tmp_path, "generate_assignment", notebook)
        for student, version in (("key", "source"), ("stubs", "release")):
            folder = tmp_path / "submitted" / student / notebook
            folder.mkdir(parents=True)
            (folder / f"{notebook}.ipynb").write_bytes((tmp_path / version / notebook / f"{notebook}.ipynb").read_bytes())
        nbgrader(tmp_path, "autograde", notebook)
    nbgrader(tmp_path, "export")
    with open(tmp_path / "grades.csv") as f:
        rows = [(r["assignment"], r["student_id"], float(r["score"]), float(r["max_score"])) for r in csv.DictReader(f)]
    assert {(a, s): score for a, s, score, _most in rows} == {
        (a, s): (most if s == "key" else 0) for a, s, _score, most in rows}, rows
    assert len(rows) == 2 * len(written)


def guide_blocks():
    """The command blocks of docs/teaching.md's "Grading with nbgrader", in order, each its lines (no comments)."""
    text = (series.ROOT / "docs" / "teaching.md").read_text().split("## Grading with nbgrader", 1)[1]
    return [[line.split("  #")[0].strip() for line in block.splitlines()]
            for block in re.findall(r"\n\n((?:    \S.*\n)+)", text.split("\n## ", 1)[0])]


@pytest.fixture
def clone(tmp_path):
    """A clone's root as the guide has it: its .venv this environment, not activated; its class folder."""
    root = tmp_path / "clone"
    root.mkdir()
    (root / ".venv").symlink_to(sys.prefix)
    env = dict(ENV, PATH=NOT_ACTIVATED, PYTHONPATH=str(series.ROOT), HOME=str(tmp_path / "home"),
               **{hub.CLASS_ENV: str(root / "my-class")})
    env.pop("VIRTUAL_ENV", None)
    return root, env


def run_block(block, cwd, env):
    done = subprocess.run(["bash", "-ec", "\n".join(block)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, (block, done.stdout[-3000:] + done.stderr[-3000:])
    return done


def test_the_guides_commands_work_as_written_and_the_release_holds_no_assert(clone):
    """The guide's first block, as written, without an activated environment (nbgrader finds `alembic` on the
    PATH the course's configuration gives it). What students get has no assert: a graded cell shows the
    checker's feedback only, and its score is a hidden test, back in the source version."""
    root, env = clone
    first = guide_blocks()[0]
    assert first[0].startswith(".venv/bin/python -m classroom nbgrader course/"), first
    run_block(first, root, env)
    notebook = first[-1].split()[-1]
    release = nbformat.read(root / "course" / "release" / notebook / f"{notebook}.ipynb", as_version=4)
    text = "\n".join(c.source for c in release.cells if c.cell_type == "code")
    assert "assert" not in text and "HIDDEN TESTS" not in text and "passed = check(" in text
    source = nbformat.read(root / "course" / "source" / notebook / f"{notebook}.ipynb", as_version=4)
    hidden = [c.source for c in source.cells if "### BEGIN HIDDEN TESTS" in c.source]
    assert hidden and all(c.metadata.nbgrader["grade"] for c in source.cells if "HIDDEN TESTS" in c.source)


def student_server_env(c, name, folder):
    """The environment a student's server gets from the hub's configuration `c` (SimpleLocalProcessSpawner):
    env_keep, the configuration's environment, JupyterHub's own user variables; their home made as at a login."""
    spawner = SimpleNamespace(home_dir=str(folder / name), user=SimpleNamespace(name=name),
                              log=logging.getLogger("test"))
    hub.pre_spawn_hook(spawner)
    env = {key: os.environ[key] for key in c.Spawner.env_keep if key in os.environ}
    env.update({key: value(spawner) if callable(value) else value for key, value in c.Spawner.environment.items()})
    return {**env, "HOME": spawner.home_dir, "USER": name, "SHELL": "/bin/bash", "JUPYTERHUB_USER": name}


@pytest.mark.slow
def test_two_students_on_the_class_server_each_get_their_own_grade(clone, monkeypatch):
    """The guide's blocks in order on a class server's folder: the teacher releases; ada and grace (both the
    hub's one system account) fetch and submit from a terminal of their own server, ada the key, grace the
    stubs; the teacher collects, autogrades, writes and releases feedback, exports: two rows, each their own."""
    from traitlets.config.loader import PyFileConfigLoader
    root, env = clone
    first, release, student, grade = guide_blocks()
    monkeypatch.setenv(hub.CLASS_ENV, env[hub.CLASS_ENV])
    monkeypatch.setenv("MPLCONFIGDIR", os.environ.get("MPLCONFIGDIR", ""))  # the configuration sets it
    c = PyFileConfigLoader(str(hub.CONFIG)).load_config()  # as the hub starts: the class folder, its exchange
    run_block(first, root, env)
    run_block(release, root / "course", env)
    notebook = release[0].split()[-1]
    for name in ("ada", "grace"):
        home = pathlib.Path(env[hub.CLASS_ENV]) / name
        mine = student_server_env(c, name, home.parent)
        fetch, submit = student
        run_block([fetch], home / hub.NOTEBOOK_FOLDER, mine)
        fetched = home / hub.NOTEBOOK_FOLDER / notebook / f"{notebook}.ipynb"
        if name == "ada":  # the worked solutions
            fetched.write_bytes((root / "course" / "source" / notebook / f"{notebook}.ipynb").read_bytes())
        run_block([submit], home / hub.NOTEBOOK_FOLDER, mine)
    collected = run_block(grade, root / "course", env)
    assert "cheating" not in collected.stdout + collected.stderr
    with open(root / "course" / "grades.csv") as f:
        scores = {row["student_id"]: (float(row["score"]), float(row["max_score"])) for row in csv.DictReader(f)}
    most = sum(points for stem, _n, _kind, points in grading.rubric() if stem == notebook)
    assert scores == {"ada": (most, most), "grace": (0, most)}, scores
    for name in ("ada", "grace"):
        assert (root / "course" / "feedback" / name / notebook / f"{notebook}.html").is_file()
