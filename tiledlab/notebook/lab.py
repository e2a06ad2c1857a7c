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

``--lang zh`` opens the Chinese edition instead: notebooks/zh/ (generated from the English notebooks)
copied into ``my-notebooks/zh/``, with TILEDLAB_LANG=zh for the kernels JupyterLab starts (so check() and
predict() answer in Chinese) and, when JupyterLab's Chinese language pack is installed
(``pip install 'tiledlab[zh]'``), JupyterLab's own menus in Chinese for that run: its user settings are
read from a folder of the working copy's own (``my-notebooks/zh/.lab-settings/``, a copy of yours made
the first time), whose translation setting says zh_CN, so your settings elsewhere stay as they are.

Any option it does not know is passed on to ``jupyter lab`` (``--no-browser``, ``--port 8899``, ...).
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import pathlib
import platform
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

#: The languages of the series: English (notebooks/) and the generated Chinese edition (notebooks/zh/).
LANGUAGES = ("en", "zh")
#: JupyterLab's name of the Chinese language pack (its entry point in jupyterlab.languagepack) and the setting.
LANGUAGE_PACK = "zh_CN"
TRANSLATION_SETTINGS = pathlib.Path("@jupyterlab", "translation-extension", "plugin.jupyterlab-settings")
SETTINGS_NAME = ".lab-settings"  # in the Chinese working copy: JupyterLab's user settings for its runs


def lessons(folder=SOURCE):
    """The series' notebooks in order (00, 01, ...)."""
    return sorted(pathlib.Path(folder).glob("[0-9][0-9]_*.ipynb"))


def edition(src, dest, lang):
    """(committed notebooks, working copy) of the edition `lang`: the Chinese one is the zh/ folder of both
    (a ValueError when `src` has no Chinese notebooks, saying how to make them)."""
    if lang not in LANGUAGES:
        raise ValueError(f"--lang {lang!r}: choose one of {', '.join(LANGUAGES)}")
    if lang == "zh" and pathlib.Path(src).is_dir() and not any((pathlib.Path(src) / "zh").glob("*.ipynb")):
        raise ValueError(f"--lang zh: {pathlib.Path(src) / 'zh'} has no Chinese notebooks; make them with "
                         f"`python -m tools translate build --root {pathlib.Path(src).resolve().parent}`")
    return (src / "zh", dest / "zh") if lang == "zh" else (src, dest)


def has_language_pack(locale=LANGUAGE_PACK) -> bool:
    """Whether JupyterLab's language pack for `locale` is installed (as JupyterLab finds it: an entry point)."""
    from importlib.metadata import entry_points
    return any(e.name == locale for e in entry_points(group="jupyterlab.languagepack"))


def user_settings_dir() -> pathlib.Path:
    """JupyterLab's user settings folder as it would find it (JUPYTERLAB_SETTINGS_DIR, else the default)."""
    given = os.environ.get("JUPYTERLAB_SETTINGS_DIR")
    if given:
        return pathlib.Path(given)
    from jupyter_core.paths import jupyter_config_dir
    return pathlib.Path(jupyter_config_dir()) / "lab" / "user-settings"


def chinese_settings(folder, mine=None) -> pathlib.Path:
    """JupyterLab user settings for the Chinese edition in `folder`: a copy of `mine` (the user's, made
    once, so their theme and shortcuts come along) whose translation setting is zh_CN."""
    folder = pathlib.Path(folder)
    mine = user_settings_dir() if mine is None else pathlib.Path(mine)
    if not folder.exists() and mine.is_dir():
        shutil.copytree(mine, folder)
    path = folder / TRANSLATION_SETTINGS
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"locale": LANGUAGE_PACK}, indent=2) + "\n")
    return folder


def lab_env(lang, dest, *, pack=None) -> dict:
    """The environment variables the lab command adds for `lang` (none for English): TILEDLAB_LANG for
    the kernels, and JupyterLab's settings folder when the language pack is installed (`pack`)."""
    if lang != "zh":
        return {}
    pack = has_language_pack() if pack is None else pack
    env = {"TILEDLAB_LANG": "zh"}
    if pack:
        env["JUPYTERLAB_SETTINGS_DIR"] = str(pathlib.Path(dest) / SETTINGS_NAME)
    return env


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
              or fresh and as_copied(nb) != (dest / nb.name).read_bytes()]
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


def as_copied(notebook) -> bytes:
    """The bytes of ``notebook`` as the working copy holds it: its stored Python version replaced by this
    Python's. JupyterLab puts the running kernel's language_info into an open notebook, so a version
    other than the reader's (the H200 run's) would mark every notebook modified as soon as it opens."""
    nb = json.loads(pathlib.Path(notebook).read_text(encoding="utf-8"))
    info = nb.get("metadata", {}).get("language_info")
    if isinstance(info, dict) and "version" in info:
        info["version"] = platform.python_version()
    return (json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


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
        (todo.dest / nb.name).write_bytes(as_copied(nb))
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
    p.add_argument("--lang", choices=LANGUAGES, default="en",
                   help="zh: the Chinese edition, --src's zh/ folder copied into the working copy's zh/ folder, "
                        "feedback in Chinese, and JupyterLab's menus in Chinese when its language pack is "
                        "installed (pip install 'tiledlab[zh]') (default: %(default)s)")
    return p


def start(args, extra) -> int:
    """Make the working copy and hand the process to JupyterLab (``args`` from ``parser()``)."""
    lang = getattr(args, "lang", "en")
    src, dest = edition(args.src, args.dest if args.dest is not None else args.src.parent / DEFAULT_DEST_NAME, lang)
    cmd, env = lab_argv(dest, extra), lab_env(lang, dest)
    if args.dry_run:
        print("\n".join(plan(src, dest, fresh=args.fresh).describe()))
        print(" ".join([*(f"{k}={v}" for k, v in env.items()), *cmd]))
        return 0
    folder = working_copy(src, dest, fresh=args.fresh)
    if lang == "zh":
        (folder / "LANGUAGE").write_text("zh\n")  # tiledlab.i18n.language() in a kernel started here
        if "JUPYTERLAB_SETTINGS_DIR" in env:
            chinese_settings(env["JUPYTERLAB_SETTINGS_DIR"])
    print(f"working copy: {folder} (the committed notebooks in {src} stay as they are)", flush=True)
    if os.name == "posix":
        os.execve(cmd[0], cmd, {**os.environ, **env})  # JupyterLab takes over the process: Ctrl-C goes to it
    return subprocess.call(cmd, env={**os.environ, **env})

