"""The class server (`python -m classroom hub`, classroom/jupyterhub_config.py) in a real Chromium.

The hub starts on free ports with the configuration a class gets, NativeAuthenticator included, as the
docs install it (the `hub` extra). The teacher signs up (approved at once, as the admin), two students
sign up and are refused until the teacher approves them at /hub/authorize; then both log in, each in a
browser context of its own, and Run All the same notebook at once:
  - both runs finish: every code cell ran, in order, with no error or stderr output, and File > Save
    wrote each student's own working copy (the committed notebook is unchanged);
  - the working copies are separate: a file one student makes lies in their folder only and the other
    student's JupyterLab does not list it; neither home holds solutions/ or any file of it;
  - a cell a student adds finds no key beside the package their server runs
    (`Path(tiledlab.__file__).parents[1] / "solutions" / "key.py"`): it runs the class's series copy.
Skips (fails under TILEDLAB_REQUIRE_BROWSER=1) without JupyterHub or configurable-http-proxy.
Screenshots and a JSON summary go to $TILEDLAB_SCREENSHOTS/hub/.
"""
import hashlib
import importlib.util
import json
import os
import pathlib
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from classroom import hub

from .conftest import ROOT, _missing
from .test_lab import CODE_PROMPTS, NEWS, OUTPUTS, PANEL, STDERR, free_port, menu, prompt_problems, sha256, wait_until

NOTEBOOK = ROOT / "notebooks" / "00_start_here.ipynb"
STUDENTS = ("ada", "grace")
SOLUTIONS = {p.name for p in (ROOT / "solutions").iterdir() if p.is_file()}
IDLE = f'{PANEL} .jp-Notebook-ExecutionIndicator[data-status="idle"]'
TEACHER = "teacher"  # the configuration's admin (TILEDLAB_HUB_ADMIN unset)
NOT_YET_APPROVED = "has not been authorized by an administrator yet"  # NativeAuthenticator's login error
KEY_PROBE = ("from pathlib import Path; import tiledlab\n"
             "key = Path(tiledlab.__file__).parents[1] / 'solutions' / 'key.py'\n"
             "print('key found:', key.exists(), '| tiledlab from:', Path(tiledlab.__file__).parents[1].name)")
LISTING = "() => Array.from(document.querySelectorAll('.jp-DirListing-itemName')).map(e => e.textContent.trim())"


def students_servers(hub_port):
    """The pids of the single-user servers that the hub on `hub_port` started (from /proc, on Linux)."""
    mark = f"JUPYTERHUB_API_URL=http://127.0.0.1:{hub_port}/".encode()
    pids = []
    for environ in pathlib.Path("/proc").glob("[0-9]*/environ"):
        try:
            server = b"jupyterhub.singleuser" in (environ.parent / "cmdline").read_bytes()  # not its kernels
            if server and any(var.startswith(mark) for var in environ.read_bytes().split(b"\0")):
                pids.append(int(environ.parent.name))
        except OSError:  # gone, or not ours
            pass
    return pids


@pytest.fixture(scope="module")
def class_server(browser, tmp_path_factory, screenshots):
    """The hub, as `python -m classroom hub` starts it, on free ports (its own configuration otherwise)."""
    if importlib.util.find_spec("jupyterhub") is None or importlib.util.find_spec("nativeauthenticator") is None:
        _missing("the class-server test needs JupyterHub: pip install -e '.[hub]'")
    if hub.find_proxy() is None:
        _missing(f"the class-server test needs configurable-http-proxy: {hub.CHP_INSTALL}")
    tmp = tmp_path_factory.mktemp("hub")
    port, hub_port = free_port(), free_port()
    cmd = [sys.executable, "-m", "classroom", "hub", "--class-dir", str(tmp / "class"),
           *(["--allow-root"] if os.geteuid() == 0 else []),
           "--ip=127.0.0.1", f"--port={port}", f"--JupyterHub.hub_port={hub_port}",
           f"--ConfigurableHTTPProxy.api_url=http://127.0.0.1:{free_port()}"]
    env = dict(os.environ, TILEDLAB_BACKEND=os.environ.get("TILEDLAB_BACKEND", "simulator"))
    env.pop("TILEDLAB_HUB_ADMIN", None)
    log = tmp / "hub.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    url = f"http://127.0.0.1:{port}"

    def log_tail():
        return log.read_text(errors="replace")[-4000:]

    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            pytest.fail(f"`python -m classroom hub` exited with {proc.returncode}:\n{log_tail()}")
        try:
            urllib.request.urlopen(f"{url}/hub/health", timeout=5).close()
            break
        except (urllib.error.URLError, ConnectionError, OSError):
            if time.monotonic() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                pytest.fail(f"JupyterHub did not answer within 60 s:\n{log_tail()}")
            time.sleep(0.3)
    try:
        yield {"url": url, "class": tmp / "class", "log_tail": log_tail, "hub_port": hub_port}
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the hub stops the students' servers and the proxy
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            for pid in students_servers(hub_port):  # each in a session of its own, out of the hub's group
                os.kill(pid, signal.SIGKILL)
        (screenshots / "hub").mkdir(parents=True, exist_ok=True)
        (screenshots / "hub" / "hub.log").write_text(log.read_text(errors="replace"))


def sign_up(page, url, name, password):
    """NativeAuthenticator's sign-up form at /hub/signup; what its alert says."""
    page.goto(f"{url}/hub/signup")
    page.fill("#username_input", name)
    page.fill("#password_input", password)
    page.fill("#password_confirmation_input", password)
    page.click("#signup_submit")
    return page.locator(".alert").inner_text(timeout=30_000)


def log_in(page, url, name, password, then="/hub/home"):
    """The login form at /hub/login, going on to `then`."""
    page.goto(f"{url}/hub/login?" + urllib.parse.urlencode({"next": then}))
    page.fill("#username_input", name)
    page.fill("#password_input", password)
    page.click("#login_submit")


@pytest.fixture(scope="module")
def accounts(class_server, open_page, screenshots):
    """The teacher and the students, signed up through NativeAuthenticator's pages and approved by the
    teacher, as a class starts; name -> password, and what the pages said on the way ("seen")."""
    url, shots = class_server["url"], screenshots / "hub"
    shots.mkdir(parents=True, exist_ok=True)
    passwords = {name: secrets.token_urlsafe(12) for name in (TEACHER, *STUDENTS)}
    seen = {"signup": {}, "before_approval": {}}
    pages = {name: open_page() for name in passwords}
    try:
        for name, password in passwords.items():
            seen["signup"][name] = sign_up(pages[name], url, name, password)
        for name in STUDENTS:  # not approved yet: refused, with the reason
            log_in(pages[name], url, name, passwords[name])
            seen["before_approval"][name] = pages[name].locator(".login_error").inner_text(timeout=30_000)
        teacher = pages[TEACHER]
        log_in(teacher, url, TEACHER, passwords[TEACHER], then="/hub/authorize")
        teacher.wait_for_url("**/hub/authorize", timeout=60_000)
        for name in STUDENTS:
            row = teacher.locator("tr", has=teacher.locator("td", has_text=name))
            row.get_by_role("button", name="Authorize", exact=True).click()
            teacher.locator("tr", has=teacher.locator("td", has_text=name)).get_by_role(
                "button", name="Unauthorize", exact=True).wait_for(timeout=30_000)
        teacher.screenshot(path=str(shots / "authorize.png"))
        seen["problems"] = {name: pg.log.problems() for name, pg in pages.items()}
    except Exception as error:
        raise AssertionError(f"{error}\nthe hub's log:\n{class_server['log_tail']()}") from error
    finally:
        for pg in pages.values():
            pg.context.close()
    return {"passwords": passwords, "seen": seen}


def test_students_sign_up_and_get_in_once_the_teacher_approves(accounts):
    seen = accounts["seen"]
    assert "successful" in seen["signup"][TEACHER], seen  # the admin is approved at once
    assert all("sent to the admin" in seen["signup"][name] for name in STUDENTS), seen
    assert all(NOT_YET_APPROVED in seen["before_approval"][name] for name in STUDENTS), seen
    assert seen["problems"] == {name: [] for name in (TEACHER, *STUDENTS)}, seen


class Student:
    """One student in a browser context of their own: logged in, their notebook open and running."""

    def __init__(self, server, open_page, name, password):
        self.server, self.name, self.page = server, name, open_page()
        self.home = hub.student_home(server["class"], name)
        self.copy = self.home / hub.NOTEBOOK_FOLDER / NOTEBOOK.name
        # After the login, start this student's server (JupyterHub 5 no longer does so by itself for a
        # /user/ URL), then open the notebook in it.
        notebook = f"/user/{name}/lab/tree/{NOTEBOOK.name}"
        spawn = f"/hub/spawn/{name}?" + urllib.parse.urlencode({"next": notebook})
        log_in(self.page, server["url"], name, password, then=spawn)  # the hub starts the server, opens the notebook

    def kernel_state(self):
        """The execution_state of the notebook's kernel, from this student's server (None: none yet)."""
        r = self.page.context.request.get(f"{self.server['url']}/user/{self.name}/api/sessions")
        found = [s for s in r.json() if s["path"] == NOTEBOOK.name] if r.ok else []
        return found[0]["kernel"]["execution_state"] if found else None

    def wait_ready(self):
        self.page.locator(f"{PANEL} .jp-Cell").first.wait_for(timeout=90_000)
        wait_until(lambda: self.kernel_state() == "idle", 90, f"{self.name}'s kernel to start")
        self.page.locator(IDLE).wait_for(timeout=30_000)

    def run_all(self):
        """Clear the stored H200 outputs (so what is checked comes from this run), then Run All."""
        menu(self.page, "Edit", "editmenu:clear-all")
        n = len(self.page.evaluate(CODE_PROMPTS))
        wait_until(lambda: self.page.evaluate(CODE_PROMPTS) == ["[]:"] * n, 10, "the outputs to clear")
        self.saved_before = sha256(self.copy)
        menu(self.page, "Run", "runmenu:run-all")
        wait_until(lambda: any(p != "[]:" for p in self.page.evaluate(CODE_PROMPTS)), 30, "Run All to start")

    def finished(self):
        return "[*]:" not in self.page.evaluate(CODE_PROMPTS) and self.kernel_state() == "idle"

    def save(self):
        """File > Save; the saved working copy, once written and parsed."""
        menu(self.page, "File", "docmanager:save")

        def saved():
            if self.page.locator(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty").count():
                return None
            try:
                data = self.copy.read_bytes()
                return json.loads(data) if hashlib.sha256(data).hexdigest() != self.saved_before else None
            except (OSError, ValueError):
                return None
        return wait_until(saved, 30, f"File > Save to write {self.copy}")

    def new_text_file(self, text):
        """File > New > Text File, type `text`, save as <student>-notes.txt: a file of this student's own."""
        self.page.get_by_role("menuitem", name="File", exact=True).click()
        self.page.locator(".lm-Menu-item", has_text="New").first.hover()
        self.page.get_by_role("menuitem", name="Text File", exact=True).click()
        editor = self.page.locator(".jp-FileEditor:not(.lm-mod-hidden) .cm-content")
        editor.click()
        self.page.keyboard.type(text)
        self.page.keyboard.press("Control+s")  # the first save asks for a name
        made = self.home / hub.NOTEBOOK_FOLDER / f"{self.name}-notes.txt"
        self.page.locator(".jp-Dialog input[type=text]").fill(made.name)
        self.page.get_by_role("button", name="Rename and Save").click()
        wait_until(lambda: made.exists() and made.read_text() == text, 30, f"{made} to be saved")
        return made

    def run_new_cell(self, code):
        """A cell of the student's own under the notebook's last one, run (Shift+Enter): its output."""
        self.page.locator(f"{PANEL} .jp-Cell").last.locator(".jp-InputArea-prompt").click()
        self.page.keyboard.press("b")  # command mode: a new cell below, its editor focused
        self.page.keyboard.press("Enter")
        self.page.keyboard.insert_text(code)
        self.page.keyboard.press("Shift+Enter")
        output = self.page.locator(f"{PANEL} .jp-CodeCell", has_text="key.exists()").locator(".jp-OutputArea-output")
        output.first.wait_for(timeout=60_000)
        return output.first.inner_text()

    def listing(self):
        """The names in this student's JupyterLab file browser, freshly loaded."""
        self.page.goto(f"{self.server['url']}/user/{self.name}/lab/tree?reset")
        self.page.locator(".jp-DirListing-itemName", has_text=NOTEBOOK.name).wait_for(timeout=60_000)
        return set(self.page.evaluate(LISTING))


def _problems(student, saved):
    prompts, outputs = student.page.evaluate(CODE_PROMPTS), student.page.evaluate(OUTPUTS)
    problems = [f"cell {o['cell']}: stderr or error output: {o['text'][:300]!r}" for o in outputs
                if o["mime"] == STDERR]
    problems += [f"cell {i}: {o['output_type']} {o.get('name', '')} in the saved notebook"
                 for i, c in enumerate(saved["cells"]) for o in c.get("outputs", [])
                 if o["output_type"] == "error" or o.get("name") == "stderr"]
    problems += prompt_problems(prompts)
    return [f"{student.name}: {p}" for p in problems]


def test_two_students_run_a_notebook_at_once_each_in_their_own_copy(class_server, accounts, open_page,
                                                                     screenshots, record):
    shots = screenshots / "hub"
    shots.mkdir(parents=True, exist_ok=True)
    committed = sha256(NOTEBOOK)
    start = time.monotonic()
    students = [Student(class_server, open_page, name, accounts["passwords"][name]) for name in STUDENTS]
    times = {}
    try:
        for s in students:
            s.wait_ready()
        times["ready_s"] = time.monotonic() - start
        servers = students_servers(class_server["hub_port"])  # one JupyterLab server per student
        for s in students:
            s.run_all()
        run_start = time.monotonic()
        wait_until(lambda: all(s.finished() for s in students) and (time.sleep(1) or
                   all(s.finished() for s in students)), 300, "both Run Alls to finish")
        times["run_all_s"] = time.monotonic() - run_start
        problems = []
        for s in students:
            s.page.screenshot(path=str(shots / f"{s.name}.png"))
            problems += _problems(s, s.save())
            if s.page.get_by_text(NEWS).count():
                problems.append(f"{s.name}: JupyterLab asked about news ({NEWS!r})")

        # Separate working copies: what the first student makes, the second does not see.
        first, second = students
        made = first.new_text_file(f"written by {first.name}")
        seen_by_second = second.listing()
        first.page.goto(f"{class_server['url']}/user/{first.name}/lab/workspaces/probe/tree/{NOTEBOOK.name}?reset")
        first.wait_ready()
        probed = first.run_new_cell(KEY_PROBE)
        times["total_s"] = time.monotonic() - start
        record("hub/two_students", {"notebook": NOTEBOOK.name, "students": STUDENTS, "key_probe": probed,
                                    "times_s": {k: round(v, 1) for k, v in times.items()},
                                    "logs": {s.name: s.page.log.as_dict() for s in students}})
    except Exception as error:
        for s in students:
            try:
                s.page.screenshot(path=str(shots / f"{s.name}-failed.png"))
            except Exception:
                pass
        raise AssertionError(f"{error}\nthe hub's log:\n{class_server['log_tail']()}") from error
    finally:
        for s in students:
            s.page.context.close()

    problems += [f"{s.name}'s page: {p}" for s in students for p in s.page.log.problems()]
    assert not problems, "after Run All:\n" + "\n".join(problems)
    assert len(servers) == len(STUDENTS), f"single-user servers: {servers}"
    assert made.parent == first.home / hub.NOTEBOOK_FOLDER
    assert not (second.home / hub.NOTEBOOK_FOLDER / made.name).exists()
    assert made.name not in seen_by_second and NOTEBOOK.name in seen_by_second
    for s in students:
        files = {p.name for p in s.home.rglob("*") if ".ipynb_checkpoints" not in p.parts}
        assert "solutions" not in files and not SOLUTIONS & files, f"{s.name}'s home holds the key: {files}"
        copied = {p.name for p in (s.home / hub.NOTEBOOK_FOLDER).glob("*.ipynb")}
        assert copied == {nb.name for nb in (ROOT / "notebooks").glob("*.ipynb")}
    assert sha256(NOTEBOOK) == committed, "the committed notebook changed"
    assert f"key found: False | tiledlab from: {hub.SERIES_FOLDER}" in probed, probed


# class-report's test (class_report.py), collected here, after the test above: on the same hub and the same
# students' servers (one hub started for both, as a class goes on from notebook 0 to notebook 1).
from .class_report import test_two_students_checks_reach_the_class_report  # noqa: E402,F401
