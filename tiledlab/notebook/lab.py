"""python -m tiledlab lab: open the series in JupyterLab on a working copy of the notebooks.

The committed notebooks carry the reference outputs of an H200 run. JupyterLab saves a notebook
(autosave, every two minutes by default) as soon as it has run, so "Run All" on a laptop would write
simulator outputs over them and leave a dirty checkout. This command therefore copies notebooks/ into
a working copy first (``my-notebooks/`` beside it by default; it ignores itself in git) and starts
JupyterLab there. A notebook already in the working copy is kept, so a student's edits survive the
next start; ``--fresh`` puts the committed version back.

JupyterLab refuses to start as root ("Running as root is not recommended"), which is how containers
and many cloud machines run; this command passes ``--allow-root`` when it runs as root.

Any option it does not know is passed on to ``jupyter lab`` (``--no-browser``, ``--port 8899``, ...).
"""
from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys

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


def working_copy(src, dest, *, fresh=False) -> pathlib.Path:
    """Copy every ``*.ipynb`` of ``src`` into ``dest`` and return ``dest``.

    A notebook that already exists in ``dest`` is left alone (it may hold the student's work) unless
    ``fresh`` is true. ``dest`` gets a ``.gitignore`` that ignores everything in it, so the copy never
    shows up in ``git status`` even without an entry in the repository's own ``.gitignore``.
    """
    src, dest = pathlib.Path(src), pathlib.Path(dest)
    notebooks = sorted(src.glob("*.ipynb"))
    if not notebooks:
        raise FileNotFoundError(f"no notebooks (*.ipynb) in {src}")
    if dest.resolve() == src.resolve():
        raise ValueError(f"the working copy must not be the committed notebooks themselves ({src})")
    dest.mkdir(parents=True, exist_ok=True)
    ignore = dest / ".gitignore"
    if not ignore.exists():
        ignore.write_text(_IGNORE_ALL)
    for nb in notebooks:
        target = dest / nb.name
        if fresh or not target.exists():
            shutil.copy2(nb, target)
    return dest


def is_root() -> bool:
    """True when running as root on a POSIX system (there is no root on Windows)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def lab_argv(notebook_dir, extra=(), *, root=None, python=None) -> list[str]:
    """The command that starts JupyterLab on ``notebook_dir``.

    ``--allow-root`` is added when ``root`` is true (default: when running as root) and the caller
    did not pass it already. ``extra`` options go to ``jupyter lab`` as they are.
    """
    root = is_root() if root is None else root
    extra = list(extra)
    argv = [python or sys.executable, "-m", "jupyter", "lab", str(notebook_dir)]
    if root and "--allow-root" not in extra:
        argv.append("--allow-root")
    return argv + extra


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tiledlab lab",
        description="Copy the notebooks into a git-ignored working copy and open it in JupyterLab, so "
                    "that running them never overwrites the committed H200 outputs. Options not listed "
                    "here are passed to `jupyter lab`.")
    p.add_argument("--src", type=pathlib.Path, default=SOURCE,
                   help="the committed notebooks (default: %(default)s)")
    p.add_argument("--dest", type=pathlib.Path, default=None,
                   help=f"the working copy (default: {DEFAULT_DEST_NAME}/ beside --src)")
    p.add_argument("--fresh", action="store_true",
                   help="overwrite notebooks already in the working copy with the committed ones")
    p.add_argument("--dry-run", action="store_true",
                   help="make the working copy and print the JupyterLab command instead of running it")
    return p


def main(argv=None) -> int:
    args, extra = _parser().parse_known_args(argv)
    dest = args.dest if args.dest is not None else args.src.parent / DEFAULT_DEST_NAME
    try:
        folder = working_copy(args.src, dest, fresh=args.fresh)
    except (FileNotFoundError, ValueError) as e:
        print(f"error: {e} (run this from a clone of the series, or pass --src)", file=sys.stderr)
        return 2
    cmd = lab_argv(folder, extra)
    print(f"working copy: {folder} (the committed notebooks in {args.src} stay as they are)", flush=True)
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    if os.name == "posix":
        os.execv(cmd[0], cmd)  # JupyterLab takes over the process: Ctrl-C goes straight to it
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
