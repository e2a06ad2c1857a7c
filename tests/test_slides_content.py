"""The slide deck's content comes from the series: each lesson's title, what it teaches and its summary
(the notebook), the lines its kernel turns on (the registry's source), its prediction exercises with the
key's answers, and speaker notes with the modelled minutes and the guide's misconception."""
import html
import re

import nbformat
import pytest

from classroom import series, slides
from tiledlab import data
from tiledlab.core.launch import resolve
from tiledlab.counting.outcomes import EXERCISE

LESSONS = sorted(series.NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def deck():
    return slides.slides(figures={})


def predictions(path):
    return [m[1] for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code" and "predict(" in c.source
            for m in [EXERCISE.match(c.source)] if m]


def test_every_lesson_gives_a_title_what_it_teaches_and_a_summary():
    for path in LESSONS:
        text = slides.content(path)
        first = nbformat.read(path, as_version=4).cells[0].source
        assert first.startswith(f"# {text['title']}")
        assert text["learn"] and text["learn"] in first
        if not path.stem.startswith("00"):
            assert text["learn"].startswith("- ") and text["summary"].startswith("- "), path.stem
            assert "## " not in text["summary"] and "**Exercise" not in text["summary"], path.stem


def test_each_prediction_is_a_slide_and_its_answer_the_next(deck):
    key = slides.answers()
    asked = [n for path in LESSONS for n in predictions(path)]
    assert len(asked) >= 7 and slides.lessons() == LESSONS
    shown = [(k, re.match(r"Exercise (\S+): predict", heading)[1]) for k, (kind, heading, *_r) in enumerate(deck)
             if kind == "predict"]
    assert [n for _k, n in shown] == asked
    allowed = data.load(slides.WALKTHROUGH).set_index("part")["exercise_min"]
    for k, number in shown:
        assert f"Allow about {allowed[f'Exercise {number}']:.0f} minutes" in deck[k][3]
        kind, heading, body, notes = deck[k + 1]
        assert (kind, heading) == ("answer", f"Exercise {number}: the answer")
        assert html.escape(str(key[number].value)) in body and html.escape(key[number].why) in body
        assert f"<strong>Exercise {number}.</strong>" in deck[k][2]  # the notebook's own statement


def test_without_the_key_the_answer_slide_sends_to_the_cell():
    path = next(p for p in LESSONS if p.stem.startswith("01"))
    (answer,) = [body for kind, _h, body, _n in slides.notebook_slides(path, key={}) if kind == "answer"]
    assert "Run the exercise's cell" in answer and "120" not in answer


def shown_lines(code):
    """(text, highlighted) of each line of a code slide's HTML."""
    text = html.unescape(re.sub(r"<(?!/?span class=\"hll\")[^>]+>", "", code.split("<pre>", 1)[1]))
    return [(line.replace('<span class="hll">', ""), line.startswith('<span class="hll">'))
            for line in text.replace("\n</span>", "\n").strip("\n").splitlines()]


def test_code_slides_highlight_lines_of_the_kernels_own_source():
    for stem, spec in slides.CODE.items():
        source = resolve(spec.kernel).source({}).splitlines()
        lines = shown_lines(slides.code_html(spec))
        shown = [text for text, _marked in lines]
        start = source.index(shown[0])
        assert source[start:start + len(shown)] == shown, f"{stem}: not a run of {spec.kernel}'s own source"
        for text, marked in lines:
            assert marked == any(m in text for m in spec.marks), f"{stem}: {text!r}"
        for mark in spec.marks:  # a kernel edited under a mark would lose its highlight silently
            assert any(mark in text for text, marked in lines if marked), f"{stem}: {mark!r} is not in {spec.kernel}"
    assert set(slides.CODE) == {p.stem for p in LESSONS} - {"00_start_here"}


def test_notes_give_the_modelled_minutes_and_the_misconception(deck):
    minutes = data.load(slides.WALKTHROUGH).groupby("notebook")["minutes"].sum()
    told = slides.guide()
    lessons = [d for d in deck if d[0] == "lesson"]
    assert len(lessons) == len(LESSONS)
    for path, (_kind, heading, _body, notes) in zip(LESSONS, lessons):
        assert f"<strong>{minutes[path.stem]:.0f} in all</strong>" in notes, path.stem
        assert "not observed" in notes
        if not path.stem.startswith("00"):
            think = told[path.stem[:2]]["students often think"]
            assert think and slides.MD.renderInline(think) in notes, path.stem
    assert all(notes for *_r, notes in deck), "every slide has speaker notes"


def test_the_deck_is_one_page_with_nothing_to_fetch(deck):
    page = slides.deck_html(deck)
    assert page.count('<div class="page"') == len(deck) == page.count('<aside class="notes">')
    assert not re.search(r"https?://|<link rel=\"stylesheet\"|<script src|@import", page)


def test_markdown_from_a_notebook_cannot_inject_html():
    assert slides.MD.render("- a `x<y` and <img src=x onerror=alert(1)>") == \
        "<ul>\n<li>a <code>x&lt;y</code> and &lt;img src=x onerror=alert(1)&gt;</li>\n</ul>\n"
