"""The Chinese edition's cells: setup() calls `translate_cells()`, and before each later cell is compiled IPython
replaces each literal it shows (`display_strings`) that notebooks.po translates; data stays as written."""
import ast
import contextlib
import pathlib
import string
from functools import lru_cache

from matplotlib import font_manager

from ..i18n import NOTEBOOK_DOMAIN, catalog, language, shown

# A literal is shown as an argument of these calls or a label keyword; one assigned or looped over ("any") may
# be data too, and notebooks.po then keeps its msgid as itself. Keys, indices and other calls' arguments are data.
TEXT_CALLS = {"print", "table"}
FIGURE_CALLS = {"set_title", "set_xlabel", "set_ylabel", "suptitle", "text", "annotate", "set_xticks",
                "set_yticks", "barh", "heatmap", "heatmaps", "roofline", "bench_plot"}  # matplotlib's and plots'
LABEL_KEYWORDS = {"label", "title", "suptitle", "xlabel", "ylabel", "columns"}
PASS_CALLS = {"join", "format", "replace", "append", "extend", "min", "max"}  # text goes where their result goes
_THROUGH = (ast.BoolOp, ast.BinOp, ast.Tuple, ast.List, ast.Set, ast.Starred, ast.JoinedStr, ast.FormattedValue,
            ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp, ast.Dict, ast.IfExp, ast.Attribute)
SHOWN = "_tiledlab_shown"  # the name `translate_cells` gives `shown` in the notebook's namespace
# Fonts with Simplified Chinese glyphs, preferred first: Debian/Ubuntu's fonts-noto-cjk (the CI's), Adobe's, ...
CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans CJK JP", "Source Han Sans SC", "WenQuanYi Zen Hei",
             "WenQuanYi Micro Hei", "Microsoft YaHei", "PingFang SC", "Heiti SC", "SimHei", "Noto Sans SC")
# Their files' names, for fonts installed after matplotlib cached its list of fonts (it does not look again).
CJK_FILES = ("notosanscjk", "notosanssc", "sourcehansans", "wqy-", "msyh", "pingfang", "stheiti", "simhei")


def template(node):
    """The msgid of a str or f-string literal: fields as written (`{launch_ms:.3f}`), literal braces doubled."""
    if isinstance(node, ast.Constant):
        return node.value
    return "".join(v.value.replace("{", "{{").replace("}", "}}") if isinstance(v, ast.Constant)
                   else _field(v) for v in node.values)


def _field(value):
    return ast.unparse(ast.JoinedStr([value]))[2:-1]  # f'{x:,}' -> {x:,}


def _callee(call):
    return call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)


def _shown(node, parent):
    """Where the literal `node` ends up: "text", "figure", "any" (assigned or looped over), or None (data)."""
    child = node
    while (up := parent.get(child)) is not None:
        if isinstance(up, ast.keyword):  # table(..., columns={...}) names a table's columns
            return ("text" if up.arg == "columns" else "figure") if up.arg in LABEL_KEYWORDS else None
        if isinstance(up, ast.Call) and child is not up.func:
            name = _callee(up)
            if name not in PASS_CALLS:
                return "text" if name in TEXT_CALLS else "figure" if name in FIGURE_CALLS else None
        elif isinstance(up, (ast.For, ast.comprehension)):
            return "any" if child is up.iter else None
        elif isinstance(up, (ast.Assign, ast.AnnAssign, ast.Return, ast.Expr)):
            return "any"
        elif isinstance(up, ast.Subscript) and child is not up.value or \
                isinstance(up, ast.Dict) and any(key is child for key in up.keys) or \
                isinstance(up, ast.IfExp) and child is up.test or \
                isinstance(up, ast.Attribute) and up.attr not in PASS_CALLS or \
                not isinstance(up, (*_THROUGH, ast.Call)):
            return None
        child = up
    return None


def display_strings(tree):
    """(node, msgid, where: see `_shown`) of each literal a cell's tree may show (no docstrings, no "")."""
    parent = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    literals = [n for n in ast.walk(tree)
                if isinstance(n, ast.JoinedStr) and not isinstance(parent.get(n), ast.FormattedValue)
                or isinstance(n, ast.Constant) and isinstance(n.value, str)
                and not isinstance(parent.get(n), (ast.JoinedStr, ast.Expr))]
    found = [(n, template(n), _shown(n, parent)) for n in literals]
    return [(n, msgid, where) for n, msgid, where in found if where and msgid]  # "" would look up the header


def translated(node, msgid, msgstr):
    """A new literal for `node` saying `msgstr`; None when msgstr names a field the f-string lacks."""
    if isinstance(node, ast.Constant):
        return ast.copy_location(ast.Constant(msgstr), node)
    fields = {_field(v): v for v in node.values if not isinstance(v, ast.Constant)}
    try:
        parts = list(pieces(msgstr))
    except ValueError:
        return None
    if any(field is not None and field not in fields for _text, field in parts):
        return None
    values = [ast.Constant(text) if field is None else fields[field] for text, field in parts]
    for field in fields.values():  # a field's value, a level's name say, is shown in Chinese too
        field.value = _shown_call(field.value)
    return ast.fix_missing_locations(ast.copy_location(ast.JoinedStr(values), node))


def _shown_call(expr):
    return ast.copy_location(ast.Call(ast.Name(SHOWN, ast.Load()), [expr], []), expr)


def _wrap_drawn_values(tree):
    """Each value a figure call draws that is not a literal (a column of level names) through `shown`."""
    for call in [n for n in ast.walk(tree) if isinstance(n, ast.Call)]:
        drawn = call.args if _callee(call) in FIGURE_CALLS else []
        call.args = [_shown_call(a) if a in drawn and not isinstance(a, (ast.Constant, ast.JoinedStr, ast.Starred))
                     else a for a in call.args]
        for k in call.keywords:
            if k.arg in LABEL_KEYWORDS - {"columns"} and not isinstance(k.value, (ast.Constant, ast.JoinedStr)):
                k.value = _shown_call(k.value)


def pieces(text):
    """(text, None) and (None, field as written) pieces of a msgstr, as string.Formatter reads them."""
    for literal, name, spec, conversion in string.Formatter().parse(text):
        if literal:
            yield literal, None
        if name is not None:
            yield None, "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"


class CellTranslator(ast.NodeTransformer):
    """IPython's AST transformer: a cell's shown literals in Chinese (figure words only with a CJK font)."""

    def visit_Module(self, tree):
        if language() != "zh":
            return tree
        notebooks, drawn = catalog(NOTEBOOK_DOMAIN), cjk_font() is not None
        self.new = {}  # literal: its translation (None: kept)
        for node, msgid, where in display_strings(tree):
            msgstr = notebooks.gettext(msgid)
            if msgstr != msgid and (where == "text" or drawn):
                self.new[node] = translated(node, msgid, msgstr)
        if drawn:
            _wrap_drawn_values(tree)
        return ast.fix_missing_locations(self.generic_visit(tree))

    def generic_visit(self, node):  # each shown literal replaced by its translation
        node = super().generic_visit(node)
        return self.new.get(node) or node


def translate_cells():
    """In the Chinese edition, under IPython: have every later cell's shown words translated (once)."""
    from IPython import get_ipython  # installed with ipywidgets, a dependency
    shell = get_ipython()
    if shell is not None and language() == "zh" and \
            not any(isinstance(t, CellTranslator) for t in shell.ast_transformers):
        shell.user_ns[SHOWN] = shown
        shell.ast_transformers.append(CellTranslator())


@lru_cache(maxsize=1)
def _found_late():
    """Add the system's CJK fonts matplotlib has not cached yet; how many."""
    known = {f.fname for f in font_manager.fontManager.ttflist}
    late = [path for path in font_manager.findSystemFonts()
            if path not in known and any(name in pathlib.Path(path).name.lower() for name in CJK_FILES)]
    for path in late:
        with contextlib.suppress(OSError, RuntimeError, ValueError):  # a font file FreeType cannot read
            font_manager.fontManager.addfont(path)
    return len(late)


def cjk_font():
    """The first of CJK_FONTS that matplotlib knows (looking once for fonts installed since), or None."""
    def first():
        known = {f.name for f in font_manager.fontManager.ttflist}
        return next((name for name in CJK_FONTS if name in known), None)
    return first() or (_found_late() and first()) or None

