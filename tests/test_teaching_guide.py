"""The teacher's guide stays true to what it shows: the publishing steps name the tag the install cell
installs, the minutes form has a row for every notebook, and the class report's command and its pandas
lines run as printed."""
import json
import pathlib
import re
import tomllib

import nbformat
from markdown_it import MarkdownIt

from classroom import cli
from tiledlab.counting import outcomes

ROOT = pathlib.Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "docs" / "teaching.md").read_text()
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def section(heading):
    """The text of the guide's `## heading` section."""
    return GUIDE.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]


def test_the_publishing_steps_tag_what_the_install_cell_installs():
    steps = " ".join(section("Before the class").split())
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert "python -m tools links --repo owner/name" in steps and f"git tag v{version}" in steps
    assert "git push origin main --tags" in steps
    install = next(c.source for c in nbformat.read(NOTEBOOKS[1], as_version=4).cells if "COLAB_RELEASE_TAG" in c.source)
    assert f"@v{version}" in install, "the install cell installs the tag the guide says to push"


def test_the_minutes_form_has_a_row_per_notebook_and_says_the_minutes_are_modelled():
    form = section("Student minutes, modelled").split("**Record real minutes.**", 1)[1]
    rows = re.findall(r"^\| `(\w+)` \|(?: \|)+$", form, re.M)
    assert rows == [p.stem for p in NOTEBOOKS]
    assert "modelled from a scripted walkthrough, not observed" in " ".join(GUIDE.split())
    assert "class-report" in form and "minutes 01" in form


def test_the_class_report_command_and_its_pandas_lines_run_as_printed(tmp_path, monkeypatch, capsys):
    shown = section("Who passed what: the class report")
    command, code = [t.content for t in MarkdownIt("commonmark").parse(shown) if t.type == "code_block"]
    home = tmp_path / "my-class" / "ada" / "notebooks"
    home.mkdir(parents=True)
    (home / outcomes.FILE).write_text(json.dumps(
        {"exercise": "3.3", "passed": True, "feedback": "Passed.", "time": "2026-12-02T10:30:00+00:00",
         "started": "2026-12-02T10:00:00+00:00"}) + "\n")
    monkeypatch.chdir(tmp_path)
    argv = command.split()
    assert argv[:3] == ["python", "-m", "classroom"] and cli.main(argv[3:]) == 0
    assert "ada" in capsys.readouterr().out
    namespace = {}
    exec(code, namespace)  # the guide's pandas lines, on the CSV the command wrote
    assert namespace["report"].loc["ada", "3.3"] == "passed" and namespace["report"].loc["ada", "minutes 03"] == 30
    assert "tiledlab-outcomes.jsonl" in shown and "Nothing is sent" in shown


def rubric_rows(page):
    """(notebook, exercises, points) of each row of the guide's rubric table on `page`."""
    return [(stem, exercises.split(", "), int(points)) for stem, exercises, points in
            re.findall(r"^\| `(\w+)` \| [^|]+ \| ([^|]+?) \| (\d+) \|$", page, re.M)]


def test_the_rubric_is_what_the_nbgrader_course_grades_in_both_languages():
    """Every exercise of the series, with the kind and points `python -m classroom nbgrader` gives it, in
    the English guide and in its Chinese twin (same table, its words translated)."""
    from classroom import grading
    want = {}
    for stem, n, kind, points in grading.rubric():
        exercises, total = want.get(stem, ([], 0))
        want[stem] = (exercises + [f"{n} {kind}"], total + points)
    assert rubric_rows(section("Learning outcomes and the rubric")) == [(s, e, p) for s, (e, p) in want.items()]
    zh = (ROOT / "docs" / "zh" / "teaching.md").read_text()
    words = {"kernel": "核函数", "prediction": "预测"}
    assert rubric_rows(zh) == [(s, [" ".join((x.split()[0], words[x.split()[1]])) for x in e], p)
                               for s, (e, p) in want.items()]
    assert f"worth {grading.POINTS['kernel']} points and a prediction {grading.POINTS['prediction']}" in GUIDE


def test_the_nbgrader_commands_are_the_ones_the_course_answers_to(tmp_path):
    shown = section("Grading with nbgrader")
    command = next(t.content for t in MarkdownIt("commonmark").parse(shown) if t.type == "code_block")
    first = command.splitlines()[0].split("#")[0].split()
    assert first[:4] == [".venv/bin/python", "-m", "classroom", "nbgrader"]  # the clone's venv, activated or not
    assert cli.main([*first[3:-1], str(tmp_path / "course"), "--notebooks", "01_naive_reads"]) == 0
    assert "cd course && ../.venv/bin/nbgrader generate_assignment 01_naive_reads" in command
    assert (tmp_path / "course" / "source" / "01_naive_reads" / "01_naive_reads.ipynb").is_file()
