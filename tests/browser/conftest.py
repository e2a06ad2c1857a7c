"""Real-browser tests: Playwright for Python driving a system Chromium (Debian's `chromium` package).

They skip, with the reason, when Playwright or a Chromium is missing, so a student's plain `pytest`
still passes. `.ci/run` installs both, so CI runs them.

Environment:
  TILEDLAB_CHROMIUM      the browser executable (default: the first of chromium, chromium-browser,
                         google-chrome, google-chrome-stable on PATH)
  TILEDLAB_SCREENSHOTS   folder for screenshots and per-test JSON summaries
                         (default: build/screenshots in the repository; build/ is git-ignored)
  TILEDLAB_BROWSER_TESTS set to 0 to skip these tests even where a browser is installed
  TILEDLAB_REQUIRE_BROWSER set to 1 (CI does) to make a missing Playwright or Chromium a failure, not a skip
  TILEDLAB_SITE_DIR      the built site for test_site.py (default: build it into a temporary folder)
  TILEDLAB_LAB_PARALLEL  notebooks run at once in the one JupyterLab server (default 2)
  TILEDLAB_LAB_TIMEOUT   seconds allowed for one notebook's Run All (default 300)
"""
import json
import os
import pathlib

import pytest

from tools.chromium import CHROMIUM_ARGS, chromium_executable

# class_report.py holds a test that test_hub.py collects (on its class server): pytest's assertion messages there too.
pytest.register_assert_rewrite("browser.class_report")

ROOT = pathlib.Path(__file__).resolve().parents[2]

@pytest.fixture(scope="session")
def screenshots():
    """The folder the tests write screenshots (and a JSON summary per test) into."""
    folder = pathlib.Path(os.environ.get("TILEDLAB_SCREENSHOTS") or ROOT / "build" / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _missing(reason):
    """Skip (a student's plain pytest) or, where CI asked for the browser tests, fail."""
    if os.environ.get("TILEDLAB_REQUIRE_BROWSER") == "1":
        pytest.fail(f"TILEDLAB_REQUIRE_BROWSER=1, but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser():
    if os.environ.get("TILEDLAB_BROWSER_TESTS", "1") == "0":
        pytest.skip("browser tests switched off (TILEDLAB_BROWSER_TESTS=0)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("browser tests need Playwright for Python: pip install -e '.[browser]' "
                 "(and Debian's chromium: apt-get install chromium)")
    exe = chromium_executable()
    if exe is None:
        _missing("browser tests need a Chromium: apt-get install chromium (Debian), "
                 "or set TILEDLAB_CHROMIUM to a Chromium/Chrome executable")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


class PageLog:
    """Console errors, uncaught page errors, failed requests and HTTP errors seen by one page."""

    def __init__(self, page):
        self.console, self.page_errors, self.failed, self.http_errors = [], [], [], []
        page.on("console", lambda m: self.console.append(f"{m.type}: {m.text} ({m.location.get('url', '')})")
                if m.type == "error" else None)
        page.on("pageerror", lambda e: self.page_errors.append(str(e)))
        page.on("requestfailed", self._failed)
        page.on("response", lambda r: self.http_errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)

    def _failed(self, request):
        # net::ERR_ABORTED is a request cancelled by a navigation (the root index.html redirects at
        # once, cancelling its icon request): not a failure. A missing file shows as an HTTP 404.
        if "ERR_ABORTED" not in (request.failure or ""):
            self.failed.append(f"{request.url} ({request.failure})")

    def problems(self):
        return self.console + self.page_errors + self.failed + self.http_errors

    def as_dict(self):
        return {"console_errors": self.console, "page_errors": self.page_errors,
                "failed_requests": self.failed, "http_errors": self.http_errors}


@pytest.fixture(scope="session")
def open_page(browser):
    """open_page() -> a new page in a context of its own (fresh cookies, storage), with page.log."""
    def open_():
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        pg = context.new_page()
        pg.log = PageLog(pg)
        return pg
    return open_


@pytest.fixture
def page(open_page):
    pg = open_page()
    try:
        yield pg
    finally:
        pg.context.close()


@pytest.fixture
def record(screenshots):
    """record(name, data): write data as screenshots/name.json (timings, counts, what the page logged)."""
    def write(name, data):
        path = screenshots / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2) + "\n")
        return path
    return write
