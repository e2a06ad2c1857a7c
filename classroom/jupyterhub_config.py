# JupyterHub for a class on one machine. Start it from the clone's root with `python -m classroom hub`
# (docs/classroom.md), which sets TILEDLAB_CLASS_DIR and puts configurable-http-proxy on PATH (and
# JupyterHub, started there, finds classroom/). Any line here can be overridden on that command line,
# e.g. `python -m classroom hub --port 8000`.
import os
import sys

from classroom import hub  # imports no matplotlib

c = get_config()  # noqa: F821 (JupyterHub defines it)
CLASS = hub.class_folder()  # one home per student, the hub's own state in .hub/, the series in .series/
# One matplotlib cache for the class, built now, before anything imports matplotlib (tiledlab.notebook.lab
# does): else each student's first figure waits for its own and prints "Matplotlib is building the font
# cache" on stderr. Readable by every account; with system users each student gets a copy (hub.matplotlib_dir).
os.environ["MPLCONFIGDIR"] = str(CLASS / hub.MATPLOTLIB_FOLDER)
import matplotlib.font_manager  # noqa: E402,F401
from tiledlab.notebook import lab  # noqa: E402

STATE = CLASS / hub.STATE_FOLDER
STATE.mkdir(parents=True, exist_ok=True)
STATE.chmod(0o700)  # the password hashes and the cookie secret: the hub's account only
SERIES = hub.series_copy(CLASS)  # what the students run: the series without solutions/ or the tests

# --- who gets in -------------------------------------------------------------------------------
# NativeAuthenticator (PyPI jupyterhub-nativeauthenticator): students sign up at /hub/signup with a
# password of their own, and the teacher approves each name at /hub/authorize; no system accounts, no
# roster to type in, no password the teacher has to hand out. The admin signs up first, under the
# name below (approved at once). PAM (system users) is the alternative: see docs/classroom.md.
# The browser test replaces this with DummyAuthenticator and one shared password, on its command
# line (--JupyterHub.authenticator_class=dummy --DummyAuthenticator.password=...): never for a class.
c.JupyterHub.authenticator_class = "native"
c.Authenticator.admin_users = {hub.admin()}  # TILEDLAB_HUB_ADMIN, else teacher; not in the class report
c.Authenticator.allow_all = True  # whoever NativeAuthenticator lets in (approved) may start a server
c.NativeAuthenticator.open_signup = False  # the teacher approves each sign-up

# --- how each student's JupyterLab runs ---------------------------------------------------------
# SimpleLocalProcessSpawner: every student's server is a process of the account that started the hub,
# with its home in the class folder. It needs no system users, and gives NO isolation: all students
# share that one system user, so a student's code (or terminal) can read and change every other
# student's files, the hub's, and any file of the teacher's clone it names by its path (the key
# included). Fine for a trusted room; a class with strangers uses system users (LocalProcessSpawner,
# docs/classroom.md shows the set-up) or containers (DockerSpawner, or Zero to JupyterHub).
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(CLASS / "{username}")
c.Spawner.pre_spawn_hook = hub.pre_spawn_hook  # home/notebooks: a copy of the series' notebooks/
c.Spawner.notebook_dir = f"~/{hub.NOTEBOOK_FOLDER}"
c.Spawner.default_url = "/lab"  # JupyterLab, not the classic notebook UI
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]  # this environment's, PATH or not
c.Spawner.args = lab.QUIET + (["--allow-root"] if lab.is_root() else [])  # no news or update toasts
# JupyterHub passes almost no environment on; these, when set, choose the backend and find packages.
c.Spawner.env_keep = ["VIRTUAL_ENV", "LANG", "LC_ALL", "TILEDLAB_BACKEND", "JUPYTERHUB_SINGLEUSER_APP"]
# tiledlab from the series copy, not from the teacher's clone (whose editable install the environment
# holds): PYTHONPATH comes first. This environment's bin/ first on PATH (a terminal's `nbgrader`).
# The students' Jupyter configuration (hub.student_config): nbgrader's course, its exchange and each
# student's own id for fetch and submit, and none of nbgrader's teacher side (the formgrader).
c.Spawner.environment = {"MPLCONFIGDIR": hub.matplotlib_dir, "PYTHONPATH": str(SERIES),
                         "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]),
                         "JUPYTER_CONFIG_PATH": str(hub.student_config(CLASS))}
# A room of students logging in at once on one machine: give each server time to start.
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 90

# --- the hub itself ----------------------------------------------------------------------------
# JupyterHub's default address, http://:8000 (every interface, so students' laptops reach it); the
# command line's --ip and --port change it.
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")
# HTTPS (passwords cross the room's network): c.JupyterHub.ssl_cert = ...; c.JupyterHub.ssl_key = ...
