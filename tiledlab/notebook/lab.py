"""python -m tiledlab lab: open the series in JupyterLab on a working copy of the notebooks.

The committed notebooks carry the reference outputs of an H200 run. JupyterLab saves a notebook
(autosave, every two minutes by default) as soon as it has run, so "Run All" on a laptop would write
simulator outputs over them and leave a dirty checkout. This command therefore copies notebooks/ into
a working copy first (``my-notebooks/`` beside it by default; it ignores itself in git) and starts
JupyterLab there. A notebook already in the working copy is kept, so a student's edits survive the
next start; ``--fresh`` puts the committed version back, moving the notebooks the student edited
to a git-ignored backup folder beside the working copy first (``my-notebooks-backup-<date>-<time>/``).

JupyterLab refuses to start as root ("Running as root is not recommended"), which is how containers
and many cloud machines run; this command passes ``--allow-root`` when it runs as root.

Any option it does not know is passed on to ``jupyter lab`` (``--no-browser``, ``--port 8899``, ...).
"""
from __future__ import annotations

import argparse
import filecmp
import itertools
import os
import pathlib
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass


def _series_notebooks() -> pathlib.Path:
    """notebooks/ of the source checkout this module lives in (wherever it sits in the package)."""
    here = pathlib.Path(__file__).resolve()
    for folder in here.parents:
        if (folder / "notebooks").is_dir() and (folder / "pyproject.toml").is_file():
            return folder / "notebooks"
    return here.parents[1] / "notebooks"  # not a checkout (pip install .): main() says so


#: The committed notebooks, next to the package in a source checkout.
SOURCE = _series_notebooks()
#: Where the working copy goes, unless --dest says otherwise: beside notebooks/, git-ignored.
DEFAULT_DEST_NAME = "my-notebooks"

_IGNORE_ALL = "# A working copy made by `python -m tiledlab lab`: git ignores all of it.\n*\n"


def committed(src) -> list[pathlib.Path]:
    """The ``*.ipynb`` files of ``src``, or a FileNotFoundError that says what to do."""
    notebooks = sorted(pathlib.Path(src).glob("*.ipynb"))
    if not notebooks:
        raise FileNotFoundError(f"no notebooks (*.ipynb) in {src}: run this from a clone of the series, "
                                "or pass --src")
    return notebooks


@dataclass
class Plan:
    """What ``working_copy`` will do: the notebooks it copies in, and the edited ones it moves aside first."""
    dest: pathlib.Path
    copies: list
    edited: list

    def describe(self) -> list[str]:
        """What the plan would do, in lines (for --dry-run)."""
        lines = [f"would copy {_notebooks(len(self.copies))} into {self.dest}"]
        if self.edited:
            lines.append(f"would move {len(self.edited)} edited {_notebooks(len(self.edited), '')} to "
                         f"{_backup_name(self.dest)}/ first")
        return lines


def _notebooks(n, count=True):
    return (f"{n} " if count else "") + ("notebook" if n == 1 else "notebooks")


def plan(src, dest, *, fresh=False) -> Plan:
    """Which committed notebooks go into ``dest``: those missing there and, when ``fresh``, those that
    differ from the committed ones (the student's edits, which are moved to a backup first)."""
    src, dest = pathlib.Path(src), pathlib.Path(dest)
    notebooks = committed(src)
    if dest.resolve() == src.resolve():
        raise ValueError(f"the working copy must not be the committed notebooks themselves ({src})")
    if dest.exists() and not dest.is_dir():
        raise ValueError(f"the working copy {dest} is a file, not a folder: pass --dest with a folder's name")
    copies = [nb for nb in notebooks if not (dest / nb.name).exists()
              or fresh and not filecmp.cmp(nb, dest / nb.name, shallow=False)]
    return Plan(dest, copies, [dest / nb.name for nb in copies if (dest / nb.name).exists()])


def _backup_name(dest) -> pathlib.Path:
    return dest.parent / f"{dest.name}-backup-{time.strftime('%Y%m%d-%H%M%S')}"


def backup_folder(dest) -> pathlib.Path:
    """A new, git-ignored folder beside ``dest``, named by the time, for the notebooks --fresh replaces."""
    name = _backup_name(dest)
    for k in itertools.count():
        folder = name.with_name(f"{name.name}-{k}") if k else name
        try:
            folder.mkdir()
            break
        except FileExistsError:  # a second --fresh within the same second
            continue
    (folder / ".gitignore").write_text(_IGNORE_ALL)
    return folder


def working_copy(src, dest, *, fresh=False, say=print) -> pathlib.Path:
    """Copy every ``*.ipynb`` of ``src`` into ``dest`` and return ``dest``.

    A notebook that already exists in ``dest`` is left alone (it may hold the student's work) unless
    ``fresh`` is true; then an edited one is first moved to a backup folder beside ``dest`` (``say``
    tells where). ``dest`` gets a ``.gitignore`` that ignores everything in it, so the copy never
    shows up in ``git status`` even without an entry in the repository's own ``.gitignore``.
    """
    todo = plan(src, dest, fresh=fresh)
    todo.dest.mkdir(parents=True, exist_ok=True)
    ignore = todo.dest / ".gitignore"
    if not ignore.exists():
        ignore.write_text(_IGNORE_ALL)
    if todo.edited:
        folder = backup_folder(todo.dest)
        for path in todo.edited:
            shutil.move(path, folder / path.name)
        say(f"moved {_notebooks(len(todo.edited))} you had edited to {folder}")
    for nb in todo.copies:
        shutil.copy2(nb, todo.dest / nb.name)
    return todo.dest


def is_root() -> bool:
    """True when running as root on a POSIX system (there is no root on Windows)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


QUIET = ["--LabApp.news_url=None",  # no "get notified about Jupyter news?" toast over the first notebook
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]  # nor an update notice


def lab_argv(notebook_dir, extra=(), *, root=None, python=None) -> list[str]:
    """The command that starts JupyterLab on ``notebook_dir``, without news or update toasts.

    ``--allow-root`` is added when ``root`` is true (default: when running as root) and the caller
    did not pass it already. ``extra`` options go to ``jupyter lab`` as they are (after ours, so
    they win).
    """
    root = is_root() if root is None else root
    extra = list(extra)
    argv = [python or sys.executable, "-m", "jupyter", "lab", str(notebook_dir), *QUIET]
    if root and "--allow-root" not in extra:
        argv.append("--allow-root")
    return argv + extra


def parser(cls=argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The lab command's options (``cls``: the command line's own parser class, for its error messages)."""
    p = cls(
        prog="python -m tiledlab lab",
        description="Copy the notebooks into a git-ignored working copy and open it in JupyterLab, so "
                    "that running them never overwrites the committed H200 outputs. Options not listed "
                    "here are passed to `jupyter lab`.")
    p.add_argument("--src", type=pathlib.Path, default=SOURCE,
                   help="the committed notebooks (default: %(default)s)")
    p.add_argument("--dest", type=pathlib.Path, default=None,
                   help=f"the working copy (default: {DEFAULT_DEST_NAME}/ beside --src)")
    p.add_argument("--fresh", action="store_true",
                   help="put the committed notebooks back, moving the ones you edited to a backup folder "
                        f"beside the working copy ({DEFAULT_DEST_NAME}-backup-<date>-<time>/)")
    p.add_argument("--dry-run", action="store_true",
                   help="say what would be copied and print the JupyterLab command; write nothing")
    return p


def start(args, extra) -> int:
    """Make the working copy and hand the process to JupyterLab (``args`` from ``parser()``)."""
    dest = args.dest if args.dest is not None else args.src.parent / DEFAULT_DEST_NAME
    cmd = lab_argv(dest, extra)
    if args.dry_run:
        print("\n".join(plan(args.src, dest, fresh=args.fresh).describe()))
        print(" ".join(cmd))
        return 0
    folder = working_copy(args.src, dest, fresh=args.fresh)
    print(f"working copy: {folder} (the committed notebooks in {args.src} stay as they are)", flush=True)
    if os.name == "posix":
        os.execv(cmd[0], cmd)  # JupyterLab takes over the process: Ctrl-C goes straight to it
    return subprocess.call(cmd)

