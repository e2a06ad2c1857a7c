"""For teachers: a copy of the series to hand to students, without the key.

`python -m classroom student-copy DIR` writes the package, the notebooks, the environment files, the
licences and a README of the copy's own (classroom/student-README.md: how to open the series, run a
notebook, check an exercise) into DIR, and leaves out `solutions/` (the key), the tests (several run the
key against the notebooks), the docs but the glossary, this classroom/ and the maintainers' tools/. The copy installs and
runs as the clone does: `pip install -e .` there, then `python -m tiledlab lab`. Nothing in the package
imports `solutions`.
"""
import os
import pathlib
import re
import shutil

from .series import ROOT

#: What a student copy holds, relative to the clone: folders, then single files (missing ones skipped).
FOLDERS = ("tiledlab", "notebooks", ".binder")
FILES = ("LICENSE", "LICENSE-CONTENT.md", "pyproject.toml", "environment.yml", ".gitignore",
         "docs/glossary.md", "docs/zh/glossary.md")  # the glossary notebook 0 points to
UNTRACKED = {".git", ".venv", "build", "node_modules"}  # not the series' files: not searched for pointers
JUNK = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".ipynb_checkpoints")
README = pathlib.Path("classroom", "student-README.md")  # the copy's README.md
#: A pointer to the key in what students read (the folder's path), and in code (an import of it).
POINTER = {".md": re.compile(r"solutions/"), ".ipynb": re.compile(r"solutions/"),
           ".py": re.compile(r"^\s*(from|import)\s+solutions\b", re.M)}


def student_copy(dest, source=None):
    """Write a copy of `source` (this clone) for students into `dest`, new or an empty folder; return it."""
    source = pathlib.Path(source or ROOT)
    dest = pathlib.Path(dest)
    inside = [name for name in FOLDERS if dest.resolve().is_relative_to((source / name).resolve())]
    if inside:  # copying a folder into itself never ends
        raise ValueError(f"{dest} is inside the series' {inside[0]}/, which the copy holds: give a folder "
                         "outside it (e.g. ../student-copy)")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ValueError(f"{dest} already exists and is not an empty folder: give a new folder's name")
    dest.mkdir(parents=True, exist_ok=True)
    for name in FOLDERS:
        if (source / name).is_dir():
            shutil.copytree(source / name, dest / name, ignore=JUNK)
    for name in FILES:
        if (source / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / name, dest / name)
    shutil.copy2(source / README, dest / "README.md")
    found = pointers(dest)
    if found:
        raise ValueError(f"the student copy would still point to the key: {', '.join(found)}")
    return dest


def pointers(folder):
    """Files under `folder` that point to the key: a page or notebook naming its folder, or code that
    imports it. The licences, which name every part of the repository, do not count."""
    found = []
    for top, folders, files in os.walk(folder):
        folders[:] = [f for f in folders if f not in UNTRACKED]  # pruned, not walked
        for name in files:
            path = pathlib.Path(top, name)
            pattern = POINTER.get(path.suffix)
            if pattern and not name.startswith("LICENSE") and pattern.search(path.read_text(errors="replace")):
                found.append(path.relative_to(folder).as_posix())
    return sorted(found)
