"""The built website in a real Chromium: every page and every image loads, with no console errors.

The site is $TILEDLAB_SITE_DIR when set (CI builds it first, with warnings as errors), otherwise it is
built here into a temporary folder with the documented command (skipped when Sphinx/MyST-NB are not
installed: pip install -e '.[site]'). It is served over HTTP on 127.0.0.1 and crawled from its root,
following every link that stays on the site; every HTML file of the build must be reached. A screenshot
of each page (one screen; the start pages whole) goes to $TILEDLAB_SCREENSHOTS/site/ (default
build/screenshots/site/).
Also: search works on the site opened from disk (file://), and wide outputs scroll to their last column.
"""
import functools
import http.server
import json
import os
import pathlib
import re
import subprocess
import sys
import threading
import time
import urllib.parse

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# The one documented command (README):
#   python -m sphinx -W --keep-going -E -c docs -d build/doctrees -b html . build/site
# here with the doctrees and output in a temporary folder.
BUILD = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-c", "docs", "-b", "html"]
# and the Chinese site into its zh/ folder (README):
#   python -m sphinx -W --keep-going -E -c docs/site_zh -d build/doctrees-zh -b html . build/site/zh
BUILD_ZH = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-c", "docs/site_zh", "-b", "html"]
NOTEBOOKS_ZH = sorted((ROOT / "notebooks" / "zh").glob("*.ipynb"))

IMAGES = """() => Array.from(document.images).map(img => ({
    src: (img.currentSrc || img.src).slice(0, 120), complete: img.complete, width: img.naturalWidth,
    output: !!img.closest('.cell_output')}))"""
REFRESH = re.compile(r'<meta http-equiv="refresh" content="\d+;\s*url=([^"]+)"', re.I)
LINKS = "() => Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"
# Stored outputs that should not be on a lesson page: stderr streams and tracebacks (MyST-NB classes).
BAD_OUTPUTS = """() => Array.from(document.querySelectorAll(
    '.cell_output .stderr, .cell_output .traceback, .output.stderr, .output.traceback'))
    .map(e => e.textContent.slice(0, 200))"""


@pytest.fixture(scope="session")
def site_dir(tmp_path_factory):
    given = os.environ.get("TILEDLAB_SITE_DIR")
    if given:
        path = pathlib.Path(given)
        assert (path / "index.html").exists(), f"TILEDLAB_SITE_DIR={given} has no index.html: build the site first"
        return path
    try:
        import myst_nb  # noqa: F401
        import sphinx  # noqa: F401
    except ImportError:
        reason = "building the site needs Sphinx and MyST-NB: pip install -e '.[site]'"
        if os.environ.get("TILEDLAB_REQUIRE_BROWSER") == "1":
            pytest.fail(f"TILEDLAB_REQUIRE_BROWSER=1, but {reason}", pytrace=False)
        pytest.skip(reason)
    tmp = tmp_path_factory.mktemp("site")
    out = tmp / "site"
    started = time.monotonic()
    builds = [(build, subprocess.Popen(build + ["-d", str(tmp / doctrees), ".", str(folder)], cwd=ROOT, text=True,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE))
              for build, doctrees, folder in ((BUILD, "doctrees", out), (BUILD_ZH, "doctrees-zh", out / "zh"))]
    for build, done in builds:  # the two editions side by side: separate doctrees and output folders
        stdout, stderr = done.communicate()
        assert done.returncode == 0, f"site build failed ({' '.join(build)}):\n{stdout}\n{stderr}"
    print(f"site built in {time.monotonic() - started:.1f} s")
    return out


@pytest.fixture(scope="session")
def site_url(site_dir):
    handler = functools.partial(_QuietHandler, directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _page_key(url, base):
    """The site-relative path of an on-site HTML page, without query and fragment; None otherwise."""
    if not url.startswith(base):
        return None
    path = urllib.parse.urlsplit(url).path[len(urllib.parse.urlsplit(base).path):]
    if path == "" or path.endswith("/"):
        path += "index.html"
    return path if path.endswith(".html") else None


def test_every_page_and_image_loads(site_dir, site_url, page, screenshots, record):
    shots = screenshots / "site"
    shots.mkdir(parents=True, exist_ok=True)
    problems, visited, queue, summary = [], [], ["index.html", "zh/index.html"], {}  # both editions' roots
    while queue:
        rel = queue.pop(0)
        if rel in visited:
            continue
        visited.append(rel)
        mark = (len(page.log.console), len(page.log.page_errors), len(page.log.failed), len(page.log.http_errors))
        started = time.monotonic()
        response = page.goto(site_url + rel, wait_until="load")
        if response is None or not response.ok:
            problems.append(f"{rel}: HTTP {response.status if response else 'no response'}")
            continue
        final = rel
        redirect = REFRESH.search((site_dir / rel).read_text(errors="replace"))
        if redirect:  # the root index.html sends the reader to docs/index.html
            final = _page_key(urllib.parse.urljoin(site_url + rel, redirect.group(1)), site_url)
            page.wait_for_url(site_url + final, timeout=10_000)
            visited.append(final)
        page.wait_for_load_state("networkidle")
        # Sphinx may mark images loading="lazy": load them all before checking.
        page.evaluate("() => document.querySelectorAll('img').forEach(i => { i.loading = 'eager'; })")
        page.wait_for_function("() => Array.from(document.images).every(i => i.complete)", timeout=15_000)
        images = page.evaluate(IMAGES)
        for img in images:
            if img["width"] == 0:
                problems.append(f"{final}: image did not load: {img['src'][:120]}")
        for bad in page.evaluate(BAD_OUTPUTS):
            problems.append(f"{final}: a stored stderr/error output is shown: {bad!r}")
        new = [part[m:] for part, m in zip((page.log.console, page.log.page_errors, page.log.failed,
                                            page.log.http_errors), mark)]
        problems += [f"{final}: {p}" for group in new for p in group]
        shot = shots / (final.replace("/", "__").removesuffix(".html") + ".png")
        page.screenshot(path=str(shot), full_page=final.split("/")[-1] == "index.html")  # start pages whole
        summary[final] = {"images": len(images), "output_images": sum(i["output"] for i in images),
                          "load_s": round(time.monotonic() - started, 2),
                          "title": page.title(), "screenshot": str(shot)}
        for href in page.evaluate(LINKS):
            key = _page_key(href.split("#")[0], site_url)
            if key and key not in visited and key not in queue:
                queue.append(key)
    # The search page and the general index are reached from the search box, not by links: visit them
    # too (search with a query, so that the search index is loaded and used).
    for rel, query in (("search.html", "?q=tile"), ("genindex.html", ""), ("zh/search.html", "?q=tile"),
                       ("zh/genindex.html", "")):
        if (site_dir / rel).exists() and rel not in visited:
            mark = len(page.log.problems())
            page.goto(site_url + rel + query, wait_until="networkidle")
            visited.append(rel)
            problems += [f"{rel}: {p}" for p in page.log.problems()[mark:]]
            shot = shots / (rel.replace("/", "__").removesuffix(".html") + ".png")
            page.screenshot(path=str(shot), full_page=True)
            summary[rel] = {"images": 0, "output_images": 0, "title": page.title(), "screenshot": str(shot)}
    record("site/summary", {"pages": summary, "problems": problems})

    # Every page of the build (_static/ holds the themes' Jinja macro files, which are not pages).
    built = sorted(str(p.relative_to(site_dir)) for p in site_dir.rglob("*.html")
                   if "_static" not in p.relative_to(site_dir).parts[:2])  # either edition's
    unreached = [p for p in built if p not in visited]
    assert not problems, "\n".join(problems)
    assert not unreached, f"pages in the build that no link reaches: {unreached}"
    lessons = ({f"notebooks/{nb.stem}.html" for nb in NOTEBOOKS}
               | {f"zh/notebooks/zh/{nb.stem}.html" for nb in NOTEBOOKS_ZH})
    assert len(NOTEBOOKS_ZH) == len(NOTEBOOKS), "every lesson has a Chinese twin (python -m tools translate build)"
    assert lessons <= set(summary), f"lesson pages missing: {sorted(lessons - set(summary))}"
    for nb in NOTEBOOKS:  # each lesson page shows every image its notebook stores
        stored = sum("image/png" in o.get("data", {}) or "image/jpeg" in o.get("data", {})
                     for c in json.loads(nb.read_text())["cells"] for o in c.get("outputs", []))
        for page_of in (f"notebooks/{nb.stem}.html", f"zh/notebooks/zh/{nb.stem}.html"):
            shown = summary[page_of]["output_images"]
            assert shown == stored, f"{page_of} shows {shown} output images, the notebook stores {stored}"


def test_search_works_opened_from_disk(site_dir, page):
    """Opened as files (file://, no server), the search page finds the lessons, with no CORS error:
    the index is a script, and no result summary is fetched (html_show_search_summary = False)."""
    page.goto((site_dir / "search.html").as_uri() + "?q=tile", wait_until="load")
    page.wait_for_function("() => /Search finished/.test(document.querySelector('#search-results')?.innerText || '')",
                           timeout=15_000)
    page.wait_for_timeout(1000)  # summaries, if any were asked for, are fetched after the list
    found = page.evaluate("() => Array.from(document.querySelectorAll('#search-results li a')).map(a => a.href)")
    lessons = {f"notebooks/{nb.stem}.html" for nb in NOTEBOOKS}
    assert {h.split("#")[0].split("?")[0].removeprefix(site_dir.as_uri() + "/") for h in found} & lessons, found
    assert not page.log.problems(), "\n".join(page.log.problems())


# Every element of a cell, input or output, whose content is wider than its box; for each, the box that
# scrolls it (itself or an ancestor inside the cell), scrolled to its right end.
WIDE = """() => Array.from(document.querySelectorAll('.cell_input *, .cell_output *'))
  .filter(e => e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0)
  .map(e => {
    let box = e;
    while (box && !['auto', 'scroll'].includes(getComputedStyle(box).overflowX)
           && !box.matches('.cell_input, .cell_output')) box = box.parentElement;
    const scrolls = ['auto', 'scroll'].includes(getComputedStyle(box).overflowX);
    if (scrolls) box.scrollLeft = box.scrollWidth;
    return {tag: e.tagName, cls: String(e.className).slice(0, 60), scrolls, text: e.textContent.slice(0, 60),
            reached: scrolls && box.scrollLeft + box.clientWidth >= box.scrollWidth - 1,
            width: box.scrollWidth, shown: box.clientWidth};
  })"""


@pytest.mark.parametrize("width", [1400, 390])
def test_wide_outputs_scroll_to_their_right_edge(site_url, open_page, width):
    """Long lines and wide text tables (notebook 6's counters) are wider than the lesson column: each
    scrolls sideways inside its own box, to its last column, and the page itself never scrolls sideways."""
    page = open_page()
    try:
        page.set_viewport_size({"width": width, "height": 900})
        wide = {}
        for nb in NOTEBOOKS:
            page.goto(f"{site_url}notebooks/{nb.stem}.html", wait_until="load")
            found = page.evaluate(WIDE)
            stuck = [w for w in found if not w["reached"]]
            assert not stuck, f"{nb.stem} at {width} px: content cut off, not scrollable: {stuck[:3]}"
            overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert overflow <= 1, f"{nb.stem} at {width} px: the page scrolls sideways by {overflow} px"
            wide[nb.stem] = len(found)
        assert wide["06_caches"] > 0, "notebook 6's counter table should be wider than the column"
    finally:
        page.context.close()
