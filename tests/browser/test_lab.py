"""JupyterLab, started by the README's command (`python -m tiledlab lab`), in a real Chromium.

One JupyterLab server for the whole session, on a working copy in a temporary folder, with up to
$TILEDLAB_LAB_PARALLEL notebooks (default 2) running at once, each in its own page. For every
notebook: open it, Edit > Clear Outputs of All Cells (so anything on screen afterwards comes from this
run), Run > Run All Cells on the simulator, wait for the kernel to go idle, then check:
  - every code cell ran, in order (its prompt is a number, not [ ] or [*]);
  - no output is stderr or an error (JupyterLab renders both with data-mime-type
    application/vnd.jupyter.stderr; the saved file tells which is which);
  - every image in an output rendered (complete, naturalWidth > 0), at least as many as the committed
    notebook stores; no widget shows "Error displaying widget";
  - the cells nbval checks (tagged nbval-check-output) print what the committed notebook stores (a Chinese
    notebook's text where its line in tests/data/zh_outputs.txt says `chinese`; elsewhere, output where it stores some);
  - File > Save wrote the working copy, and the committed notebook did not change;
  - JupyterLab never asked about news over the notebook;
  - the notebook, opened and left alone, was not marked modified (before Run All starts).
Three notebooks run here, two at a time. One English: English rendering (the figures' English labels) and a
working copy without a LANGUAGE file; 00, the quickest to run and the one with the most figures. Two
Chinese, from the zh/ working copy: 00 renders the most figures (Chinese axis labels), 02 a widget and the
exercise checks' Chinese feedback. The others run on a kernel: nbval runs every English notebook, whose
code cells the Chinese ones share byte for byte (tests/test_edition.py), so what a Chinese Run All adds is
the language: each cell as the Chinese kernel rewrites it, checked for all eight without running them
(tests/test_zh_cells.py), and `pytest -m slow` (.ci/run) runs all eight in Chinese (tests/test_zh_reader.py).
Screenshots (top of the notebook, and the whole notebook) and a JSON summary per notebook go to
$TILEDLAB_SCREENSHOTS/lab/ (default build/screenshots/lab/).
"""
import hashlib
import json
import os
import pathlib
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# The Chinese notebooks run from the zh/ working copy that `tiledlab lab --lang zh` makes, their kernels
# started there, beside LANGUAGE: Chinese feedback and labels. The server makes both copies.
NOTEBOOKS_ZH = sorted((ROOT / "notebooks" / "zh").glob("*.ipynb"))
RUN_ALL = NOTEBOOKS + NOTEBOOKS_ZH
IN_THE_BROWSER = ([nb for nb in NOTEBOOKS if nb.stem == "00_start_here"]
                  + [nb for nb in NOTEBOOKS_ZH if nb.stem in ("00_start_here", "02_redundant_reads")])
CHECKED = "nbval-check-output"  # nbval's cell tag


def shot_name(notebook):
    """A file name for the notebook's screenshots and records: 01_naive_reads, zh-01_naive_reads."""
    return rel(notebook).removesuffix(".ipynb").replace("/", "-")


def rel(notebook):
    """The notebook's path in the working copy, as JupyterLab names it: 01_naive_reads.ipynb, zh/01_...."""
    return notebook.relative_to(ROOT / "notebooks").as_posix()
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"  # the notebook in the current tab
RUN_TIMEOUT = float(os.environ.get("TILEDLAB_LAB_TIMEOUT", "300"))  # seconds per notebook's Run All

# JupyterLab user settings for the test server only (JUPYTERLAB_SETTINGS_DIR): every cell attached to the
# DOM (the default windowing mode, contentVisibility, skips rendering off-screen cells, and "full" would
# detach them). Nothing about news: that the lab command keeps the news toast away is checked (NEWS).
LAB_SETTINGS = {"@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"}}
NEWS = "official Jupyter news"  # "Would you like to get notified about official Jupyter news?"

CODE_PROMPTS = f"""() => Array.from(document.querySelectorAll('{PANEL} .jp-CodeCell .jp-InputArea-prompt'))
                       .map(e => e.textContent.replace(/\\s+/g, ''))"""
OUTPUTS = f"""() => Array.from(document.querySelectorAll('{PANEL} .jp-Notebook .jp-Cell')).flatMap((cell, i) =>
    Array.from(cell.querySelectorAll('.jp-OutputArea-output')).map(o => ({{
        cell: i, mime: o.getAttribute('data-mime-type') || '', text: o.textContent.slice(0, 400)}})))"""
IMAGES = f"""() => Array.from(document.querySelectorAll('{PANEL} .jp-OutputArea-output img')).map(img => ({{
    complete: img.complete, width: img.naturalWidth, height: img.naturalHeight,
    cell: Array.from(document.querySelectorAll('{PANEL} .jp-Notebook .jp-Cell')).indexOf(img.closest('.jp-Cell'))}}))"""
STDERR = "application/vnd.jupyter.stderr"


def sha256(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    def __init__(self, url, token, work, proc, log):
        self.url, self.token, self.work, self.proc, self.log = url, token, work, proc, log

    def api(self, path, method="GET"):
        req = urllib.request.Request(self.url + path, method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        return json.loads(body) if body else None

    def sessions(self, name):
        return [s for s in self.api("/api/sessions") if s["path"] == name]

    def shutdown_sessions(self, name):
        for s in self.sessions(name):
            self.api(f"/api/sessions/{s['id']}", method="DELETE")

    def kernel_state(self, name):
        """The execution_state of the notebook's kernel, from the REST API (None: no session yet)."""
        found = self.sessions(name)
        return found[0]["kernel"]["execution_state"] if found else None

    def log_tail(self, n=3000):
        return pathlib.Path(self.log).read_text(errors="replace")[-n:]


@pytest.fixture(scope="session")
def committed_hashes():
    return {rel(nb): sha256(nb) for nb in RUN_ALL}


@pytest.fixture(scope="session")
def lab(browser, tmp_path_factory, committed_hashes):
    """`python -m tiledlab lab` on a working copy in a temporary folder, as root or not."""
    tmp = tmp_path_factory.mktemp("lab")
    settings = tmp / "settings"
    for rel, value in LAB_SETTINGS.items():
        path = settings / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    env = dict(os.environ,
               TILEDLAB_BACKEND=os.environ.get("TILEDLAB_BACKEND", "simulator"),
               JUPYTERLAB_SETTINGS_DIR=str(settings),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
               JUPYTER_RUNTIME_DIR=str(tmp / "runtime"))
    port, token, work = free_port(), secrets.token_hex(16), tmp / "work"
    cmd = [sys.executable, "-m", "tiledlab", "lab", "--dest", str(work),
           "--no-browser", f"--port={port}", "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1",
           f"--IdentityProvider.token={token}",
           # nothing from the internet: no PyPI extension manager (news and updates: the lab command's)
           "--LabApp.extension_manager=readonly"]
    log = tmp / "lab.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    server = Lab(f"http://127.0.0.1:{port}", token, work, proc, log)
    deadline = time.monotonic() + 90
    while True:
        if proc.poll() is not None:
            pytest.fail(f"`python -m tiledlab lab` exited with {proc.returncode}:\n{server.log_tail()}")
        try:
            server.api("/api/status")
            break
        except (urllib.error.URLError, ConnectionError, OSError):
            if time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"JupyterLab did not answer within 90 s:\n{server.log_tail()}")
            time.sleep(0.5)
    if NOTEBOOKS_ZH:  # what `tiledlab lab --lang zh` makes beside it (tiledlab.notebook.lab.start)
        from tiledlab.notebook import lab as lab_command
        zh = lab_command.working_copy(*lab_command.edition(ROOT / "notebooks", work, "zh"), say=lambda *a: None)
        (zh / "LANGUAGE").write_text("zh\n")
    try:
        yield server
    finally:
        try:
            server.api("/api/shutdown", method="POST")  # stops its kernels too
            proc.wait(timeout=20)
        except Exception:
            pass
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def test_lab_command_made_a_git_ignored_working_copy(lab):
    names = sorted(p.name for p in lab.work.glob("*.ipynb"))
    assert names == [nb.name for nb in NOTEBOOKS]
    assert (lab.work / ".gitignore").read_text().splitlines()[-1] == "*"


def menu(page, top, command):
    """Click a menu-bar entry, then the item that runs `command` (as a student would)."""
    page.get_by_role("menuitem", name=top, exact=True).click()
    page.locator(f'.lm-Menu-item[data-command="{command}"]').click()


def wait_until(predicate, timeout, what, interval=0.5):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def screenshot_whole_notebook(page, path):
    """The notebook scrolls inside its panel, so a full-page screenshot shows one screen: make the
    window as tall as the notebook (Chromium's limit is about 16k pixels), shoot, put it back."""
    height = page.evaluate(f"() => document.querySelector('{PANEL} .jp-WindowedPanel-outer').scrollHeight")
    page.set_viewport_size({"width": 1400, "height": min(int(height) + 160, 16000)})
    page.wait_for_timeout(500)
    page.screenshot(path=str(path))
    page.set_viewport_size({"width": 1400, "height": 900})


class Run:
    """One notebook in its own page: opened, cleared and started by __init__, checked by finish()."""

    def __init__(self, lab, page, notebook):
        self.lab, self.page, self.notebook, self.name, self.t = lab, page, notebook, rel(notebook), {}
        lab.shutdown_sessions(self.name)  # a fresh kernel, whatever ran before
        # Not dirty on open (checked below): JupyterLab normalizes nothing on load (kernelspec display
        # name, cell ids, nbformat minor, widget state), and the working copy carries this Python's
        # version in language_info (lab.as_copied), which JupyterLab replaces with the kernel's.
        self.start = time.monotonic()
        # A workspace of its own, and ?reset: no tabs restored from an earlier run.
        workspace = self.name.removesuffix(".ipynb").replace("/", "-")
        page.goto(f"{lab.url}/lab/workspaces/{workspace}/tree/{self.name}?reset&token={lab.token}")
        page.locator(f"{PANEL} .jp-Cell").first.wait_for(timeout=90_000)
        self.t["open_s"] = time.monotonic() - self.start
        wait_until(lambda: lab.kernel_state(self.name) == "idle", 90, f"the kernel of {self.name} to start")
        page.locator(f'{PANEL} .jp-Notebook-ExecutionIndicator[data-status="idle"]').wait_for(timeout=30_000)
        self.t["kernel_ready_s"] = time.monotonic() - self.start
        page.wait_for_timeout(2000)  # anything JupyterLab changes after rendering shows by now
        self.dirty_on_open = bool(page.locator(DIRTY_TAB).count())

        # Clear the stored H200 outputs, so that every output checked later comes from this run.
        menu(page, "Edit", "editmenu:clear-all")
        n_code = len(page.evaluate(CODE_PROMPTS))
        wait_until(lambda: page.evaluate(CODE_PROMPTS) == ["[]:"] * n_code, 10, "the outputs to clear")

        self.run_start = time.monotonic()
        menu(page, "Run", "runmenu:run-all")
        # Started: a cell shows [*] or a number.
        wait_until(lambda: any(p != "[]:" for p in page.evaluate(CODE_PROMPTS)), 30, "Run All to start")

    def finished(self):
        """No cell queued or running ([*]) and the REST API says the kernel is idle. Between two cells
        the kernel is briefly idle, but the queued cells still show [*]. A failing cell stops Run All:
        the cells after it go back to [ ]."""
        return "[*]:" not in self.page.evaluate(CODE_PROMPTS) and self.lab.kernel_state(self.name) == "idle"

    def finish(self, shots):
        page, name = self.page, self.name
        try:
            wait_until(lambda: self.finished() and (time.sleep(1) or self.finished()), RUN_TIMEOUT,
                       f"Run All of {name} to finish")
            self.t["run_all_s"] = time.monotonic() - self.run_start
            r = {"prompts": page.evaluate(CODE_PROMPTS), "outputs": page.evaluate(OUTPUTS),
                 "dirty_on_open": self.dirty_on_open, "news_toast": page.get_by_text(NEWS).count()}
            # Images: decoded and non-empty (a broken or still-loading <img> has naturalWidth 0).
            try:
                wait_until(lambda: all(i["complete"] for i in page.evaluate(IMAGES)), 15, "images to load")
            except AssertionError:
                pass  # reported by the test, image by image
            r["images"] = page.evaluate(IMAGES)

            page.evaluate(f"() => document.querySelector('{PANEL} .jp-WindowedPanel-outer').scrollTo(0, 0)")
            page.wait_for_timeout(300)
            page.screenshot(path=str(shots / f"{shot_name(self.notebook)}-top.png"))
            screenshot_whole_notebook(page, shots / f"{shot_name(self.notebook)}-full.png")

            # File > Save Notebook: it must land in the working copy, never on the committed notebook.
            # Jupyter's "atomic" save writes the file in place (keeping a backup), so a reader can
            # catch it half-written: wait until the tab is clean and the file parses, and is new.
            path, saved_before = self.lab.work / name, sha256(self.lab.work / name)
            menu(page, "File", "docmanager:save")

            def saved_file():
                if page.locator(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty").count():
                    return None
                try:
                    data = path.read_bytes()
                    return json.loads(data) if hashlib.sha256(data).hexdigest() != saved_before else None
                except (OSError, ValueError):
                    return None

            saved = wait_until(saved_file, 30, "File > Save to write the working copy")
            r["checked"] = checked_outputs(saved)
            r["saved_kinds"] = [(i, o["output_type"] if o["output_type"] != "stream" else o["name"])
                                for i, c in enumerate(saved["cells"]) for o in c.get("outputs", [])]
            self.t["total_s"] = time.monotonic() - self.start
            r["times_s"] = {k: round(v, 1) for k, v in self.t.items()}
            r["log"] = page.log.as_dict()
            return r
        except Exception:
            try:  # what the page showed when it went wrong
                page.screenshot(path=str(shots / f"{shot_name(self.notebook)}-failed.png"))
            except Exception:
                pass
            raise
        finally:
            self.lab.shutdown_sessions(name)
            page.context.close()


class Runner:
    """Keeps up to `parallel` notebooks running at once in the one JupyterLab server, each in its own
    page: the test for a notebook starts it (and the next ones, to fill the pipeline) if needed, then
    waits for its own. The simulator is CPU-bound, one core per kernel: 2 suits a 2-core machine."""

    def __init__(self, lab, open_page, shots, order, parallel):
        self.lab, self.open_page, self.shots, self.parallel = lab, open_page, shots, max(1, parallel)
        self.pending, self.active = list(order), {}

    def _start(self, notebook):
        self.pending.remove(notebook)
        page = self.open_page()
        try:
            self.active[rel(notebook)] = Run(self.lab, page, notebook)
        except Exception as e:  # reported by this notebook's own test, not by the one that started it
            try:
                page.screenshot(path=str(self.shots / f"{shot_name(notebook)}-failed.png"))
            except Exception:
                pass
            page.context.close()
            self.active[rel(notebook)] = e

    def result(self, notebook):
        if rel(notebook) not in self.active:
            self._start(notebook)
        while len(self.active) < self.parallel and self.pending:
            self._start(self.pending[0])
        run = self.active.pop(rel(notebook))
        if isinstance(run, Exception):
            raise run
        return run.finish(self.shots)

    def close(self):
        for run in self.active.values():
            if isinstance(run, Run):
                self.lab.shutdown_sessions(run.name)
                run.page.context.close()


@pytest.fixture(scope="module")
def runner(request, lab, open_page, screenshots):
    shots = screenshots / "lab"
    shots.mkdir(parents=True, exist_ok=True)
    # Only this file's notebooks whose tests were selected (-k), in the order they will run. Not the
    # session's: every pytest-xdist worker collects every file, so a session-wide list would make a worker
    # start, to fill its pipeline, notebooks of a module that runs on the other (a whole simulator Run All
    # that no test waits for), as it did while the Chinese Run Alls had a file of their own.
    order = [item.callspec.params["notebook"] for item in request.session.items
             if getattr(item, "originalname", None) == "test_run_all" and item.module is request.module]
    r = Runner(lab, open_page, shots, order, int(os.environ.get("TILEDLAB_LAB_PARALLEL", "2")))
    yield r
    r.close()


def checked_outputs(nb):
    """{cell index: what it printed to stdout} of the cells nbval compares with their stored outputs; a cell
    the committed run has not reached (no execution count: changed since the last GPU run) stores nothing to
    compare, as for nbval."""
    text = lambda o: "".join(o["text"]) if isinstance(o["text"], list) else o["text"]
    return {i: "".join(text(o) for o in c.get("outputs", []) if o.get("name") == "stdout")
            for i, c in enumerate(nb["cells"])
            if c["cell_type"] == "code" and CHECKED in c["metadata"].get("tags", [])
            and c.get("execution_count") is not None}


def test_the_chosen_notebooks_exist():
    assert [rel(nb) for nb in IN_THE_BROWSER] == ["00_start_here.ipynb", "zh/00_start_here.ipynb",
                                                  "zh/02_redundant_reads.ipynb"]


@pytest.mark.parametrize("notebook", IN_THE_BROWSER, ids=[shot_name(nb) for nb in IN_THE_BROWSER])
def test_run_all(runner, notebook, record, committed_hashes, zh_outputs_chinese):
    check_run_all(runner, notebook, record, committed_hashes, zh_outputs_chinese)


def not_run_cells(prompts):
    """Code cells (counted from 0) whose prompt shows no execution count after Run All."""
    return [i for i, p in enumerate(prompts) if not p.strip("[]:").isdigit()]


def prompt_problems(prompts):
    """What the code cells' prompts say went wrong in a Run All: cells that did not run, or ran out of order."""
    problems, not_run = [], not_run_cells(prompts)
    if not_run:
        problems.append(f"code cells {not_run} (of {len(prompts)}, counted from 0) did not run: {prompts}")
    counts = [int(p.strip("[]:")) for p in prompts if p.strip("[]:").isdigit()]
    if counts != sorted(counts):
        problems.append(f"cells ran out of order: {prompts}")
    return problems


def check_run_all(runner, notebook, record, committed_hashes, zh_outputs_chinese):
    """Run All of `notebook` in the lab, then: no error or stderr output, every cell ran in order, the
    cells nbval checks print what the committed notebook stores, the committed notebook's figures
    rendered, no widget failed, not modified on open, the committed file untouched. A Chinese notebook's
    printed text is compared only once its stored outputs come from a Chinese run
    (tests/data/zh_outputs.txt, as nbval's check in tests/conftest.py); until then each of those cells
    must print something exactly where the stored (English) run did."""
    name = rel(notebook)
    r = runner.result(notebook)
    committed = json.loads(notebook.read_text())
    committed_images = sum("image/png" in o.get("data", {}) or "image/jpeg" in o.get("data", {})
                           for c in committed["cells"] for o in c.get("outputs", []))
    outputs, prompts, images = r["outputs"], r["prompts"], r["images"]
    record(f"lab/{shot_name(notebook)}", {
        "notebook": name, "backend": os.environ.get("TILEDLAB_BACKEND", "simulator"),
        "parallel": runner.parallel, "times_s": r["times_s"], "prompts": prompts,
        "outputs_by_mime": {m: sum(o["mime"] == m for o in outputs) for m in sorted({o["mime"] for o in outputs})},
        "images": images, "committed_images": committed_images, **r["log"]})

    problems = ["marked modified right after opening (before Run All)"] if r["dirty_on_open"] else []
    stored = checked_outputs(committed)
    if notebook.parent.name != "zh" or notebook.stem in zh_outputs_chinese:
        problems += [f"cell {i}: prints {r['checked'].get(i)!r}, the committed notebook {want!r}"
                     for i, want in stored.items() if r["checked"].get(i) != want]
    else:
        problems += [f"cell {i}: prints {r['checked'].get(i)!r}, the committed notebook {want!r}"
                     for i, want in stored.items() if bool(r["checked"].get(i)) != bool(want)]
    if r["news_toast"]:
        problems.append(f"JupyterLab asked about news ({NEWS!r}) over the notebook")
    errors = [i for i, kind in r["saved_kinds"] if kind == "error"]
    for o in outputs:  # JupyterLab renders stderr and errors alike; the saved file tells them apart
        if o["mime"] == STDERR:
            kind = "error" if o["cell"] in errors else "stderr"
            problems.append(f"cell {o['cell']} (of all cells, from 0): {kind} output: {o['text'][:300]!r}")
    missed = [f"cell {i}: {k}" for i, k in r["saved_kinds"] if k in ("error", "stderr")]
    if missed and not any(o["mime"] == STDERR for o in outputs):
        problems.append(f"the saved notebook has error/stderr outputs the page did not show: {missed}")
    not_run = not_run_cells(prompts)
    problems += prompt_problems(prompts)
    problems += [f"cell {i['cell']}: image did not render: {i}" for i in images
                 if not (i["complete"] and i["width"] > 0)]
    # At least the committed notebook's figures (a run may show more: a widget's frames, or cells the
    # committed run has not reached yet).
    if not not_run and len(images) < committed_images:
        problems.append(f"{len(images)} images rendered, the committed notebook has {committed_images}")
    problems += [f"cell {o['cell']}: a widget failed: {o['text'][:300]!r}" for o in outputs
                 if "Error displaying widget" in o["text"] or "Failed to load model class" in o["text"]]
    if sha256(notebook) != committed_hashes[name]:
        problems.append("the committed notebook changed on disk")
    assert not problems, f"{name} after Run All:\n" + "\n".join(problems)


def test_committed_notebooks_untouched(lab, committed_hashes):
    """After every Run All and Save: the committed notebooks (with their H200 outputs) are as they were."""
    assert {rel(nb): sha256(nb) for nb in RUN_ALL} == committed_hashes


DIRTY_TAB = ".lm-TabBar-tab.jp-mod-current.jp-mod-dirty"
