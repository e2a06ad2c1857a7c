"""The Chinese notebooks and pages, generated from the English ones and the catalogs.

A markdown cell (a docs block) takes its catalog's translation, or stays English where there is none
(reported); a `links` cell too, its notebook URLs pointed at notebooks/zh/. Relative link targets are
moved one folder down. Code and raw cells are copied, their metadata too; an exercise's (and Colab's
install cell's) comments are translated, every statement left as it is. A code cell keeps the outputs
of the Chinese notebook where its source is the one already there (a run in Chinese stored them), and
takes the English notebook's where it is new or changed (until the Chinese edition is run again).
"""
import copy
import re

import nbformat

from tiledlab.i18n import width

from ..links import INSTALL_TAG, in_chinese
from . import catalogs, sources

LANGUAGE_TAG = "zh-CN"  # the Chinese notebooks' metadata "language"
LANGUAGE_FILE = "zh\n"  # notebooks/zh/LANGUAGE: tiledlab.i18n.language() reads it in the kernel's folder
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_INLINE = re.compile(r"(\]\(\s*<?)([^)\s>]+)")  # [text](target and ![alt](target
_HTML = re.compile(r"""(\b(?:src|href)\s*=\s*["'])([^"']+)""")
_REFERENCE = re.compile(r"^( {0,3}\[[^\]]+\]:\s*<?)(\S+?)(>?(?:\s|$))", re.MULTILINE)
_NOTEBOOK_URL = re.compile(r"notebooks/([\w.-]+\.ipynb)(?=[)\"'\s>]|$)")
_SITE_NOTEBOOK = re.compile(r"^/notebooks/(?!zh/)")


_CODE = re.compile(r"```.*?```|~~~.*?~~~|(`+).+?(?<!`)\1(?!`)", re.S)  # fenced blocks and code spans


def relocate(markdown, stays):
    """`markdown` with each relative link target t moved one folder down (`../` + t), except where
    stays(path of t) says the target has a twin in the Chinese folder; code is left as it is."""
    pieces, last = [], 0
    for code in _CODE.finditer(markdown):
        pieces += [_relocate_links(markdown[last:code.start()], stays), code[0]]
        last = code.end()
    return "".join(pieces + [_relocate_links(markdown[last:], stays)])


def _relocate_links(markdown, stays):
    def move(match):
        target = match[2]
        path = re.split(r"[#?]", target, maxsplit=1)[0]
        if _SCHEME.match(target) or target.startswith(("/", "#")) or not path or stays(path):
            return match[0]
        return match[1] + "../" + target + (match[3] if match.re is _REFERENCE else "")
    for pattern in (_INLINE, _HTML, _REFERENCE):
        markdown = pattern.sub(move, markdown)
    return markdown


def _sibling_notebook(path):
    return "/" not in path and path.endswith(".ipynb")


def _sibling_page(path):
    return "/" not in path and path.removesuffix(".md") in sources.DOC_PAGES


def links_cell(source):
    """A `links` cell's source with URLs ending in notebooks/<stem>.ipynb pointed at notebooks/zh/."""
    return _NOTEBOOK_URL.sub(r"notebooks/zh/\1", source)


def _ending_as(translation, english):
    """The translation ending in the English text's trailing newlines (a catalog may differ there)."""
    return translation.rstrip("\n") + english[len(english.rstrip("\n")):]


def notebook(nb, catalog, previous=None):
    """The Chinese notebook of `nb` (`previous`: the Chinese notebook as it is, whose outputs a code cell
    keeps), and the contexts of the messages left in English."""
    found = catalogs.translations(catalog) if catalog is not None else {}
    kept = {c.id: c for c in previous.cells if c.cell_type == "code"} if previous is not None else {}
    zh, english = copy.deepcopy(nb), []
    zh.metadata["language"] = LANGUAGE_TAG
    for cell in zh.cells:
        if sources.is_links(cell):
            msgid, urls = sources.links_message(cell.source)
            translation = found.get((msgid, cell.id))
            english += [] if translation else [cell.id]
            cell.source = links_cell(_filled(translation, urls) if translation else cell.source)
        elif sources.is_message(cell):
            translation = found.get((cell.source, cell.id))
            if translation is None:
                english.append(cell.id)
            text = cell.source if translation is None else _ending_as(translation, cell.source)
            cell.source = relocate(text, _sibling_notebook)
        elif sources.has_comments_translated(cell):
            cell.source, left = commented(cell.source, cell.id, found)
            english += left
            if INSTALL_TAG in cell.metadata.get("tags", []):
                cell.source = in_chinese(cell.source)
        if cell.cell_type == "code" and cell.id in kept and kept[cell.id].source == cell.source:
            _outputs_of(kept[cell.id], cell)
    return zh, english


def _filled(translation, urls):
    return re.sub(r"\]\(\{(\d+)\}\)", lambda m: f"]({urls[int(m[1]) - 1]})", translation)


def _outputs_of(run, cell):
    """The outputs, execution count and timing of the Chinese notebook's cell `run`, onto `cell`."""
    cell.outputs, cell.execution_count = copy.deepcopy(run.outputs), run.execution_count
    cell.metadata.pop("execution", None)
    if "execution" in run.metadata:
        cell.metadata["execution"] = copy.deepcopy(run.metadata["execution"])


def _wrapped(text, columns):
    """`text` in lines of at most `columns` columns (CJK characters two), broken between words or
    between CJK characters, never inside a Latin word or a `code span`."""
    lines, line = [], ""
    for piece in re.findall(r"`[^`]*`|[A-Za-z0-9_.,:;()\[\]'\"=+*/<>-]+|\s+|.", text):
        if line and width(line + piece.rstrip()) > columns and piece not in "，。；：、）！？":  # no line starts with those
            lines.append(line.rstrip())
            line = piece.lstrip()
        else:
            line += piece
    return lines + [line.rstrip()] if line.strip() else lines


def commented(source, cell_id, found):
    """`source` with each comment (sources.comments) in its catalog translation, and the contexts left in
    English. A comment on lines of its own is wrapped in lines of even length, up to 110 columns (or its
    longest English line's width, when longer)."""
    lines, english = source.split("\n"), []
    for k, (first, last, col, text) in reversed(list(enumerate(sources.comments(source), 1))):
        translation = found.get((text, f"{cell_id}#{k}"))
        if translation is None:
            english.append(f"{cell_id}#{k}")
            continue
        if lines[first - 1][:col].strip():  # after code, on its line
            lines[first - 1] = lines[first - 1][:col] + "# " + translation.strip()
            continue
        text = translation.strip()
        columns = max(max(width(line) for line in lines[first - 1:last]), 110) - col - 2
        balanced = -(-width(text) // -(-width(text) // columns)) + 4  # as many lines as needed, of even length
        lines[first - 1:last] = [" " * col + "# " + part for part in _wrapped(text, min(columns, balanced))]
    return "\n".join(lines), english[::-1]


def notebook_text(nb):
    """What nbformat.write puts in the file."""
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


def page(text, catalog, stem):
    """The Chinese docs page of the English `text`, and the contexts of the blocks left in English."""
    found = catalogs.translations(catalog) if catalog is not None else {}
    lines, english = text.splitlines(), []
    out, last = [], 0
    for (context, msgid, _), (a, b) in zip(sources.page_messages(stem, text), sources.blocks(text)):
        translation = found.get((msgid, context))
        if translation is None:
            english.append(context)
        out += lines[last:a] + _page_block(translation or msgid).split("\n")
        last = b
    out += lines[last:]
    return "\n".join(out) + ("\n" if text.endswith("\n") else ""), english


def _page_block(block):
    """A block of docs/zh/: relative targets one folder down, the series' notebooks the Chinese ones."""
    block = relocate(block.rstrip("\n"), _sibling_page)
    block = re.sub(r"(\]\(\s*)/notebooks/(?!zh/)", r"\1/notebooks/zh/", block)  # [0 · …](/notebooks/00_…)
    if block.startswith("```{toctree}"):
        block = "\n".join(_SITE_NOTEBOOK.sub("/notebooks/zh/", line) for line in block.split("\n"))
    return block
