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
