"""python -m classroom hub: a JupyterHub class server on one machine (jupyterhub_config.py, beside it).

Each student logs in and gets a JupyterLab of their own on a working copy of notebooks/ in
``<class folder>/<student>/notebooks``; the class folder is ``my-class/`` beside notebooks/ by default,
git-ignored like ``my-notebooks/``. The students' servers import tiledlab from a student copy of the series
in ``<class folder>/.series`` (classroom.student_copy: no solutions/, no tests), made afresh at each start,
never from the teacher's clone, so the key is not beside the package they run. JupyterHub's configurable-http-proxy
(npm) is looked for on PATH and in ``build/chp/`` (CHP_INSTALL). Other options go on to ``jupyterhub``
(``--port 8000``, ``--ip 127.0.0.1``, ``--JupyterHub.authenticator_class=...``).

nbgrader, where the teacher installed it, reaches the students as its assignment list only (fetch and submit):
the students' servers read the Jupyter configuration in ``<class folder>/.students`` (JUPYTER_CONFIG_PATH),
which names the course, its exchange (``<class folder>/.exchange``) and each student by their hub name, and
turns off nbgrader's teacher side (the formgrader). This module imports no matplotlib (the configuration
sets MPLCONFIGDIR first).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import pathlib
import re
import shlex
import shutil
import sqlite3
import stat
import subprocess
import sys

from tiledlab.experiments import Unavailable

from .grading import COURSE_ID
from .series import NOTEBOOKS, ROOT

CONFIG = pathlib.Path(__file__).with_name("jupyterhub_config.py")
DEFAULT_CLASS_NAME = "my-class"
CHP_PREFIX = ROOT / "build" / "chp"  # npm install --prefix build/chp ...
CHP_INSTALL = f"npm install --prefix {CHP_PREFIX} configurable-http-proxy@5.3.0"
CLASS_ENV = "TILEDLAB_CLASS_DIR"  # how the command tells the config file where the class folder is
NOTEBOOK_FOLDER = "notebooks"  # inside each student's home: what their JupyterLab opens
SERIES_FOLDER = ".series"  # in the class folder: the student copy the students' servers run from
STATE_FOLDER = ".hub"  # in the class folder: the hub's database, cookie secret and pid files
EXCHANGE_FOLDER = ".exchange"  # in the class folder: nbgrader's exchange (release, submit, collect)
STUDENT_CONFIG = ".students"  # in the class folder: the students' Jupyter configuration (JUPYTER_CONFIG_PATH)
MATPLOTLIB_FOLDER = ".matplotlib"  # in the class folder: the class's matplotlib cache, built at the hub's start
ADMIN_ENV = "TILEDLAB_HUB_ADMIN"  # the teacher's hub name, when not DEFAULT_ADMIN
DEFAULT_ADMIN = "teacher"
#: nbgrader's parts a student's server leaves out (the teacher's: the formgrader, the course list, creating
#: and validating assignments); the assignment list, to fetch and submit, stays.
TEACHER_ONLY = {"server": ["nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list",
                           "nbgrader.server_extensions.validate_assignment"],
                "lab": ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list",
                        "@jupyter/nbgrader:create-assignment", "@jupyter/nbgrader:validate-assignment"]}
#: The students' nbgrader configuration: the course, its exchange, and each student by their hub name
#: (nbgrader's own default is the system account's, the same for every student of a one-account hub).
STUDENT_NBGRADER = """# Written by `python -m classroom hub` at its start (classroom/hub.py): nbgrader for students.
import os
c = get_config()  # noqa: F821 (nbgrader defines it)
c.CourseDirectory.course_id = {course!r}
c.Exchange.root = {exchange!r}
c.CourseDirectory.student_id = os.environ.get("JUPYTERHUB_USER", "*")  # "*": nbgrader's default, the account
c.Exchange.assignment_dir = os.path.expanduser("~/{notebooks}")  # fetched where their JupyterLab opens
"""

#: The students' terminals (JupyterLab's): their own shell, not a login shell. Under a hub, Jupyter starts a login
#: shell, whose /etc/profile (Debian's, Ubuntu's) sets PATH afresh: the class environment's bin/, first on the PATH
#: the hub gives, was gone, and `nbgrader fetch_assignment` said "command not found".
STUDENT_SERVER = """# Written by `python -m classroom hub` at its start (classroom/hub.py): the students' terminals.
import os
import shutil
c = get_config()  # noqa: F821 (Jupyter defines it)
c.ServerApp.terminado_settings = {"shell_command": [os.environ.get("SHELL") or shutil.which("sh")]}  # not -l
"""

_IGNORE_ALL = "# The class folder of `python -m classroom hub`: git ignores all of it.\n*\n"
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]*\Z")


def proxy_path(path=None) -> str:
    """PATH with build/chp's node_modules/.bin put first (``path``: default $PATH)."""
    path = os.environ.get("PATH", "") if path is None else path
    return os.pathsep.join([str(CHP_PREFIX / "node_modules" / ".bin"), path])


def find_proxy(path=None) -> str | None:
    """The configurable-http-proxy executable, from build/chp or PATH; None when neither has one."""
    return shutil.which("configurable-http-proxy", path=proxy_path(path))


def class_folder(path=None) -> pathlib.Path:
    """The class folder: ``path``, else $TILEDLAB_CLASS_DIR, else my-class/ beside notebooks/."""
    return pathlib.Path(path or os.environ.get(CLASS_ENV) or ROOT / DEFAULT_CLASS_NAME).resolve()


def student_home(class_dir, username) -> pathlib.Path:
    """A student's home in the class folder; a ValueError for a name that could climb out of it or hide."""
    if not _PLAIN_NAME.match(username):
        raise ValueError(f"user name {username!r}: use letters, digits and . _ @ + - (not first)")
    return pathlib.Path(class_dir) / username


def series_copy(class_dir) -> pathlib.Path:
    """A fresh student copy of this clone (no solutions/, no tests) in the class folder: what the students'
    servers import tiledlab from (PYTHONPATH) and copy their notebooks from. Remade at each start, so a
    teacher's change to the clone reaches the class at the next start."""
    from .student_copy import student_copy
    dest = pathlib.Path(class_dir) / SERIES_FOLDER
    shutil.rmtree(dest, ignore_errors=True)
    return student_copy(dest)


def give_working_copy(home, src=None, say=print) -> pathlib.Path:
    """The student's working copy, ``home/notebooks`` (``lab.working_copy``: missing notebooks copied in,
    the student's edits kept)."""
    from tiledlab.notebook import lab
    return lab.working_copy(src or NOTEBOOKS, pathlib.Path(home) / NOTEBOOK_FOLDER, say=say)


def admin() -> str:
    """The hub's admin, the teacher: $TILEDLAB_HUB_ADMIN, else DEFAULT_ADMIN (jupyterhub_config.py)."""
    return os.environ.get(ADMIN_ENV) or DEFAULT_ADMIN


def admins(class_dir) -> set[str]:
    """Who the class folder's hub made admins: from its database, else admin() (no hub ran there yet, or
    the database is not ours to read)."""
    database = pathlib.Path(class_dir).resolve() / STATE_FOLDER / "jupyterhub.sqlite"
    try:
        with contextlib.closing(sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)) as db:
            return {name for (name,) in db.execute("SELECT name FROM users WHERE admin")}
    except sqlite3.Error:
        return {admin()}


def student_config(class_dir) -> pathlib.Path:
    """The students' Jupyter configuration, made afresh (JUPYTER_CONFIG_PATH of their servers): nbgrader's
    course, exchange and student id (STUDENT_NBGRADER), nbgrader's teacher side turned off (TEACHER_ONLY), their
    terminals' shell (STUDENT_SERVER);
    the exchange made, open to every account (nbgrader's own advice: students write their submissions into it)."""
    exchange = pathlib.Path(class_dir) / EXCHANGE_FOLDER
    exchange.mkdir(parents=True, exist_ok=True)
    exchange.chmod(0o1777)  # any account writes; only its owner removes what it wrote
    dest = pathlib.Path(class_dir) / STUDENT_CONFIG
    shutil.rmtree(dest, ignore_errors=True)
    (dest / "labconfig").mkdir(parents=True)
    (dest / "nbgrader_config.py").write_text(STUDENT_NBGRADER.format(course=COURSE_ID, exchange=str(exchange),
                                                                      notebooks=NOTEBOOK_FOLDER))
    off = {"ServerApp": {"jpserver_extensions": {name: False for name in TEACHER_ONLY["server"]}}}
    (dest / "jupyter_server_config.json").write_text(json.dumps(off, indent=2) + "\n")
    (dest / "jupyter_server_config.py").write_text(STUDENT_SERVER)
    page = {"disabledExtensions": {name: True for name in TEACHER_ONLY["lab"]}}
    (dest / "labconfig" / "page_config.json").write_text(json.dumps(page, indent=2) + "\n")
    return dest


def matplotlib_dir(spawner) -> str:
    """A student's MPLCONFIGDIR: the class's cache where every student is the hub's account; with system
    users a folder of their own home (matplotlib wants its folder writable), which the pre-spawn hook fills
    with a copy of the class's cache."""
    home = getattr(spawner, "home_dir", None)
    if home is not None:
        return str(class_folder() / MATPLOTLIB_FOLDER)
    return str(pathlib.Path(_system_home(spawner.user.name)[0]) / MATPLOTLIB_FOLDER)


#: A new student's JupyterLab settings: no news toast over the first notebook (``--LabApp.news_url=None``
#: alone does not stop it), no update check.
QUIET_SETTINGS = {"@jupyterlab/apputils-extension/notification.jupyterlab-settings":
                  {"fetchNews": "false", "checkForUpdates": False}}


def quiet_settings(home) -> list[pathlib.Path]:
    """Write QUIET_SETTINGS into the student's JupyterLab user settings, where they have none yet."""
    written = []
    for rel, value in QUIET_SETTINGS.items():
        path = pathlib.Path(home) / ".jupyter" / "lab" / "user-settings" / rel
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value, indent=2) + "\n")
            written.append(path)
    return written


def _system_home(name):
    """A system user's home and their (uid, gid), for LocalProcessSpawner (PAM, system users)."""
    import pwd
    entry = pwd.getpwnam(name)
    return entry.pw_dir, (entry.pw_uid, entry.pw_gid)


def _chown_tree(folder, owner):
    for path in (folder, *pathlib.Path(folder).rglob("*")):
        os.chown(path, *owner)


def pre_spawn_hook(spawner):
    """JupyterHub's Spawner.pre_spawn_hook: the working copy (from the class's series copy) and quiet
    settings in the spawner's home (in the class folder; with LocalProcessSpawner the system user's own,
    the copy then made theirs), the home closed to everyone but its owner (other students, where they
    are other system users)."""
    home, owner = getattr(spawner, "home_dir", None), None
    if home is None:
        home, owner = _system_home(spawner.user.name)
    series = class_folder() / SERIES_FOLDER / NOTEBOOK_FOLDER
    if not series.is_dir():
        raise RuntimeError(f"no student copy of the series in {series.parent}: start the hub with "
                           "`python -m classroom hub`, which makes it")
    give_working_copy(home, src=series, say=spawner.log.info)
    quiet_settings(home)
    fonts = class_folder() / MATPLOTLIB_FOLDER
    if owner is not None and fonts.is_dir():  # the class's font cache, where the student can write (matplotlib_dir)
        shutil.copytree(fonts, pathlib.Path(home) / MATPLOTLIB_FOLDER, dirs_exist_ok=True)
    if owner is not None and owner != (os.getuid(), os.getgid()):
        for made in (NOTEBOOK_FOLDER, ".jupyter", MATPLOTLIB_FOLDER):
            if (pathlib.Path(home) / made).exists():  # no font cache where the hub built none
                _chown_tree(pathlib.Path(home) / made, owner)
    os.chmod(home, 0o700)


def hub_argv(extra=(), *, config=CONFIG, python=None) -> list[str]:
    """The command that starts JupyterHub on ``config``; ``extra`` options after ours, so they win."""
    return [python or sys.executable, "-m", "jupyterhub", "-f", str(config), *extra]


def _folder_name(text) -> pathlib.Path:
    """--class-dir's type: a folder's name; an empty one would be the current folder, so it is refused."""
    if not text.strip():
        raise argparse.ArgumentTypeError("give the class folder's name, not an empty one")
    return pathlib.Path(text)


def parser(cls=argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The hub command's options (``cls``: the command line's own parser class, for its error messages)."""
    p = cls(
        prog="python -m classroom hub",
        description="Start a JupyterHub class server on this machine (classroom/jupyterhub_config.py): "
                    "each student signs up, logs in and gets their own working copy of the notebooks. "
                    "Options not listed here are passed to `jupyterhub`.")
    p.add_argument("--class-dir", type=_folder_name, default=None,
                   help=f"the students' homes and the hub's state (default: {DEFAULT_CLASS_NAME}/ beside "
                        "notebooks/, or $TILEDLAB_CLASS_DIR)")
    p.add_argument("--allow-root", action="store_true",
                   help="start even as root (every student's code then runs as root: only for a "
                        "throw-away container or a test)")
    p.add_argument("--dry-run", action="store_true",
                   help="check what the hub needs and print the JupyterHub command; start nothing")
    return p


def _check_installed():
    if importlib.util.find_spec("jupyterhub") is None or importlib.util.find_spec("nativeauthenticator") is None:
        raise Unavailable("the class server needs JupyterHub and its authenticator: pip install -e '.[hub]'")
    if find_proxy() is None:
        raise Unavailable(f"JupyterHub needs npm's configurable-http-proxy: {CHP_INSTALL}")


def _system_users(extra) -> bool:
    """Whether `extra` (jupyterhub's options) logs students in as system users (PAM) or starts their
    servers as such (LocalProcessSpawner)."""
    text = " ".join(extra).replace("=", " ").split()
    chosen = [value.lower() for option, value in zip(text, text[1:])
              if option.endswith(("authenticator_class", "spawner_class"))]
    return any(value.rsplit(".", 1)[-1] in ("pam", "pamauthenticator", "localprocess", "localprocessspawner")
               for value in chosen)


def _check_admin(extra):
    """With system users the admin logs in and gets a server as an account of this machine: refuse a name
    that is none (JupyterHub would only log a KeyError)."""
    import pwd
    if not _system_users(extra):
        return
    try:
        pwd.getpwnam(admin())
    except KeyError:
        raise ValueError(f"the hub's admin, {admin()!r}, is no account on this machine, and with system users "
                         f"(PAM, LocalProcessSpawner) the admin logs in as one: set {ADMIN_ENV} to yours, e.g. "
                         f"{ADMIN_ENV}=$USER") from None


def _closed_to_others(path) -> pathlib.Path | None:
    """The first of `path` (resolved: a venv's python is a link) and the folders above it that other accounts
    cannot enter or run (no x for others), as /root is; None where there is none."""
    real = pathlib.Path(path).resolve()
    return next((p for p in (*reversed(real.parents), real) if not p.stat().st_mode & stat.S_IXOTH), None)


def _check_interpreter(extra):
    """With system users each student's server runs this environment's Python as the student: refuse one they
    cannot run (JupyterHub would answer each login with HTTP 500, "Permission denied")."""
    closed = _closed_to_others(sys.executable) if _system_users(extra) else None
    if closed is not None:
        raise ValueError(f"with system users (PAM, LocalProcessSpawner) each student's server runs this "
                         f"environment's Python, {pathlib.Path(sys.executable).resolve()}, which other accounts "
                         f"cannot run ({closed} is closed to them): make .venv again with a Python installed for "
                         "all, e.g. `rm -rf .venv && /usr/bin/python3 -m venv .venv`, then install again")


def start(args, extra) -> int:
    """Check what the hub needs, make the class folder and hand the process to JupyterHub."""
    from tiledlab.notebook import lab
    cmd = hub_argv(extra)
    folder = class_folder(args.class_dir)
    blocker = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if blocker is not None and not blocker.is_dir():
        raise ValueError(f"--class-dir {folder}: {blocker} is a file, not a folder; give a folder's name")
    if lab.is_root() and not args.allow_root:
        raise ValueError("refusing to start the class server as root: every student's code would run as "
                         "root. Start it from an ordinary account (or pass --allow-root in a throw-away "
                         "container)")
    _check_installed()
    _check_admin(extra)
    _check_interpreter(extra)
    if args.dry_run:
        print(f"{CLASS_ENV}={shlex.quote(str(folder))} {shlex.join(cmd)}")
        return 0
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / ".gitignore").exists():
        (folder / ".gitignore").write_text(_IGNORE_ALL)
    os.environ.update({CLASS_ENV: str(folder), "PATH": proxy_path()})
    print(f"class folder: {folder} (one home per student; the hub's state in {folder / '.hub'})", flush=True)
    if os.name == "posix":
        os.execv(cmd[0], cmd)  # JupyterHub takes over the process: Ctrl-C stops it and the students' servers
    return subprocess.call(cmd)
