"""The slide deck (`python -m tiledlab slides --out DIR`) in a real Chromium, opened from a file with the
network cut off: every slide shows, every figure decodes, the arrow keys move, nothing is fetched, no
console error. Screenshots of each slide go to $TILEDLAB_SCREENSHOTS/slides/."""
import re
import subprocess
import sys

import nbformat
import pytest

from tests.browser.conftest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
CURRENT = "() => { const s = document.querySelector('.slide.current'); const r = s.getBoundingClientRect(); " \
          "return {index: Array.from(document.querySelectorAll('.slide')).indexOf(s), kind: s.dataset.kind, " \
          "heading: s.querySelector('h1').textContent, width: r.width, height: r.height, " \
          "text: s.innerText.length, overflow: s.scrollHeight - s.clientHeight, images: Array.from(s.querySelectorAll('img')).map(i => " \
          "({complete: i.complete, width: i.naturalWidth, shown: i.getBoundingClientRect().height}))}; }"


@pytest.fixture(scope="module")
def deck(tmp_path_factory):
    out = tmp_path_factory.mktemp("slides")
    done = subprocess.run([sys.executable, "-m", "tiledlab", "slides", "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return out / "slides.html"


def test_every_slide_renders_and_the_arrows_move(deck, page, screenshots, record):
    shots = screenshots / "slides"
    shots.mkdir(parents=True, exist_ok=True)
    requests = []
    page.route("**/*", lambda route: (requests.append(route.request.url),
                                      route.continue_() if route.request.url.startswith("file:") else route.abort()))
    page.goto(deck.as_uri())
    n = page.locator(".slide").count()
    titles = [nbformat.read(p, as_version=4).cells[0].source.splitlines()[0].lstrip("# ").strip() for p in NOTEBOOKS]
    seen = []
    for k in range(n):
        state = page.evaluate(CURRENT)
        assert state["index"] == k, f"after {k} presses of → the deck shows slide {state['index']}"
        assert state["width"] > 0 and state["height"] > 0 and state["text"] > 0, state
        assert state["overflow"] <= 1, f"slide {k + 1} ({state['heading']}) does not fit: {state['overflow']} px"
        for img in state["images"]:
            assert img["complete"] and img["width"] > 0 and img["shown"] > 100, f"slide {k + 1}: {img}"
        page.screenshot(path=str(shots / f"slide-{k + 1:02d}.png"))
        seen.append(state)
        page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    assert page.evaluate(CURRENT)["index"] == n - 2, "← goes back one slide"
    record("slides/deck", {"slides": [{k: s[k] for k in ("kind", "heading")} for s in seen], **page.log.as_dict()})
    assert [s["heading"] for s in seen if s["kind"] == "lesson"] == titles
    assert sum(s["kind"] == "figure" for s in seen) == len(NOTEBOOKS) - 1  # every lesson but the start page
    assert sum(s["kind"] == "summary" for s in seen) >= len(NOTEBOOKS) - 1
    assert [u for u in requests if not u.startswith("file:")] == [] and len(set(requests)) == 1  # the file only
    assert page.log.problems() == []


def test_printing_gives_one_page_per_slide(deck, page):
    page.goto(deck.as_uri())
    page.emulate_media(media="print")
    shown = page.evaluate("() => Array.from(document.querySelectorAll('.slide')).map(s => s.getBoundingClientRect().height)")
    assert all(h > 0 for h in shown), "in print every slide is laid out, one after the other"
    pdf = page.pdf(width="13.333in", height="7.5in", print_background=True)
    assert len(re.findall(rb"/Type\s*/Page(?!s)", pdf)) == len(shown)
