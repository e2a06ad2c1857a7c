"""Every file of the repository a page names exists: a module moved (to tools/, classroom/) leaves no page
pointing at its old place."""
import pathlib
import re

import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = {"tests/test_x.py"}  # CONTRIBUTING's placeholder for "the test file of what you touched"
PATH = re.compile(r"\b((?:tiledlab|tools|classroom|tests|docs|notebooks|solutions)/[\w/.-]*\w\.(?:py|md|ipynb|csv|sh))\b")


def pages():
    """(name, text) of every page a reader reads: the Markdown files and the notebooks' Markdown cells."""
    for path in [*ROOT.glob("*.md"), *ROOT.glob("docs/**/*.md"), *ROOT.glob("tools/*.md"), *ROOT.glob("classroom/*.md"),
                 *ROOT.glob("tiledlab/data/*/README.md")]:
        yield path.relative_to(ROOT), path.read_text()
    for path in sorted(ROOT.glob("notebooks/**/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        yield path.relative_to(ROOT), "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def test_every_repository_path_a_page_names_exists():
    named = {(str(name), p) for name, text in pages() for p in PATH.findall(text)}
    assert len(named) > 50  # the pages do name files
    assert sorted(f"{name}: {p}" for name, p in named if not (ROOT / p).exists() and p not in EXAMPLES) == []


def test_every_registry_name_a_page_names_exists():
    """`registry.X` in a page is something tiledlab.core.registry has (registry.ASYNC went, family("async") stayed)."""
    from tiledlab.core import registry
    attribute = re.compile(r"(?<![\w./])registry\.(\w+)(?!\w|\.\w)")  # not registry.py, nor a host's name
    named = {(str(name), a) for name, text in pages() for a in attribute.findall(text) if a != "py"}
    assert named and sorted(f"{name}: registry.{a}" for name, a in named if not hasattr(registry, a)) == []
