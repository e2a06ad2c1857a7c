"""What the Chinese edition is made from: the English notebooks and docs pages, and their messages.

A message is (context, msgid, where): for a notebook, one per markdown cell with text (context = the
cell's id, msgid = its source); for a docs page, one per top-level markdown block (context =
"<stem>:<n>", msgid = the block's source lines joined with newlines).
"""
import pathlib

import nbformat

from tiledlab.notebook import lab

NOTEBOOKS = pathlib.Path("notebooks")
ZH_NOTEBOOKS = NOTEBOOKS / "zh"
DOCS = pathlib.Path("docs")
ZH_DOCS = DOCS / "zh"
DOC_PAGES = ("index", "teaching", "glossary")
LOCALE = pathlib.Path("locale/zh_CN/LC_MESSAGES")
LINKS_TAG = "links"  # a cell of badges and links only: copied, never translated


def english_notebooks(root):
    """notebooks/*.ipynb under `root`, in order."""
    return sorted((pathlib.Path(root) / NOTEBOOKS).glob("*.ipynb"))


def doc_pages(root):
    """docs/<page>.md of each of DOC_PAGES under `root`, those that exist."""
    return [p for p in (pathlib.Path(root) / DOCS / f"{s}.md" for s in DOC_PAGES) if p.exists()]


def read_notebook(path):
    return lab.read_notebook(path)


def is_links(cell):
    return LINKS_TAG in cell.get("metadata", {}).get("tags", [])


def is_message(cell):
    """A markdown cell with text that is not a `links` cell: its source is a message."""
    return cell.cell_type == "markdown" and bool(cell.source) and not is_links(cell)


def notebook_messages(nb):
    """(cell id, source, cell number from 1) of every message cell."""
    return [(c.id, c.source, i) for i, c in enumerate(nb.cells, 1) if is_message(c)]


def blocks(text):
    """(first line, end line) of each top-level markdown block, trailing blank lines left out."""
    from markdown_it import MarkdownIt
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    lines = text.splitlines()
    return [(t.map[0], _content_end(lines, *t.map)) for t in tokens
            if t.level == 0 and t.map and t.nesting >= 0]  # an opening token, or a fence, rule, html


def _content_end(lines, a, b):
    while b > a and not lines[b - 1].strip():
        b -= 1
    return b


def page_messages(stem, text):
    """("<stem>:<n>", block source, first line from 1) of every block of a docs page."""
    lines = text.splitlines()
    return [(f"{stem}:{n}", "\n".join(lines[a:b]), a + 1) for n, (a, b) in enumerate(blocks(text))]


def markdown_shape(text):
    """The block structure a translation must keep, in order: each table as "table of R rows × C cells"
    (columns per row), each heading by level ("h2"), each code block ("code"); prose may change freely."""
    from markdown_it import MarkdownIt
    shape, cells = [], []
    for t in MarkdownIt("commonmark").enable("table").parse(text):
        if t.type == "table_open":
            cells = []
        elif t.type in ("th_open", "td_open"):
            cells[-1] += 1
        elif t.type == "tr_open":
            cells.append(0)
        elif t.type == "table_close":
            shape.append(f"table of {len(cells)} rows × {'/'.join(map(str, sorted(set(cells))))} cells")
        elif t.type == "heading_open":
            shape.append(t.tag)
        elif t.type in ("fence", "code_block"):
            shape.append("code")
    return shape
