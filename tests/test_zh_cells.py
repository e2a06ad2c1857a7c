"""Every Chinese notebook as a Chinese run's kernel sees it, without the run: the browser runs two of the
eight in Chinese (tests/browser/test_lab.py), nbval every English one, and `pytest -m slow` (.ci/run)
every Chinese one on the simulator (tests/test_zh_reader.py). What a Chinese Run All adds to the English
one is the language: the same code cells (tests/test_edition.py), each rewritten by cells.CellTranslator
before it runs, and the same notebook metadata but its language, so JupyterLab opens it as it opens the
English one (not marked modified: checked on 00 and 02 in the browser)."""
import ast
import copy
import json
import pathlib

import pytest

from tiledlab.notebook import cells

ROOT = pathlib.Path(__file__).resolve().parents[1]
ZH = sorted((ROOT / "notebooks" / "zh").glob("[0-9][0-9]_*.ipynb"))


def code_cells(path):
    return ["".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "code"]


def test_there_are_eight_chinese_notebooks():
    assert [p.name for p in ZH] == sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert len(ZH) == 8


class _Words(ast.NodeTransformer):
    """A cell's tree with its words taken out: each str or f-string literal a placeholder, each
    `_tiledlab_shown(value)` its value; `fields`: each f-string's fields, in the order of the f-strings."""

    def __init__(self):
        self.fields = []

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id == cells.SHOWN and len(node.args) == 1:
            return self.visit(node.args[0])
        return self.generic_visit(node)

    def visit_JoinedStr(self, node):
        self.fields.append(sorted(ast.dump(self.visit(v)) for v in node.values if isinstance(v, ast.FormattedValue)))
        return ast.Constant("")

    def visit_Constant(self, node):
        return ast.Constant("") if isinstance(node.value, str) else node


def code(tree):
    """(the code a translation must keep, each f-string's fields)."""
    words = _Words()
    return ast.dump(words.visit(copy.deepcopy(tree))), words.fields


@pytest.mark.parametrize("path", ZH, ids=lambda p: p.stem)
def test_every_code_cell_is_python_as_the_chinese_kernel_rewrites_it(path, monkeypatch):
    """What the Chinese kernel runs: each cell (IPython's % lines left out) through CellTranslator, which
    replaces its shown literals by their msgstrs and passes shown values through `shown`. The rewritten
    cell must be one Python's parser reads back as it is (no node the parser cannot make: a bytes piece
    in an f-string, a field without its value), compile, and keep every statement and expression but
    its words (an f-string only its own fields); a rewrite that breaks a cell fails here, notebook and cell named."""
    monkeypatch.setenv("TILEDLAB_LANG", "zh")
    translated = 0
    for i, source in enumerate(code_cells(path)):
        where = f"{path.name} code cell {i}"
        tree = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))))
        before = ast.dump(tree)
        kept = code(tree)
        new = cells.CellTranslator().visit(tree)
        translated += ast.dump(new) != before
        assert ast.dump(ast.parse(ast.unparse(new))) == ast.dump(new), where
        compile(new, where, "exec")
        now = code(new)
        assert now[0] == kept[0], f"{where}: the translation changed its code"
        # a translation may place an f-string's fields in another order or leave one out (an English plural's
        # "s"), never show another
        assert [f for f, was in zip(now[1], kept[1]) if not set(f) <= set(was)] == [], where
    assert translated, f"{path.name}: no cell says anything in Chinese"


@pytest.mark.parametrize("path", ZH, ids=lambda p: p.stem)
def test_its_metadata_is_the_english_notebooks_and_its_language(path):
    zh, en = (json.loads(p.read_text(encoding="utf-8")) for p in (path, path.parents[1] / path.name))
    assert (zh["nbformat"], zh["nbformat_minor"]) == (en["nbformat"], en["nbformat_minor"])
    assert {k: v for k, v in zh["metadata"].items() if k != "language"} == en["metadata"]
    assert zh["metadata"]["language"].startswith("zh")
    assert [c.get("id") for c in zh["cells"]] and all(c.get("id") for c in zh["cells"])
