"""python -m tiledlab lab: open the series in JupyterLab on a git-ignored working copy of the notebooks, since
"Run All" on the committed ones would save simulator outputs over their H200 ones. ``--fresh`` backs edits up first.
"""
from __future__ import annotations

import argparse
import contextlib
import difflib
import itertools
import json
import os
import pathlib
import platform
import shlex
import shutil
import stat
import subprocess
import sys
import time

from .. import i18n
from ..counting.outcomes import series_notebooks
from ..i18n import N_, _

SOURCE = series_notebooks()  # the committed notebooks, next to the package in a source checkout
DEFAULT_DEST_NAME = "my-notebooks"  # the working copy unless --dest says otherwise: beside notebooks/
_IGNORE_ALL = "# A working copy made by `python -m tiledlab lab`: git ignores all of it.\n*\n"
LANGUAGES = ("en", "zh")  # English (notebooks/) and the generated Chinese edition (notebooks/zh/)
LANGUAGE_PACK = "zh_CN"  # JupyterLab's Chinese language pack: its jupyterlab.languagepack entry point, its setting
TRANSLATION_SETTINGS = pathlib.Path("@jupyterlab", "translation-extension", "plugin.jupyterlab-settings")
SETTINGS_NAME = ".lab-settings"  # in the Chinese working copy: JupyterLab's user settings for its runs
CONFIG_NAME = ".lab-config"  # PAGE_CONFIG: no "Jupyter news?" toast (news_url=None alone leaves it)
PAGE_CONFIG = {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}
QUIET = ["--LabApp.news_url=None",  # no news fetched (the toast that asks is PAGE_CONFIG's)
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]  # nor an update notice


def edition(src, dest, lang):
    """(committed notebooks, working copy) of the edition `lang`: the Chinese one is the zh/ folder of both."""
    if lang == "zh" and pathlib.Path(src).is_dir() and not any((pathlib.Path(src) / "zh").glob("*.ipynb")):
        raise ValueError(f"--lang zh: {pathlib.Path(src) / 'zh'} has no Chinese notebooks; make them with "
                         f"`python -m tools translate build --root {pathlib.Path(src).resolve().parent}`")
    return (src / "zh", dest / "zh") if lang == "zh" else (src, dest)


def has_language_pack(locale=LANGUAGE_PACK) -> bool:
    from importlib.metadata import entry_points
    return any(e.name == locale for e in entry_points(group="jupyterlab.languagepack"))


def chinese_settings(folder, mine=None) -> pathlib.Path:
    """JupyterLab settings in `folder`: a copy of `mine` (the user's, made once) with the locale zh_CN."""
    from jupyterlab.commands import get_user_settings_dir  # $JUPYTERLAB_SETTINGS_DIR, else its default
    folder, mine = pathlib.Path(folder), pathlib.Path(get_user_settings_dir() if mine is None else mine)
    if not _entry(folder, folder=True) and mine.is_dir():
        shutil.copytree(mine, folder)
    path = folder / TRANSLATION_SETTINGS
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"locale": LANGUAGE_PACK}, indent=2) + "\n")
    return folder


def page_config(dest) -> pathlib.Path:
    """Write PAGE_CONFIG where JUPYTER_CONFIG_PATH=dest/.lab-config finds it; return that folder."""
    folder = pathlib.Path(dest) / CONFIG_NAME
    path = folder / "labconfig" / "page_config.json"
    _entry(folder, folder=True), _entry(path.parent, folder=True), _entry(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(PAGE_CONFIG, indent=2) + "\n")
    return folder


def lab_env(lang, dest, *, pack=None) -> dict:
    """The environment the lab adds: PAGE_CONFIG's path; zh: TILEDLAB_LANG, with the language pack its settings."""
    paths = [str(pathlib.Path(dest) / CONFIG_NAME), os.environ.get("JUPYTER_CONFIG_PATH", "")]
    env = {"JUPYTER_CONFIG_PATH": os.pathsep.join(p for p in paths if p)}
    if lang == "zh":
        env["TILEDLAB_LANG"] = "zh"
        if has_language_pack() if pack is None else pack:
            env["JUPYTERLAB_SETTINGS_DIR"] = str(pathlib.Path(dest) / SETTINGS_NAME)
    return env


def committed(src) -> list[pathlib.Path]:
    """The ``*.ipynb`` files of ``src``, each a regular file (a pipe would block the copy), else an error saying why."""
    notebooks = sorted(pathlib.Path(src).glob("*.ipynb"))
    if not notebooks:
        raise FileNotFoundError(f"no notebooks (*.ipynb) in {src}: run this from a clone of the series, or pass --src")
    for nb in notebooks:
        if not stat.S_ISREG(nb.stat().st_mode):
            raise ValueError(f"{nb} is not a notebook file (a folder, pipe or device): move it out of {src}")
    return notebooks


def _entry(path, folder=False) -> bool:
    """Whether a file (`folder`: a folder) is at `path`; a link (writes elsewhere) or a pipe (blocks) is refused."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return False
    if (stat.S_ISDIR if folder else stat.S_ISREG)(mode):
        return True
    kind = ("a symbolic link" if stat.S_ISLNK(mode) else "a folder" if stat.S_ISDIR(mode)
            else "a file" if stat.S_ISREG(mode) else "a pipe, socket or device")
    raise ValueError(f"{path} is {kind}, not a file the lab can write: move it out of the working copy "
                     "(or pass --dest with another folder)")


def _notebooks(n, edited=""):
    return f"{n} {edited}notebook{'' if n == 1 else 's'}"


def plan(src, dest, *, fresh=False) -> tuple[list, list]:
    """(copies, edited): notebooks missing in ``dest`` (``fresh``: or differing), the edited ones to back up first;
    a ValueError for a ``dest`` that is a file or overlaps the committed notebooks."""
    src, dest = pathlib.Path(src), pathlib.Path(dest)
    notebooks, where = committed(src), dest.resolve()
    blocker = next((p for p in (dest, *dest.parents) if p.exists()), dest)
    if not blocker.is_dir():
        raise ValueError(f"the working copy {dest}: {blocker} is a file, not a folder: pass --dest with a folder's name")
    for root in {src.resolve(), SOURCE.resolve()}:  # the copy inside or around committed notebooks: refused
        if where.is_relative_to(root) or root.is_relative_to(where):
            raise ValueError(f"the working copy {where} would mix with the committed notebooks in {root}: pass "
                             f"--dest with a folder outside it (the default is {DEFAULT_DEST_NAME}/ beside notebooks/)")
    _entry(dest / ".gitignore")
    copies = [nb for nb in notebooks if not _entry(dest / nb.name)
              or fresh and as_copied(nb) != (dest / nb.name).read_bytes()]
    return copies, [dest / nb.name for nb in copies if _entry(dest / nb.name)]


def _backup_name(dest) -> pathlib.Path:
    return dest.parent / f"{dest.name}-backup-{time.strftime('%Y%m%d-%H%M%S')}"


def backup_folder(dest) -> pathlib.Path:
    """A new, git-ignored folder beside ``dest``, named by the time."""
    name = _backup_name(dest)
    for k in itertools.count():
        folder = name.with_name(f"{name.name}-{k}") if k else name
        with contextlib.suppress(FileExistsError):  # a second --fresh within the same second: the next k
            folder.mkdir()
            break
    (folder / ".gitignore").write_text(_IGNORE_ALL)
    return folder


def as_copied(notebook) -> bytes:
    """``notebook``'s bytes with this Python's version: JupyterLab writes the kernel's into an open notebook,
    so the H200 run's would mark every notebook modified as soon as it opens."""
    raw = pathlib.Path(notebook).read_bytes()
    try:
        nb = json.loads(raw)
        nb["metadata"]["language_info"]["version"] = platform.python_version()
    except (ValueError, KeyError, TypeError):  # not a notebook's JSON: copied as it is
        return raw
    return (json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def working_copy(src, dest, *, fresh=False, say=print) -> pathlib.Path:
    """Copy ``src``'s notebooks into ``dest`` as ``plan`` says, with a ``.gitignore`` of its own; ``dest``."""
    copies, edited = plan(src, dest, fresh=fresh)
    dest = pathlib.Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    ignore = dest / ".gitignore"
    if not _entry(ignore):
        ignore.write_text(_IGNORE_ALL)
    if edited:
        folder = backup_folder(dest)
        for path in edited:
            shutil.move(path, folder / path.name)
        say(f"moved {_notebooks(len(edited))} you had edited to {folder}")
    for nb in copies:
        (dest / nb.name).write_bytes(as_copied(nb))
    return dest


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def lab_argv(notebook_dir, extra=(), *, root=None, python=None) -> list[str]:
    """The command that starts JupyterLab on ``notebook_dir`` (--allow-root as root); ``extra`` last, so they win."""
    root = is_root() if root is None else root
    allow = ["--allow-root"] if root and "--allow-root" not in extra else []
    return [python or sys.executable, "-m", "jupyter", "lab", str(notebook_dir), *QUIET, *allow, *extra]


def check_options(extra):
    """A one-line ValueError for options `jupyter lab` would refuse (its exit 1 means something else here)."""
    if not extra:
        return
    import io
    from jupyter_server.serverapp import ServerApp
    from jupyterlab.labapp import LabApp
    from traitlets import TraitError
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(said):
            app = LabApp()
            app.parse_command_line(list(extra))
            ServerApp(config=app.config)
    except SystemExit as done:
        if done.code not in (0, None):  # --help and --version go on to JupyterLab, which answers them
            reason = (said.getvalue().strip().splitlines() or ["unrecognized"])[-1].split("error: ")[-1]
            raise ValueError(f"jupyter lab refuses {' '.join(extra)}: {reason}") from None
    except TraitError as error:
        raise ValueError(f"jupyter lab refuses {' '.join(extra)}: {error}") from None


def parse(p, argv):
    """`p`'s options and the rest, for Jupyter; a ValueError for one close to one of `p`'s (--dryrun: --dry-run)."""
    args, extra = p.parse_known_args(argv)
    ours = [o for action in p._actions for o in action.option_strings if o.startswith("--")]
    for word in (w.split("=")[0] for w in extra if w.startswith("--")):
        if close := difflib.get_close_matches(word, ours, 1, 0.8):
            raise ValueError(_("{word} is not an option of {prog}: did you mean {close}?").format(
                word=word, prog=p.prog, close=close[0]))
    return args, extra


def parser(cls=argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = cls(prog="python -m tiledlab lab", description="Copy the notebooks into a git-ignored working copy and "
            "open it in JupyterLab, so that running them never overwrites the committed H200 outputs. Options "
            "not listed here are passed to `jupyter lab`.")
    p.add_argument("--src", type=pathlib.Path, default=SOURCE, help="the committed notebooks (default: %(default)s)")
    p.add_argument("--dest", type=pathlib.Path, default=None,
                   help=f"the working copy (default: {DEFAULT_DEST_NAME}/ beside --src)")
    p.add_argument("--fresh", action="store_true", help="put the committed notebooks back, moving the ones you edited "
                   f"to a backup folder beside the working copy ({DEFAULT_DEST_NAME}-backup-<date>-<time>/)")
    p.add_argument("--dry-run", action="store_true",
                   help="say what would be copied and print the JupyterLab command; write nothing")
    p.add_argument("--lang", choices=LANGUAGES, default="en", help="zh: the Chinese edition, --src's zh/ folder "
                   "copied into the working copy's zh/ folder, feedback in Chinese, and JupyterLab's menus in Chinese "
                   "when its language pack is installed (pip install 'tiledlab[zh]') (default: %(default)s)")
    return p


def _in(lang, message):
    return i18n.catalog().gettext(message) if lang == "zh" else message


def _say_if_menus_stay_english(lang):
    if lang == "zh" and not has_language_pack():
        print(_in(lang, N_("JupyterLab's own menus stay in English: its Chinese language pack is not installed "
                           "(pip install -e '.[zh]', then start again); the notebooks and their feedback are in Chinese")),
              file=sys.stderr)


def start(args, extra) -> int:
    lang = args.lang
    src, dest = edition(args.src, args.dest if args.dest is not None else args.src.parent / DEFAULT_DEST_NAME, lang)
    check_options(extra)
    cmd, env = lab_argv(dest, extra), lab_env(lang, dest)
    if args.dry_run:
        copies, edited = plan(src, dest, fresh=args.fresh)
        kept = len(committed(src)) - len(copies)  # already in the working copy, left as they are
        print(f"would copy {_notebooks(len(copies))} into {dest}" + (f", keeping the {kept} there" if kept else ""))
        if edited:
            print(f"would move {_notebooks(len(edited), 'edited ')} to {_backup_name(dest)}/ first")
        _say_if_menus_stay_english(lang)
        print(" ".join([*(f"{k}={shlex.quote(v)}" for k, v in env.items()), shlex.join(cmd)]))
        return 0
    folder = working_copy(src, dest, fresh=args.fresh)
    _say_if_menus_stay_english(lang)
    page_config(folder)
    if lang == "zh":
        _entry(folder / "LANGUAGE")
        (folder / "LANGUAGE").write_text("zh\n")  # tiledlab.i18n.language() in a kernel started here
        if "JUPYTERLAB_SETTINGS_DIR" in env:
            chinese_settings(env["JUPYTERLAB_SETTINGS_DIR"])
    print(_in(lang, N_("working copy: {folder} (the committed notebooks in {src} stay as they are)")).format(
        folder=folder, src=src), flush=True)
    if os.name == "posix":
        os.execve(cmd[0], cmd, {**os.environ, **env})  # JupyterLab takes over the process: Ctrl-C goes to it
    return subprocess.call(cmd, env={**os.environ, **env})

