"""`python -m tiledlab student-copy DIR`: the series without the key, and the notebooks stop pointing to it."""
import json
import pathlib
import subprocess
import sys

import nbformat
import pytest

from tiledlab.notebook import student_copy

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    dest = tmp_path_factory.mktemp("class") / "series"
    done = subprocess.run([sys.executable, "-m", "tiledlab", "student-copy", str(dest)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return dest


def test_no_notebook_points_students_to_the_key():
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            assert "solutions" not in cell.source, f"{path.name}: {cell.source[:200]}"


def test_the_copy_has_no_key_no_tests_and_no_pointer_to_them(copy):
    assert not (copy / "solutions").exists() and not (copy / "tests").exists()
    assert not (copy / "docs" / "teaching.md").exists()
    assert student_copy.pointers(copy) == []
    assert "For teachers" not in (copy / "README.md").read_text()
    names = sorted(p.name for p in (copy / "notebooks").glob("*.ipynb"))
    assert names == sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    for name in ("LICENSE", "LICENSE-CONTENT.md", "pyproject.toml", "environment.yml", "tiledlab/__init__.py"):
        assert (copy / name).is_file(), name


def test_the_repository_itself_points_to_the_key(copy):
    """The check that guards the copy does find the key's pointers where they belong (not vacuous)."""
    found = student_copy.pointers(ROOT)
    assert "README.md" in found and any(f.startswith("tests/") for f in found)


def test_the_copy_imports_and_runs_a_notebook_cell(copy, tmp_path):
    """The package of the copy (not this checkout's) imports, finds its notebooks and runs the exercise
    checks, which would break if anything in it needed solutions/."""
    code = ("import tiledlab, tiledlab.counting.exercises as ex, tiledlab.notebook.lab as lab; "
            "print(tiledlab.__file__); print(len(lab.lessons()))")
    done = subprocess.run([sys.executable, "-c", code], cwd=copy, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "TILEDLAB_BACKEND": "simulator", "PYTHONPATH": str(copy)})
    assert done.returncode == 0, done.stderr
    where, count = done.stdout.split()
    assert pathlib.Path(where).resolve().is_relative_to(copy.resolve())
    assert int(count) == len(list((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")))
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": "a", "metadata": {}, "outputs": [],
                     "source": "import tiledlab; print(tiledlab.__file__)"}],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    path = copy / "notebooks" / "check.ipynb"
    path.write_text(json.dumps(nb))
    done = subprocess.run([sys.executable, "-m", "tools", "execute", "--inplace", str(path)], cwd=copy,
                          capture_output=True, text=True, timeout=300,  # the checkout's tools, the copy's package
                          env={"PATH": "/usr/bin:/bin", "TILEDLAB_BACKEND": "simulator",
                               "PYTHONPATH": f"{copy}:{ROOT}",
                               "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    printed = "".join(nbformat.read(path, as_version=4).cells[0].outputs[0]["text"]).strip()
    assert pathlib.Path(printed).resolve().is_relative_to(copy.resolve())


def test_a_folder_in_use_is_refused(tmp_path):
    (tmp_path / "work.txt").write_text("a student's file")
    done = subprocess.run([sys.executable, "-m", "tiledlab", "student-copy", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "not an empty folder" in done.stderr
