"""What a new reader meets on opening a notebook: no test machinery in the cells they read, the Colab
install cell folded with its purpose said above it, and first-page tables that fit a notebook's width."""
import pathlib
import re

import nbformat
import pytest

from tools import links

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "notebooks" / "zh").glob("*.ipynb"))
CHECKED = "nbval-check-output"  # nbval's cell tag: it compares the cell's output with the stored one


def read(path):
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT / "notebooks").as_posix())
def test_no_cell_shows_a_test_marker(path):
    marked = [i for i, c in enumerate(read(path).cells) if c.cell_type == "code" and re.search(r"#\s*NBVAL", c.source)]
    assert not marked, f"{path.name}: cells {marked} carry an nbval comment; tag the cell `{CHECKED}` instead"


def test_the_checked_cells_are_tagged_for_nbval():
    from nbval.plugin import find_metadata_tags
    for path in NOTEBOOKS:
        for c in read(path).cells:
            if CHECKED in c.metadata.get("tags", []):
                assert dict(find_metadata_tags(c.metadata)) == {"check": True}  # what nbval reads from the tag
    english = [sum(CHECKED in c.metadata.get("tags", []) for c in read(p).cells) for p in NOTEBOOKS[:8]]
    assert sum(english) >= 25 and all(english[1:]), english  # every lesson compares some outputs


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT / "notebooks").as_posix())
def test_the_install_cell_is_folded_below_a_line_that_says_what_it_is(path):
    nb = read(path)
    install = [c for c in nb.cells if links.INSTALL_TAG in c.metadata.get("tags", [])]
    assert len(install) == 1 and install[0].metadata["jupyter"] == {"source_hidden": True}
    above = nb.cells[nb.cells.index(install[0]) - 1]
    assert above.cell_type == "markdown" and "Colab" in above.source.splitlines()[-1]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT / "notebooks").as_posix())
def test_the_tile_stepper_is_shown_once(path):
    """One output: the widget where a front end runs it, its static strip where none does (never both)."""
    for c in read(path).cells:
        if c.cell_type == "code" and "step_through(" in c.source and c.outputs:
            assert [sorted(o.get("data", {})) for o in c.outputs] == [
                ["application/vnd.jupyter.widget-view+json", "image/png", "text/plain"]], path.name
