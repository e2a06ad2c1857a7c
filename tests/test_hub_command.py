"""`python -m classroom hub` and classroom/jupyterhub_config.py, without a hub or a browser
(tests/browser/test_hub.py runs the server itself)."""
import importlib.util
import json
import logging
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from types import SimpleNamespace

import pytest

from classroom import cli, hub, series
from tiledlab.cli import BAD_INPUT, UNAVAILABLE
from tiledlab.notebook import lab

NOTEBOOKS = sorted(p.name for p in series.NOTEBOOKS.glob("*.ipynb"))
SOLUTIONS = {p.name for p in (series.ROOT / "solutions").iterdir()}


@pytest.fixture(scope="module")
def series_copy(tmp_path_factory):
    """A class folder with the student copy the hub makes at its start (made once: it takes a moment)."""
    return hub.series_copy(tmp_path_factory.mktemp("class"))


@pytest.fixture(autouse=True)
def class_dir(series_copy, monkeypatch):
    """The hub's class folder, as `python -m classroom hub` tells its configuration and hook."""
    monkeypatch.setenv(hub.CLASS_ENV, str(series_copy.parent))
    return series_copy.parent


@pytest.mark.parametrize("name", ["../teacher", ".hub", "a/b", "", "-x"])
def test_a_user_name_cannot_leave_the_class_folder(tmp_path, name):
    with pytest.raises(ValueError):
        hub.student_home(tmp_path, name)


def test_pre_spawn_gives_the_notebooks_and_never_the_solutions(tmp_path):
    spawner = SimpleNamespace(home_dir=str(tmp_path / "ada"), log=logging.getLogger("test"))
    hub.pre_spawn_hook(spawner)
    files = {p.name for p in (tmp_path / "ada").rglob("*") if p.is_file()}
    assert sorted(p.name for p in (tmp_path / "ada" / hub.NOTEBOOK_FOLDER).glob("*.ipynb")) == NOTEBOOKS
    assert not files & SOLUTIONS and not any((tmp_path / "ada").rglob("solutions"))
    settings = tmp_path / "ada" / ".jupyter" / "lab" / "user-settings" / next(iter(hub.QUIET_SETTINGS))
    assert json.loads(settings.read_text())["fetchNews"] == "false"
    assert (tmp_path / "ada").stat().st_mode & 0o777 == 0o700  # closed to other accounts


def test_the_students_run_a_series_without_the_key(series_copy):
    """The series copy the students' servers import tiledlab from: no solutions/, no tests, the notebooks."""
    assert not (series_copy / "solutions").exists() and not (series_copy / "tests").exists()
    assert (series_copy / "tiledlab" / "__init__.py").is_file()
    assert sorted(p.name for p in (series_copy / hub.NOTEBOOK_FOLDER).glob("*.ipynb")) == NOTEBOOKS


def test_pre_spawn_refuses_without_the_series_copy(tmp_path, monkeypatch):
    monkeypatch.setenv(hub.CLASS_ENV, str(tmp_path / "class"))
    spawner = SimpleNamespace(home_dir=str(tmp_path / "ada"), log=logging.getLogger("test"))
    with pytest.raises(RuntimeError, match="python -m classroom hub"):
        hub.pre_spawn_hook(spawner)
    assert not (tmp_path / "ada").exists()


def test_pre_spawn_keeps_what_the_student_changed(tmp_path):
    spawner = SimpleNamespace(home_dir=str(tmp_path / "ada"), log=logging.getLogger("test"))
    hub.pre_spawn_hook(spawner)
    notebook = tmp_path / "ada" / hub.NOTEBOOK_FOLDER / NOTEBOOKS[0]
    notebook.write_text("the student's work")
    settings = hub.quiet_settings(tmp_path / "other")[0]
    moved = tmp_path / "ada" / settings.relative_to(tmp_path / "other")
    moved.write_text('{"fetchNews": "true"}')
    hub.pre_spawn_hook(spawner)  # the next login
    assert notebook.read_text() == "the student's work"
    assert moved.read_text() == '{"fetchNews": "true"}'


@pytest.mark.skipif(importlib.util.find_spec("traitlets") is None, reason="needs traitlets (JupyterLab's)")
def test_the_class_configuration(tmp_path, monkeypatch):
    from traitlets.config.loader import PyFileConfigLoader
    monkeypatch.setenv(hub.CLASS_ENV, str(tmp_path / "class"))
    (tmp_path / "class" / hub.SERIES_FOLDER / "stale").mkdir(parents=True)  # a copy from the last start
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "mpl"))
    c = PyFileConfigLoader(str(hub.CONFIG)).load_config()
    assert c.JupyterHub.authenticator_class == "native" and not c.NativeAuthenticator.open_signup
    assert c.JupyterHub.spawner_class == "simple"
    assert c.SimpleLocalProcessSpawner.home_dir_template == str(tmp_path / "class" / "{username}")
    assert c.Spawner.pre_spawn_hook is hub.pre_spawn_hook
    assert c.Spawner.default_url == "/lab"
    assert "TILEDLAB_BACKEND" in c.Spawner.env_keep
    assert set(lab.QUIET) <= set(c.Spawner.args)
    assert c.JupyterHub.db_url == f"sqlite:///{tmp_path / 'class' / '.hub' / 'jupyterhub.sqlite'}"
    assert (tmp_path / "class" / ".hub").stat().st_mode & 0o777 == 0o700  # the password hashes
    series_copy = tmp_path / "class" / hub.SERIES_FOLDER
    assert c.Spawner.environment["PYTHONPATH"] == str(series_copy) and "PYTHONPATH" not in c.Spawner.env_keep
    assert (series_copy / "tiledlab").is_dir() and not (series_copy / "solutions").exists()
    assert not (series_copy / "stale").exists()  # made afresh at each start


def test_the_guide_names_the_versions_the_extra_installs():
    """docs/classroom.md states the hub extra's requirements as pyproject.toml does (one statement each)."""
    import tomllib
    extra = tomllib.loads((series.ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["hub"]
    guide = (series.ROOT / "docs" / "classroom.md").read_text()
    assert all(f"`{requirement}`" in guide for requirement in extra), extra


@pytest.fixture
def installed(monkeypatch):
    """A machine with everything the hub needs (JupyterHub, its authenticator, the proxy), not as root."""
    monkeypatch.setattr(hub.importlib.util, "find_spec", lambda name: object())
    monkeypatch.setattr(hub, "find_proxy", lambda path=None: "/usr/bin/configurable-http-proxy")
    monkeypatch.setattr(lab, "is_root", lambda: False)
    monkeypatch.setattr(hub.os, "execv", _never_exec)


def test_dry_run_prints_the_jupyterhub_command(tmp_path, installed, capsys):
    assert cli.main(["hub", "--dry-run", "--class-dir", str(tmp_path), "--port", "8123"]) == 0
    out = capsys.readouterr().out
    assert f"{hub.CLASS_ENV}={tmp_path} " in out
    assert f"-m jupyterhub -f {hub.CONFIG} --port 8123" in out


@pytest.mark.parametrize("missing, code, words", [
    ("root", BAD_INPUT, "as root"), ("proxy", UNAVAILABLE, "configurable-http-proxy"),
    ("extra", UNAVAILABLE, "pip install -e '.[hub]'")])
def test_dry_run_checks_what_the_hub_checks(missing, code, words, tmp_path, installed, monkeypatch, capsys):
    """A dry run says what the real start would refuse (root, no proxy, no JupyterHub)."""
    if missing == "root":
        monkeypatch.setattr(lab, "is_root", lambda: True)
    elif missing == "proxy":
        monkeypatch.setattr(hub, "find_proxy", lambda path=None: None)
    else:
        monkeypatch.setattr(hub.importlib.util, "find_spec", lambda name: None)
    assert cli.main(["hub", "--dry-run", "--class-dir", str(tmp_path / "class")]) == code
    err = capsys.readouterr().err
    assert words in err and not (tmp_path / "class").exists(), err


def _never_exec(*args):
    raise AssertionError(f"the command went on to start {args}")


def test_refuses_root_without_allow_root(monkeypatch, capsys):
    monkeypatch.setattr(hub.os, "execv", _never_exec)
    monkeypatch.setattr(lab, "is_root", lambda: True)
    assert cli.main(["hub"]) == BAD_INPUT
    assert "refusing to start the class server as root" in capsys.readouterr().err


def test_says_how_to_install_the_proxy(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(hub.os, "execv", _never_exec)
    monkeypatch.setattr(hub, "CHP_PREFIX", tmp_path / "no-chp")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert cli.main(["hub", "--allow-root", "--class-dir", str(tmp_path / "class")]) == UNAVAILABLE
    err = capsys.readouterr().err
    assert ("npm install --prefix" in err) or ("pip install -e '.[hub]'" in err)
    assert not (tmp_path / "class").exists()


def test_pre_spawn_with_system_users_copies_into_the_users_home(tmp_path, monkeypatch):
    """LocalProcessSpawner (PAM) has no home_dir: the hook asks the system for the user's home."""
    monkeypatch.setattr(hub, "_system_home", lambda name: (str(tmp_path / name), (os.getuid(), os.getgid())))
    spawner = SimpleNamespace(user=SimpleNamespace(name="ada"), log=logging.getLogger("test"))
    hub.pre_spawn_hook(spawner)
    assert sorted(p.name for p in (tmp_path / "ada" / hub.NOTEBOOK_FOLDER).glob("*.ipynb")) == NOTEBOOKS
    assert (tmp_path / "ada").stat().st_mode & 0o777 == 0o700  # another student's account cannot read it


def student_environment(c, spawner):
    """What the configuration `c` gives a student's server of `spawner` beside JupyterHub's own variables."""
    return {key: value(spawner) if callable(value) else value for key, value in c.Spawner.environment.items()}


@pytest.fixture(scope="module")
def hub_config(tmp_path_factory):
    """The configuration, loaded as JupyterHub loads it, on a class folder of its own: (c, class folder)."""
    traitlets = pytest.importorskip("traitlets.config.loader", reason="needs traitlets (JupyterLab's)")
    folder = tmp_path_factory.mktemp("hub") / "class"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(hub.CLASS_ENV, str(folder))
        patch.setenv("MPLCONFIGDIR", os.environ.get("MPLCONFIGDIR", ""))  # the configuration sets it: restored
        return traitlets.PyFileConfigLoader(str(hub.CONFIG)).load_config(), folder


def test_the_class_font_cache_is_built_at_the_hubs_start(tmp_path):
    """jupyterhub_config.py sets MPLCONFIGDIR before anything imports matplotlib, so the class's cache is
    built there as the hub starts (not in the hub account's home), readable by every account."""
    script = ("from traitlets.config.loader import PyFileConfigLoader\n"
              f"PyFileConfigLoader({str(hub.CONFIG)!r}).load_config()\n")
    env = {k: v for k, v in os.environ.items() if k != "MPLCONFIGDIR"}
    env.update({hub.CLASS_ENV: str(tmp_path / "class"), "HOME": str(tmp_path / "home"),
                "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path / "config")})
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=series.ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    cache = list((tmp_path / "class" / hub.MATPLOTLIB_FOLDER).glob("fontlist-*.json"))
    assert cache and all(p.stat().st_mode & 0o004 for p in cache), done.stderr[-2000:]
    assert not (tmp_path / "cache").exists() and not (tmp_path / "config").exists()


@pytest.fixture
def font_cache(class_dir):
    """The class's matplotlib cache, as the hub's start builds it (a stand-in file), removed after the test."""
    (class_dir / hub.MATPLOTLIB_FOLDER).mkdir()
    (class_dir / hub.MATPLOTLIB_FOLDER / "fontlist-v390.json").write_text("{}")
    yield class_dir / hub.MATPLOTLIB_FOLDER
    shutil.rmtree(class_dir / hub.MATPLOTLIB_FOLDER, ignore_errors=True)


def test_with_system_users_each_student_gets_a_writable_copy_of_the_font_cache(tmp_path, monkeypatch, class_dir,
                                                                               font_cache):
    """matplotlib wants its folder writable, and a student's account cannot write the class's (the hub's):
    with system users each student's MPLCONFIGDIR is a folder of their home, given a copy of the class cache."""
    monkeypatch.setattr(hub, "_system_home", lambda name: (str(tmp_path / name), (os.getuid(), os.getgid())))
    spawner = SimpleNamespace(user=SimpleNamespace(name="ada"), log=logging.getLogger("test"))
    hub.pre_spawn_hook(spawner)
    assert hub.matplotlib_dir(spawner) == str(tmp_path / "ada" / hub.MATPLOTLIB_FOLDER)
    assert (tmp_path / "ada" / hub.MATPLOTLIB_FOLDER / "fontlist-v390.json").read_text() == "{}"
    one_account = SimpleNamespace(home_dir=str(tmp_path / "grace"), user=SimpleNamespace(name="grace"))
    assert hub.matplotlib_dir(one_account) == str(class_dir / hub.MATPLOTLIB_FOLDER)


@pytest.mark.parametrize("options", [["--JupyterHub.authenticator_class=pam"],
                                     ["--JupyterHub.spawner_class", "localprocess"]])
def test_with_system_users_an_admin_who_is_no_account_is_refused_in_one_line(options, tmp_path, installed,
                                                                            monkeypatch, capsys):
    """PAM (and LocalProcessSpawner) log the admin in as a system account: JupyterHub itself only logs a
    KeyError for one that does not exist, so the command says what to set."""
    import pwd
    monkeypatch.setattr(hub, "_closed_to_others", lambda path: None)  # this interpreter, whoever may run it: below
    monkeypatch.setenv(hub.ADMIN_ENV, "no-such-account-here")
    assert cli.main(["hub", "--dry-run", "--class-dir", str(tmp_path), *options]) == BAD_INPUT
    err = capsys.readouterr().err
    assert "'no-such-account-here', is no account on this machine" in err and f"{hub.ADMIN_ENV}=$USER" in err
    monkeypatch.setenv(hub.ADMIN_ENV, pwd.getpwuid(os.getuid()).pw_name)
    assert cli.main(["hub", "--dry-run", "--class-dir", str(tmp_path), *options]) == 0
    monkeypatch.setenv(hub.ADMIN_ENV, "no-such-account-here")  # NativeAuthenticator's names are no accounts
    assert cli.main(["hub", "--dry-run", "--class-dir", str(tmp_path)]) == 0


def test_with_system_users_an_interpreter_the_students_cannot_run_is_refused(tmp_path, installed, monkeypatch,
                                                                            capsys):
    """With system users each student's server runs the hub's Python as the student: a venv made with a Python
    under a folder closed to other accounts (pyenv's under /root) gave every student HTTP 500 at the login
    ("Permission denied"); the command says so and what to do. Without system users it is no matter."""
    import pwd
    python = tmp_path / "root" / ".pyenv" / "bin" / "python3"
    python.parent.mkdir(parents=True)
    python.write_text("")
    python.chmod(0o755)
    (tmp_path / "root").chmod(0o700)
    assert hub._closed_to_others(python) in (tmp_path / "root", *(tmp_path / "root").parents)
    assert hub._closed_to_others(shutil.which("env")) is None  # the system's own: every account runs it
    monkeypatch.setattr(sys, "executable", str(python))
    monkeypatch.setenv(hub.ADMIN_ENV, pwd.getpwuid(os.getuid()).pw_name)
    pam = ["--JupyterHub.authenticator_class=pam", "--JupyterHub.spawner_class=localprocess"]
    assert cli.main(["hub", "--dry-run", "--class-dir", str(tmp_path / "class"), *pam]) == BAD_INPUT
    err = capsys.readouterr().err
    assert f"Python, {python}, which other accounts cannot run" in err and "/usr/bin/python3 -m venv .venv" in err
    assert cli.main(["hub", "--dry-run", "--class-dir", str(tmp_path / "class")]) == 0


def test_a_students_server_has_no_formgrader(hub_config, tmp_path):
    """With nbgrader installed (the teacher's extra), a student's JupyterLab, started with what the hub gives
    it, serves nbgrader's assignment list (fetch, submit, and the courses it lists) and not its formgrader;
    the lab's plugins of the teacher's side (formgrader, course list, assignment creator, validator) are off."""
    pytest.importorskip("nbgrader", reason="needs nbgrader: pip install -e '.[nbgrader]'")
    c, folder = hub_config
    server, port = _students_lab(c, folder, "ada")
    try:
        status = {path: _status(f"http://127.0.0.1:{port}{path}", server)
                  for path in ("/formgrader", "/assignments?course_id=tiledlab", "/lab")}
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token=t", timeout=30).read().decode()
    finally:
        server.terminate()
        server.wait(30)
    assert status == {"/formgrader": 404, "/assignments?course_id=tiledlab": 200, "/lab": 200}
    config = json.loads(re.search(r'id="jupyter-config-data"[^>]*>(.*?)</script>', page, re.S)[1])
    disabled = set(config["disabledExtensions"])  # the page lists them
    assert set(hub.TEACHER_ONLY["lab"]) <= disabled and "@jupyter/nbgrader:assignment-list" not in disabled


def _students_lab(c, folder, name):
    """A student's JupyterLab (token t), started with what the hub's configuration `c` gives it, its home in
    `folder` made by the pre-spawn hook: (the process, its port)."""
    home = folder / name
    spawner = SimpleNamespace(home_dir=str(home), user=SimpleNamespace(name=name), log=logging.getLogger("test"))
    hub.pre_spawn_hook(spawner)
    port = _free_port()
    env = {**os.environ, **student_environment(c, spawner), "HOME": str(home), "JUPYTERHUB_USER": name,
           "SHELL": "/bin/bash"}  # as SimpleLocalProcessSpawner sets it
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ServerApp.token=t",
           f"--ServerApp.root_dir={home / hub.NOTEBOOK_FOLDER}", *c.Spawner.args]
    return subprocess.Popen(cmd, env=env, cwd=home, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), port


async def _in_terminal(port, command, mark):
    """Type `command` into a new terminal of the JupyterLab on `port`; the first match of `mark` (a regex)
    in what the terminal prints."""
    import tornado.websocket
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/terminals?token=t", method="POST", data=b"")
    name = json.loads(urllib.request.urlopen(request, timeout=30).read())["name"]
    ws = await tornado.websocket.websocket_connect(f"ws://127.0.0.1:{port}/terminals/websocket/{name}?token=t")
    ws.write_message(json.dumps(["stdin", command + "\r"]))
    printed = ""
    deadline = time.monotonic() + 60
    while not re.search(mark, printed) and time.monotonic() < deadline:
        message = await ws.read_message()
        kind, *text = json.loads(message) if message else ("closed", "")
        printed += "".join(text) if kind == "stdout" else ""
    ws.close()
    return re.search(mark, printed), printed


def test_a_students_terminal_keeps_the_class_environment_first_on_path(hub_config, tmp_path):
    """A terminal in a student's JupyterLab runs `nbgrader` (the guide's fetch and submit) from the class's
    environment: the hub puts its bin/ first on PATH, and the terminal's shell keeps it. A login shell (Jupyter's
    default under a hub) lost it, as Debian's /etc/profile sets PATH afresh: here a ~/.bash_profile does so."""
    import asyncio
    import concurrent.futures
    c, folder = hub_config
    (folder / "grace").mkdir(parents=True, exist_ok=True)
    (folder / "grace" / ".bash_profile").write_text("PATH=/usr/bin:/bin\n")  # read by login shells only
    server, port = _students_lab(c, folder, "grace")
    try:
        _status(f"http://127.0.0.1:{port}/api/status", server)
        with concurrent.futures.ThreadPoolExecutor(1) as thread:  # a loop of its own: Playwright's may run here
            found, printed = thread.submit(asyncio.run, _in_terminal(port, 'echo "<<${PATH%%:*}>>"',
                                                                     r"<<(/[^>]*)>>")).result()
    finally:
        server.terminate()
        server.wait(30)
    assert found and found[1] == os.path.dirname(sys.executable), printed


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _status(url, server, wait=120):
    """The HTTP status of `url` (token t) once the server answers."""
    deadline = time.monotonic() + wait
    while True:
        try:
            return urllib.request.urlopen(f"{url}{'&' if '?' in url else '?'}token=t", timeout=30).status
        except urllib.error.HTTPError as error:
            return error.code
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_with_system_users_the_hook_gives_each_made_folder_to_the_student(tmp_path, monkeypatch, font_cache):
    """As root for another account: the working copy, the settings and the font cache (where the hub built
    one) become the student's; a class without a font cache is no error."""
    owned = []
    monkeypatch.setattr(hub, "_chown_tree", lambda folder, owner: owned.append(pathlib.Path(folder).name))
    monkeypatch.setattr(hub, "_system_home", lambda name: (str(tmp_path / name), (12345, 12345)))
    hub.pre_spawn_hook(SimpleNamespace(user=SimpleNamespace(name="ada"), log=logging.getLogger("test")))
    assert owned == [hub.NOTEBOOK_FOLDER, ".jupyter", hub.MATPLOTLIB_FOLDER]
    shutil.rmtree(font_cache)
    owned.clear()
    hub.pre_spawn_hook(SimpleNamespace(user=SimpleNamespace(name="bob"), log=logging.getLogger("test")))
    assert owned == [hub.NOTEBOOK_FOLDER, ".jupyter"]
