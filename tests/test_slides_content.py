"""The slide deck's text comes from the notebooks: each lesson's title, what it teaches and its summary."""
import nbformat

from tiledlab.notebook import lab, slides


def test_every_lesson_gives_a_title_what_it_teaches_and_a_summary():
    for path in lab.lessons():
        text = slides.content(path)
        first = nbformat.read(path, as_version=4).cells[0].source
        assert first.startswith(f"# {text['title']}")
        assert text["learn"] and text["learn"] in first
        if not path.stem.startswith("00"):
            assert text["learn"].startswith("- ") and text["summary"].startswith("- "), path.stem


def test_the_deck_is_one_page_with_nothing_to_fetch():
    deck = slides.deck_html(slides.slides(lab.lessons()[:2], figures={}))
    assert deck.count('<section class="slide') == 1 + 1 + 2  # title; start page; notebook 1's lesson and summary
    assert "http://" not in deck and "https://" not in deck and "<link rel=\"stylesheet\"" not in deck


def test_markdown_is_escaped_and_lists_join_their_lines():
    assert slides._markdown("- a `x<y` and **b**\n  more\n- c") == \
        "<ul><li>a <code>x&lt;y</code> and <strong>b</strong> more</li><li>c</li></ul>"
