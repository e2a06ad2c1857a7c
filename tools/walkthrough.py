"""A scripted walkthrough of the series in a real Chromium, cell by cell: the modelled student minutes.

    python -m tools.walkthrough [--out tiledlab/data/simulator/walkthrough.csv] [NOTEBOOK...]

Starts `python -m tiledlab lab` on a working copy in a temporary folder (simulator unless
TILEDLAB_BACKEND says otherwise), opens each notebook in Chromium (Playwright, as tests/browser do),
clears its outputs, then presses Shift+Enter on every cell in turn, as a student does, timing each code
cell from the key press until its prompt shows a number and the kernel is idle. Nobody reads here: the
reading time of each part is modelled from its word count (plans.READING_WPM, with its source), and
each exercise gets a stated allowance (plans.ALLOWANCE_MIN). The rows, one per part of a notebook,
with how they were made, replace the walked notebooks' rows in --out (the others' rows are kept, the file
in notebook order); then the guide's tables are rewritten from them (plans.update_guide). Takes a few
minutes on two cores; not part of the test run.
"""
import argparse
import os
import pathlib
import platform
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import nbformat
import pandas as pd

from tiledlab.data import stamp, write_rows
from tools import plans
from tools.chromium import CHROMIUM_ARGS, chromium_executable

ROOT = pathlib.Path(__file__).resolve().parents[1]

PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
CELLS = f"{PANEL} .jp-Notebook .jp-Cell"
PROMPT = """(i) => { const c = document.querySelectorAll('%s')[i];
                    const p = c && c.querySelector('.jp-InputArea-prompt');
                    return p ? p.textContent.replace(/\\s+/g, '') : null; }""" % CELLS
TIMEOUT = float(os.environ.get("TILEDLAB_WALKTHROUGH_TIMEOUT", "600"))  # seconds for one cell
SETTINGS = {"@jupyterlab/notebook-extension/tracker.jupyterlab-settings": '{"windowingMode": "none"}'}


def start_lab(tmp):
    for rel, text in SETTINGS.items():
        (tmp / "settings" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / "settings" / f"{rel}").write_text(text)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(16)
    env = dict(os.environ, TILEDLAB_BACKEND=os.environ.get("TILEDLAB_BACKEND", "simulator"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"), JUPYTERLAB_WORKSPACES_DIR=str(tmp / "ws"),
               JUPYTER_RUNTIME_DIR=str(tmp / "runtime"))
    cmd = [sys.executable, "-m", "tiledlab", "lab", "--dest", str(tmp / "work"), "--no-browser", f"--port={port}",
           "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
           "--LabApp.extension_manager=readonly"]  # news and update checks: off in the lab command
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=open(tmp / "lab.log", "w"), stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    for _ in range(180):
        try:
            urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5)
            return proc, url, token
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"JupyterLab did not start: {(tmp / 'lab.log').read_text()[-2000:]}")


def wait(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout} s for {what}")
        time.sleep(0.05)


def walk(page, url, token, notebook):
    """Open `notebook`, clear it, Shift+Enter through every cell; {code cell index: seconds}."""
    page.goto(f"{url}/lab/workspaces/{notebook.stem}/tree/{notebook.name}?reset&token={token}")
    page.locator(f"{CELLS}").first.wait_for(timeout=90_000)
    page.locator(f'{PANEL} .jp-Notebook-ExecutionIndicator[data-status="idle"]').wait_for(timeout=90_000)
    page.get_by_role("menuitem", name="Edit", exact=True).click()
    page.locator('.lm-Menu-item[data-command="editmenu:clear-all"]').click()
    kinds = [cell.cell_type for cell in nbformat.read(notebook, as_version=4).cells]
    n = len(kinds)
    wait(lambda: page.locator(CELLS).count() == n, 60, f"the {n} cells of {notebook.name}")
    page.locator(CELLS).first.locator(".jp-Cell-inputWrapper").click()
    page.keyboard.press("Escape")  # command mode: Shift+Enter runs and selects the next cell
    seconds = {}
    print(f"{notebook.name}: {n} cells", flush=True)
    for i in range(n):
        code = kinds[i] == "code"
        start = time.monotonic()
        page.keyboard.press("Shift+Enter")
        if code:
            def done():  # a folded input (jupyter.source_hidden: Colab's install cell) shows no prompt to read
                prompt = page.evaluate(PROMPT, i)
                return (prompt is None or prompt.strip("[]:").isdigit()) and page.locator(
                    f'{PANEL} .jp-Notebook-ExecutionIndicator[data-status="idle"]').count() > 0
            try:
                wait(done, TIMEOUT, f"cell {i} of {notebook.name}")
            except TimeoutError:
                page.screenshot(path=f"/tmp/walkthrough-{notebook.stem}-{i}.png")
                raise
            seconds[i] = time.monotonic() - start
            print(f"  cell {i}: {seconds[i]:.1f} s", flush=True)
        page.keyboard.press("Escape")
    return seconds


def merged(path, rows):
    """The walkthrough at `path` with the rows of each notebook in `rows` replaced by those, in notebook
    order; every other notebook's rows are kept as written (read as text, so they are written back unchanged)."""
    new = pd.DataFrame(rows, dtype=object)
    if not pathlib.Path(path).exists():
        return new
    old = pd.read_csv(path, dtype=str, keep_default_na=False)
    table = pd.concat([old[~old["notebook"].isin(new["notebook"])], new], ignore_index=True)
    return table.sort_values("notebook", kind="stable")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("notebooks", nargs="*", type=pathlib.Path)
    p.add_argument("--out", type=pathlib.Path, default=ROOT / "tiledlab/data/simulator/walkthrough.csv")
    p.add_argument("--no-guide", action="store_true", help="do not rewrite docs/teaching.md's tables")
    args = p.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop JupyterLab on the way out
    from playwright.sync_api import sync_playwright
    notebooks = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    with tempfile.TemporaryDirectory() as tmp:
        proc, url, token = start_lab(pathlib.Path(tmp))
        print(f"JupyterLab at {url}", flush=True)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium_executable(), headless=True, args=CHROMIUM_ARGS)
                version = browser.version
                rows = []
                for nb in notebooks:
                    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
                    seconds = walk(page, url, token, nb)
                    page.context.close()
                    rows += plans.model(nb, seconds)
                    print(f"{nb.stem}: {sum(seconds.values()):.0f} s running its cells", flush=True)
                browser.close()
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
    how = {"method": "scripted walkthrough in Chromium (tools/walkthrough.py): code cells timed, reading "
                     f"modelled at {plans.READING_WPM} words/min, exercises at a stated allowance",
           "reading_wpm": plans.READING_WPM, "kernel_exercise_min": plans.ALLOWANCE_MIN["kernel"],
           "prediction_exercise_min": plans.ALLOWANCE_MIN["prediction"],
           "machine": f"{os.cpu_count()} CPU cores, {platform.machine()}", "browser": f"Chromium {version}",
           **stamp()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_rows(merged(args.out, [{**r, **how} for r in rows]), args.out)
    print(f"wrote the rows of {', '.join(nb.stem for nb in notebooks)} into {args.out}")
    if not args.no_guide:
        print(f"rewrote the tables of {plans.update_guide()}")


if __name__ == "__main__":
    main()
