"""The slide deck (`python -m classroom slides --out DIR`) in a real Chromium, opened from a file with the
network cut off: every slide shows and fits, every figure decodes, the arrow keys move, nothing is
fetched, no console error; S opens the presenter view (this slide, the next, the notes, a clock), which
follows the audience window; printing gives one slide per page, and from the presenter view each slide
with its notes. Screenshots go to $TILEDLAB_SCREENSHOTS/slides/."""
import re
import subprocess
import sys

import nbformat
import pytest

from tests.browser.conftest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
CURRENT = "() => { const p = document.querySelector('.page.current'), s = p.querySelector('.slide'); " \
          "const r = s.getBoundingClientRect(); " \
          "return {index: Array.from(document.querySelectorAll('.page')).indexOf(p), kind: p.dataset.kind, " \
          "heading: s.querySelector('h1').textContent, width: r.width, height: r.height, " \
          "text: s.innerText.length, " \
          "overflow: Math.max(s.scrollHeight - s.clientHeight, s.scrollWidth - s.clientWidth), " \
          "marked: s.querySelectorAll('.hll').length, images: Array.from(s.querySelectorAll('img')).map(i => " \
          "({complete: i.complete, width: i.naturalWidth, shown: i.getBoundingClientRect().height}))}; }"
SHOWN = "sel => Array.from(document.querySelectorAll(sel)).filter(e => e.getBoundingClientRect().height > 0)" \
        ".map(e => e.innerText)"


def pages_of(pdf):
    return len(re.findall(rb"/Type\s*/Page(?!s)", pdf))


@pytest.fixture(scope="module")
def deck(tmp_path_factory):
    out = tmp_path_factory.mktemp("slides")
    done = subprocess.run([sys.executable, "-m", "classroom", "slides", "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return out / "slides.html"


def offline(page, requests):
    """Let the page load files only; anything else is recorded and refused."""
    page.context.route("**/*", lambda route: (requests.append(route.request.url), route.continue_()
                                              if route.request.url.startswith("file:") else route.abort()))


def test_every_slide_renders_and_the_arrows_move(deck, page, screenshots, record):
    shots = screenshots / "slides"
    shots.mkdir(parents=True, exist_ok=True)
    requests = []
    offline(page, requests)
    page.goto(deck.as_uri())
    n = page.locator(".page").count()
    titles = [nbformat.read(p, as_version=4).cells[0].source.splitlines()[0].lstrip("# ").strip() for p in NOTEBOOKS]
    seen = []
    for k in range(n):
        state = page.evaluate(CURRENT)
        assert state["index"] == k, f"after {k} presses of → the deck shows slide {state['index']}"
        assert state["width"] > 0 and state["height"] > 0 and state["text"] > 0, state
        assert state["overflow"] <= 1, f"slide {k + 1} ({state['heading']}) does not fit: {state['overflow']} px"
        for img in state["images"]:
            assert img["complete"] and img["width"] > 0 and img["shown"] > 100, f"slide {k + 1}: {img}"
        assert page.evaluate(SHOWN, ".notes") == [], "the audience sees no notes"
        page.screenshot(path=str(shots / f"slide-{k + 1:02d}.png"))
        seen.append(state)
        page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    assert page.evaluate(CURRENT)["index"] == n - 2, "← goes back one slide"
    record("slides/deck", {"slides": [{k: s[k] for k in ("kind", "heading")} for s in seen], **page.log.as_dict()})
    kinds = [s["kind"] for s in seen]
    assert [s["heading"] for s in seen if s["kind"] == "lesson"] == titles
    assert kinds.count("figure") == kinds.count("code") == len(NOTEBOOKS) - 1  # every lesson but the start page
    assert all(s["marked"] > 0 for s in seen if s["kind"] == "code"), "each code slide highlights its lines"
    assert kinds.count("predict") == kinds.count("answer") >= len(NOTEBOOKS) - 1
    assert all(kinds[k + 1] == "answer" for k, kind in enumerate(kinds) if kind == "predict")
    assert [u for u in requests if not u.startswith("file:")] == [] and len(set(requests)) == 1  # the file only
    assert page.log.problems() == []


def test_the_presenter_view_follows_and_shows_the_notes(deck, page, screenshots):
    requests = []
    offline(page, requests)
    kinds = re.findall(r'data-kind="(\w+)"', deck.read_text(encoding="utf-8"))
    first = kinds.index("lesson", kinds.index("lesson") + 1)
    page.goto(f"{deck.as_uri()}#{first + 1}")  # notebook 1's first slide (notebook 0's questions come before it)
    with page.context.expect_page() as opened:
        page.keyboard.press("s")
    presenter = opened.value
    presenter.wait_for_load_state()
    assert "presenter" in presenter.url and presenter.evaluate(CURRENT)["index"] == first
    notes = presenter.evaluate(SHOWN, ".page.current .notes")
    assert len(notes) == 1 and "Modelled minutes" in notes[0] and "Watch for" in notes[0], notes
    assert presenter.evaluate(SHOWN, ".page.next .slide h1") == [page.evaluate(
        f"() => document.querySelectorAll('.page')[{first + 1}].querySelector('h1').innerText")], "the next slide is shown"
    presenter.wait_for_function("() => /0:0[1-9]/.test(document.getElementById('clock').innerText)", timeout=5000)
    page.keyboard.press("ArrowRight")
    presenter.wait_for_function("() => document.querySelector('.page.current').dataset.kind === 'code'", timeout=5000)
    assert "two global loads per multiply-add" in presenter.evaluate(SHOWN, ".page.current .notes")[0]
    presenter.keyboard.press("ArrowRight")  # and the audience follows the presenter
    page.wait_for_function(f"() => location.hash === '#{first + 3}'", timeout=5000)
    presenter.screenshot(path=str(screenshots / "slides" / "presenter.png"))
    assert [u for u in requests if not u.startswith("file:")] == []
    assert page.log.problems() == [] and presenter.evaluate("() => document.querySelectorAll('.page').length") > 0


def test_printing_gives_one_page_per_slide_and_from_the_presenter_view_the_notes(deck, page):
    page.goto(deck.as_uri())
    n = page.locator(".page").count()
    page.emulate_media(media="print")
    assert len(page.evaluate(SHOWN, ".slide")) == n and page.evaluate(SHOWN, ".notes") == []
    assert pages_of(page.pdf(prefer_css_page_size=True, print_background=True)) == n
    page.goto(f"{deck.as_uri()}?presenter")
    notes = page.evaluate(SHOWN, ".notes")
    assert len(notes) == n and all(notes), "in print, every slide's notes are under it"
    pdf = page.pdf(prefer_css_page_size=True, print_background=True)
    assert pages_of(pdf) == n and b"/MediaBox [0 0 612 792]" in pdf  # one US-letter notes page per slide
