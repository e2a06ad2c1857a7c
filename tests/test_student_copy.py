"""`python -m classroom student-copy DIR`: the series without the key, with a README of its own whose every
command works in the copy (the install itself in a fresh virtual environment: the slow test)."""
import json
import os
import pathlib
import re
import subprocess
import sys
import tomllib

import nbformat
import pytest

from classroom import cli, student_copy

ROOT = pathlib.Path(__file__).resolve().parents[1]
INSTALL = "python3 -m venv .venv && .venv/bin/python -m pip install -e . && .venv/bin/python -m tiledlab lab"


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    dest = tmp_path_factory.mktemp("class") / "series"
    assert cli.main(["student-copy", str(dest)]) == 0
    return dest


def commands(readme):
    """Every command the README gives: its indented lines and its inline `python…`/`.venv…` spans."""
    text = readme.read_text()
    found = [line.strip() for line in text.splitlines() if line.startswith("    ") and line.strip()]
    return found + re.findall(r"`((?:python3?|py|\.venv)[ /\\][^`]+)`", text)


def test_no_notebook_points_students_to_the_key():
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            assert "solutions" not in cell.source, f"{path.name}: {cell.source[:200]}"


def test_the_copy_has_no_key_no_tests_and_no_pointer_to_them(copy):
    assert not (copy / "solutions").exists() and not (copy / "tests").exists()
    assert sorted(p.relative_to(copy).as_posix() for p in (copy / "docs").rglob("*") if p.is_file()) == [
        "docs/glossary.md", "docs/zh/glossary.md"]  # the glossary notebook 0 points to, no other page
    assert not (copy / "classroom").exists() and not (copy / "tools").exists()
    assert student_copy.pointers(copy) == []
    names = sorted(p.name for p in (copy / "notebooks").glob("*.ipynb"))
    assert names == sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    for name in ("LICENSE", "LICENSE-CONTENT.md", "pyproject.toml", "environment.yml", "tiledlab/__init__.py"):
        assert (copy / name).is_file(), name


def test_the_repository_itself_points_to_the_key(copy):
    """The check that guards the copy does find the key's pointers where they belong (not vacuous)."""
    found = student_copy.pointers(ROOT)
    assert "README.md" in found and any(f.startswith("tests/") for f in found)


def test_the_copys_readme_is_its_own_and_names_only_what_the_copy_has(copy):
    """Not the maintainers' README: how to open the series, run a notebook, check an exercise; no test
    command, website, class server or key; every file it names is in the copy (or made by `lab`)."""
    text = (copy / "README.md").read_text()
    assert text == (ROOT / student_copy.README).read_text()
    for heading in ("## Open the series", "## Run a notebook", "## Check an exercise"):
        assert heading in text
    for absent in ("pytest", "sphinx", "solutions", "tests/", "docs/", "classroom", "tools"):
        assert absent not in text, absent
    made_by_lab = {"my-notebooks/", "my-notebooks-backup-<date>-<time>/", ".venv"}
    for name in re.findall(r"`([\w.-]+\.(?:ipynb|md|yml|toml)|[A-Z-]+(?:\.md)?|[\w.<>-]+/)`", text):
        assert name in made_by_lab or (copy / name).exists() or (copy / "notebooks" / name).exists(), name
    assert INSTALL in commands(copy / "README.md")


def test_the_copys_readme_tells_students_each_check_is_logged(copy):
    from tiledlab.counting import outcomes
    text = " ".join((copy / "README.md").read_text().split())
    assert f"`{outcomes.FILE}` beside the notebook" in text and "Nothing is sent anywhere" in text


def test_every_command_of_the_readme_works_in_the_copy(copy, tmp_path):
    """Each `tiledlab` command the README gives, run by the copy's own package (lab as a dry run: it
    would start JupyterLab), each extra it installs is the copy's, and an exercise's check gives feedback."""
    given = commands(copy / "README.md")
    lab = sorted({re.sub(r"^.*?-m tiledlab ", "", c) for c in given if "-m tiledlab " in c})
    assert lab == ["lab", "lab --fresh", "lab --lang zh"], lab
    extras = set(tomllib.loads((copy / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    for command in given:
        for extra in re.findall(r"'\.\[(\w+)\]'", command):
            assert extra in extras, command
    script = ("import sys, tiledlab, tiledlab.cli as cli\n"
              "from tiledlab.counting.exercises import check\n"
              "for argv in sys.argv[1:]:\n"
              "    assert cli.main([*argv.split(), '--dry-run']) == 0, argv\n"
              "check(tiledlab.naive, tile=4)\n"
              "print(tiledlab.__file__)\n")
    env = {"PATH": os.environ["PATH"], "TILEDLAB_BACKEND": "simulator", "PYTHONPATH": str(copy),
           "HOME": str(tmp_path), "MPLCONFIGDIR": str(tmp_path / "mpl")}
    done = subprocess.run([sys.executable, "-c", script, *lab], cwd=copy, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert pathlib.Path(done.stdout.strip().splitlines()[-1]).resolve().is_relative_to(copy.resolve())
    assert f"would copy 8 notebooks into {copy / 'my-notebooks'}" in done.stdout
    assert "naive" in done.stdout  # the check's feedback on the kernel it was given
    assert not (copy / "my-notebooks").exists()


@pytest.mark.slow
def test_the_copys_install_command_in_a_fresh_virtual_environment(copy):
    """The README's one command, as a student types it in the copy (JupyterLab's start replaced by a dry
    run): a fresh .venv, the copy installed into it, the lab ready."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    install = INSTALL.removesuffix(" && .venv/bin/python -m tiledlab lab")
    done = subprocess.run(f"{install} && .venv/bin/python -m tiledlab lab --dry-run", shell=True, cwd=copy,
                          env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "would copy 8 notebooks" in done.stdout


def test_a_folder_in_use_is_refused(tmp_path, capsys):
    (tmp_path / "work.txt").write_text("a student's file")
    assert cli.main(["student-copy", str(tmp_path)]) == 2 and "not an empty folder" in capsys.readouterr().err
    assert json.dumps(sorted(p.name for p in tmp_path.iterdir())) == '["work.txt"]'
