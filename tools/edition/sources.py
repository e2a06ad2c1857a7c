"""What the Chinese edition is made from: the English notebooks and docs pages, and their messages.

A message is (context, msgid, where): for a notebook, one per markdown cell with text (context = the
cell's id, msgid = its source; a `links` cell's URLs written {1}, {2}, ...), and one per comment of a
code cell a student fills in or Colab runs first (context = "<cell id>#<n>", msgid = the comment's text,
a block of comment lines joined into one); for a docs page, one per top-level markdown block (context =
"<stem>:<n>", msgid = the block's source lines joined with newlines). What the notebooks' code prints
and draws is one catalog for all of them, in the package (CODE_CATALOG; `code_strings`).
"""
import io
import pathlib
import re
import tokenize

import nbformat

from classroom.series import read_notebook  # noqa: F401  (the edition's modules read notebooks from here)
from tiledlab.counting.outcomes import EXERCISE

from ..links import INSTALL_TAG, LINKS_TAG  # the edition translates their words, keeps URLs, stores no output

NOTEBOOKS = pathlib.Path("notebooks")
ZH_NOTEBOOKS = NOTEBOOKS / "zh"
DOCS = pathlib.Path("docs")
ZH_DOCS = DOCS / "zh"
DOC_PAGES = ("index", "teaching", "glossary")
LOCALE = pathlib.Path("locale/zh_CN/LC_MESSAGES")
CODE_CATALOG = pathlib.Path("tiledlab/locale/zh_CN/LC_MESSAGES/notebooks.po")  # compiled to the .mo tiledlab.i18n reads
_URL = re.compile(r"\]\((https?://[^)\s]+)\)")


def english_notebooks(root):
    """notebooks/*.ipynb under `root`, in order."""
    return sorted((pathlib.Path(root) / NOTEBOOKS).glob("*.ipynb"))


def doc_pages(root):
    """docs/<page>.md of each of DOC_PAGES under `root`, those that exist."""
    return [p for p in (pathlib.Path(root) / DOCS / f"{s}.md" for s in DOC_PAGES) if p.exists()]


def is_links(cell):
    return LINKS_TAG in cell.get("metadata", {}).get("tags", [])


def is_message(cell):
    """A markdown cell with text: its source is a message (a `links` cell's with its URLs as fields)."""
    return cell.cell_type == "markdown" and bool(cell.source)


def links_message(source):
    """A `links` cell's msgid and its URLs: each markdown link target `](url)` written `]({n})`."""
    urls = _URL.findall(source)
    n = iter(range(1, len(urls) + 1))
    return _URL.sub(lambda _m: f"]({{{next(n)}}})", source), urls


def has_comments_translated(cell):
    """A code cell whose comments the edition translates: an exercise's scaffolding, Colab's install cell."""
    return cell.cell_type == "code" and (bool(EXERCISE.match(cell.source))
                                         or INSTALL_TAG in cell.get("metadata", {}).get("tags", []))


def comments(source):
    """The comments of Python `source`: (first row, last row, column, text), rows from 1; consecutive
    comment lines at one indentation are one comment (their lines joined by spaces); a comment after
    code is one of its own; tools' directives (# NBVAL_..., # noqa: ...) are left out."""
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.COMMENT or tok.string.lstrip("# ").startswith(("NBVAL_", "noqa", "type:")):
            continue
        (row, col), text = tok.start, tok.string[1:].strip()
        alone = not tok.line[:col].strip()
        last = found[-1] if found else None
        if alone and last and last[4] and last[1] == row - 1 and last[2] == col:
            found[-1] = (last[0], row, col, f"{last[3]} {text}", True)
        else:
            found.append((row, row, col, text, alone))
    return [f[:4] for f in found]


def notebook_messages(nb):
    """(context, msgid, cell number from 1) of every message of a notebook (see the module's docstring)."""
    found = []
    for i, c in enumerate(nb.cells, 1):
        if is_message(c):
            found.append((c.id, links_message(c.source)[0] if is_links(c) else c.source, i))
        elif has_comments_translated(c):
            found += [(f"{c.id}#{k}", text, i) for k, (*_, text) in enumerate(comments(c.source), 1)]
    return found


def code_strings(nb):
    """(msgid, cell number from 1) of each literal the notebook's code cells may show (tiledlab.notebook.cells'
    display_strings) that has words: two letters in a row outside its fields, and not a name or a path
    (`naive_unsigned`, `h200/bench.csv`). Colab's install cell runs before the translation does: left out."""
    import ast

    from tiledlab.notebook import cells
    found = []
    for i, c in enumerate(nb.cells, 1):
        if c.cell_type != "code" or INSTALL_TAG in c.get("metadata", {}).get("tags", []):
            continue
        for _node, msgid, _where in cells.display_strings(ast.parse(c.source)):
            words = re.sub(r"\{\{|\}\}|\{(?:[^{}]|\{[^{}]*\})*\}", "", msgid)
            if re.search(r"[A-Za-z]{2}", words) and not re.fullmatch(r"[\w.@/:-]*[_.@/\d][\w.@/:-]*", words):
                found.append((msgid, i))
    return found


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
