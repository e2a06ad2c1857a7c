"""The README leads with what students and teachers run, and what it prints runs: its Python block as a
file (and, as it warns, not through `python -c`), and every `python -m tiledlab` and `python -m classroom`
command it lists."""
import os
import pathlib
import re
import subprocess
import sys

from markdown_it import MarkdownIt

from classroom import cli as classroom_cli
from tiledlab import cli

ROOT = pathlib.Path(__file__).resolve().parents[1]

README = (ROOT / "README.md").read_text()
TOKENS = MarkdownIt("commonmark").parse(README)
HEADINGS = [TOKENS[i + 1].content for i, t in enumerate(TOKENS) if t.type == "heading_open" and t.tag == "h2"]
SIMULATOR = dict(os.environ, TILEDLAB_BACKEND="simulator")


def python_block():
    (block,) = [t.content for t in TOKENS if t.type == "fence" and t.info == "python"]
    return block


def test_it_leads_with_the_set_up_then_students_then_teachers():
    assert HEADINGS[:3] == ["Set-up: two commands", "For students", "For teachers"]
    assert HEADINGS.index("For maintainers") > HEADINGS.index("In Python")


def test_the_python_block_runs_as_printed_from_a_file(tmp_path):
    path = tmp_path / "my_kernels.py"
    path.write_text(python_block())
    done = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=SIMULATOR, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == ["True", "3600 global loads; the naive kernel makes 26880", "True"]  # 24·20·4 + 20·28·3
    assert lines[3].endswith("T=8, TM=3 breaks it") and lines[-1] == "Passed."


def test_typed_at_a_prompt_the_kernel_is_refused_before_python_3_13_as_the_readme_says():
    """Python 3.13 keeps the source of `python -c` and of the prompt in linecache, where inspect finds it."""
    done = subprocess.run([sys.executable, "-c", python_block()], cwd=ROOT.parent, env=SIMULATOR,
                          capture_output=True, text=True, timeout=300)
    if sys.version_info >= (3, 13):
        assert done.returncode == 0 and done.stdout.splitlines()[-1] == "Passed.", done.stderr
    else:
        assert done.returncode != 0 and "its source code cannot be read" in done.stderr
    prose = " ".join(README.split())
    assert "on Python 3.11 and 3.12, one typed at the Python prompt" in prose
    assert "its source code cannot be read" in prose and "Python 3.13 keeps the source" in prose


def test_every_command_it_lists_exists():
    listed = set(re.findall(r"python -m tiledlab ([a-z-]+)", README))
    assert "lab" in listed
    assert listed <= set(cli.HANDLERS), listed - set(cli.HANDLERS)
    teachers = set(re.findall(r"python -m classroom ([a-z-]+)", README))
    assert teachers == set(classroom_cli.HANDLERS) == {"slides", "student-copy", "hub", "class-report", "nbgrader"}
