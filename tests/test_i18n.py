"""The Chinese edition's side of the package (tiledlab.i18n, tiledlab.notebook.cells): the language switch, check() and predict()
answering in Chinese, a catalog that holds every message of the code, and figures labelled in Chinese
only where a font can draw it (English labels and a Chinese caption otherwise, never missing glyphs)."""
import io
import json
import os
import pathlib
import re
import string
import warnings

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from babel.messages.pofile import read_po  # noqa: E402
from numba import cuda  # noqa: E402

from tiledlab import i18n  # noqa: E402
from tiledlab.core.kernels import naive  # noqa: E402
from tiledlab.counting import exercises  # noqa: E402
from tiledlab.counting.exercises import check, predict  # noqa: E402
from tiledlab.notebook import cells, plots  # noqa: E402
from tools import code_catalog  # noqa: E402

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def zh(monkeypatch):
    monkeypatch.setenv("TILEDLAB_LANG", "zh")


@pytest.fixture
def en(monkeypatch, tmp_path):
    monkeypatch.delenv("TILEDLAB_LANG", raising=False)
    monkeypatch.chdir(tmp_path)  # no LANGUAGE file here


def test_language_from_the_environment_then_a_language_file(monkeypatch, tmp_path, en):
    assert i18n.language() == "en"
    (tmp_path / "LANGUAGE").write_text("zh\n")  # what notebooks/zh/ holds
    assert i18n.language() == "zh"
    (tmp_path / "LANGUAGE").write_text("en\n")
    assert i18n.language() == "en"
    for value in ("zh", "zh_CN", "ZH-cn"):
        monkeypatch.setenv("TILEDLAB_LANG", value)
        assert i18n.language() == "zh"
    assert i18n.gettext("Passed.") == "通过。"


def catalog():
    with open(i18n.PO, "rb") as f:
        return read_po(f)


def fields(text):
    return sorted(name for _, name, spec, _ in string.Formatter().parse(text) if name is not None)


def test_every_message_of_the_code_is_in_the_catalog_and_translated():
    po = {m.id: m for m in catalog() if m.id}
    code = code_catalog.extract()
    assert len(code) > 100 and set(code) == set(po), (set(code) ^ set(po))
    for message in po.values():
        assert message.string and not message.fuzzy, message.id
        assert message.string != message.id, message.id
        assert fields(message.string) == fields(message.id), message.id  # the same named placeholders


def test_the_compiled_catalog_matches_the_po():
    assert i18n.MO.read_bytes() == code_catalog.compile_catalog(mo=None), "run python -m tools.code_catalog"


def test_updating_the_catalog_from_the_code_changes_nothing_but_its_date(tmp_path):
    po = tmp_path / "tiledlab.po"
    po.write_bytes(i18n.PO.read_bytes())
    code_catalog.update_catalog(po)
    dated = re.compile(r'"POT-Creation-Date: .*"')
    assert dated.sub("", po.read_text()) == dated.sub("", i18n.PO.read_text())


def test_the_notebooks_hints_are_in_the_catalog():
    given = set()
    for path in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            given |= set(re.findall(r'hint="([^"]+)"', "".join(cell["source"])))
    assert given and given <= set(exercises.NOTEBOOK_HINTS)


def test_predict_answers_in_chinese(zh, capsys):
    assert predict(5, 5) and predict((1, 2), (1, 3)) is False
    out = capsys.readouterr().out
    assert out == ("正确！实测值是 5。\n第 1 个数：1 正确。\n第 2 个数：还不对：2 偏小。\n"
                   "再想一想，然后重新运行这个单元格。\n")


def test_predict_stays_english_by_default(en, capsys):
    assert predict(5, 5) and predict((1, 2), (1, 3)) is False
    assert capsys.readouterr().out == ("Right: measured 5.\nnumber 1: 1 is right.\nnumber 2: not yet: 2 is too low.\n"
                                       "Think it through again, then re-run the cell.\n")


@cuda.jit
def first_column_only(A, B, C):
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        C[i, j] = A[i, 0] * B[0, j]


def test_a_failing_kernel_check_answers_in_chinese(zh, capsys):
    assert not check(naive, tile=4, seed=0, hint=exercises.NOTEBOOK_HINTS[1])
    out = capsys.readouterr().out
    assert "结果正确，但 8,192 次加载超过了本练习允许的 2,048 次：让 A 的一个分块" in out
    assert not check(first_column_only, tile=4, seed=0)
    out = capsys.readouterr().out
    assert "的结果不对" in out and "你的结果：" in out and "Wrong" not in out


def test_a_failing_kernel_check_stays_english_by_default(en, capsys):
    assert not check(first_column_only, tile=4, seed=0)
    out = capsys.readouterr().out
    assert out.startswith("Wrong result for A 5×23 · B 23×7 with tile=4: ") and not CJK.search(out)


def rows():
    return [dict(kernel=k, tile=t, N=n, tflops=f * n, median_ms=1 / n, min_ms=0.9 / n, max_ms=1.1 / n)
            for k, t, f in (("naive", 16, 1.0), ("tiled", 16, 2.0)) for n in (256, 512, 1024)]


def heat_maps():
    counts = np.arange(16).reshape(4, 4) % 5
    return plots.heatmaps([counts, counts.T], ["naive", "tiled"])[0]


def bench():
    return plots.bench_plot(rows(), "naive · tiled").figure


def texts(fig):
    return " ".join(t.get_text() for t in fig.findobj(matplotlib.text.Text))


def rendered(make):
    """(the texts of the figure `make()` draws, the messages of every warning drawing it to a PNG raised)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = make()
        fig.savefig(io.BytesIO(), format="png")
    plt.close(fig)
    return texts(fig), [str(w.message) for w in caught]


def missing(warned):
    return [w for w in warned if re.search(r"Glyph .* missing from", w)]


def test_a_chinese_figure_draws_every_glyph(zh, monkeypatch, capsys):
    if cells.cjk_font() is None:
        if os.environ.get("TILEDLAB_REQUIRE_CJK_FONT"):
            pytest.fail("no CJK font: apt-get install fonts-noto-cjk")
        pytest.skip("no CJK font installed (Debian: apt-get install fonts-noto-cjk)")
    monkeypatch.setitem(plt.rcParams, "font.sans-serif", list(plt.rcParams["font.sans-serif"]))
    for make, label in ((heat_maps, "次数（各子图使用同一色标）"), (bench, "N（N×N 方阵）")):
        shown, warned = rendered(make)
        assert label in shown and not missing(warned), warned
    assert plt.rcParams["font.sans-serif"][0] == cells.cjk_font()
    assert capsys.readouterr().out == ""  # no caption: the labels are Chinese


def test_without_a_cjk_font_labels_stay_english_with_a_chinese_caption(zh, monkeypatch, capsys):
    monkeypatch.setattr(cells, "cjk_font", lambda: None)
    monkeypatch.setattr(plots, "_caption", {"shown": False})
    for make, label in ((heat_maps, "count (same scale in every panel)"), (bench, "N (square matrices N×N)")):
        shown, warned = rendered(make)
        assert label in shown and not CJK.search(shown) and not missing(warned), warned
    out = capsys.readouterr().out
    assert out.count("没有找到带中文字符的字体") == 1 and "fonts-noto-cjk" in out


def test_english_figures_are_unchanged(en, capsys):
    for make in (heat_maps, bench):
        shown, warned = rendered(make)
        assert "row" in shown or "N (square matrices N×N)" in shown
        assert not CJK.search(shown) and not missing(warned)
    assert capsys.readouterr().out == ""


def test_the_chinese_takeaway_slides_draw_every_glyph(zh, monkeypatch):
    if cells.cjk_font() is None:
        pytest.skip("no CJK font installed (Debian: apt-get install fonts-noto-cjk)")
    from tiledlab.notebook import takeaways
    monkeypatch.setitem(plt.rcParams, "font.sans-serif", list(plt.rcParams["font.sans-serif"]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for fig in takeaways.figures().values():  # drawn after their rc_context has put the fonts back
            fig.savefig(io.BytesIO(), format="png", dpi=30)
            assert CJK.search(texts(fig))
            plt.close(fig)
    assert not missing([str(w.message) for w in caught])


# --- a notebook's own words, translated as its cells run -----------------------------------------

CELL = '''
def helper():
    """A docstring stays."""
    return f"{n:,} loads in all"
print("matches numpy:", ok)
table(["kernel", "measured"], rows, columns={"kernel": "kernel"})
ax.set_title(f"N = {n}: {t:.2f} ms"); ax.plot(x, y, "o-", label="measured loads")
r["kernel"], df.query("N == @n"), data.load("h200/bench.csv"), kernel == "naive"
steps = [("naive: a thread per element", "naive")]
'''


def test_display_strings_are_the_literals_a_cell_shows_and_not_its_data():
    import ast
    found = {(msgid, where) for _, msgid, where in cells.display_strings(ast.parse(CELL))}
    assert found == {("{n:,} loads in all", "any"), ("matches numpy:", "text"), ("kernel", "text"),
                     ("measured", "text"), ("N = {n}: {t:.2f} ms", "figure"), ("measured loads", "figure"),
                     ("naive: a thread per element", "any"), ("naive", "any")}


def test_a_translated_f_string_may_place_its_fields_in_another_order():
    import ast
    tree = ast.parse('f"{a} of {b:.1f} ms"', mode="eval")
    node = tree.body
    new = cells.translated(node, cells.template(node), "{b:.1f} ms 中的 {a}")
    assert eval(compile(ast.Expression(new), "<t>", "eval"), {"a": 3, "b": 2.25, cells.SHOWN: i18n.shown}) == "2.2 ms 中的 3"
    assert cells.translated(node, cells.template(node), "{c} 不存在") is None  # a field the code lacks: kept English
    for msgstr, shown in (("{{{a}}} 之 {b:.1f}", "{3} 之 2.2"), ("{a} 与 {b:.1f} }", None)):  # a stray brace: English
        node = ast.parse('f"{a} of {b:.1f} ms"', mode="eval").body
        new = cells.translated(node, cells.template(node), msgstr)
        values = {"a": 3, "b": 2.25, cells.SHOWN: i18n.shown}
        assert shown == (new and eval(compile(ast.Expression(new), "<t>", "eval"), values))


@pytest.fixture
def shell(monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    monkeypatch.setattr(shell, "ast_transformers", [])
    return shell


def test_a_cell_of_the_chinese_edition_prints_chinese_and_keeps_its_data(zh, shell, capsys):
    shell.user_ns[cells.SHOWN] = i18n.shown
    shell.ast_transformers.append(cells.CellTranslator())
    shell.run_cell('d = {"matches numpy:": 1}\nprint("matches numpy:", d["matches numpy:"] == 1)')
    assert capsys.readouterr().out == "与 numpy 一致： True\n"  # the key is data: left as written
    shell.run_cell('name = "tiled"\nprint(f"{name}, measured")')  # an f-string, its field kept
    assert capsys.readouterr().out == "tiled，实测\n"


def test_setup_installs_the_translation_only_in_the_chinese_edition(shell, monkeypatch, capsys):
    monkeypatch.setattr("IPython.get_ipython", lambda: shell)
    monkeypatch.delenv("TILEDLAB_LANG", raising=False)
    cells.translate_cells()
    assert shell.ast_transformers == []
    shell.run_cell('print("matches numpy:", True)')
    assert capsys.readouterr().out == "matches numpy: True\n"
    monkeypatch.setenv("TILEDLAB_LANG", "zh")
    cells.translate_cells()
    cells.translate_cells()  # once
    assert len(shell.ast_transformers) == 1


def test_a_table_shows_headings_and_data_values_in_chinese(zh, capsys):
    from tiledlab.notebook import table
    table(["level", "ns per load"], [["shared memory", 19.7], ["", 1]])
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["层级", "每次加载", "ns"] and "共享内存" in out[2] and "Project-Id" not in "".join(out)
    assert len(out[0]) < len(out[1])  # a wide character takes two columns: the rule lines up under the heading


def test_a_value_of_the_data_is_shown_in_chinese_where_it_is_shown(zh):
    import pandas as pd
    assert i18n.shown("shared memory") == "共享内存" and i18n.shown("naive") == "naive" and i18n.shown(3.5) == 3.5
    levels = pd.Series(["shared memory", "L1 (16 KiB ring)"])
    assert i18n.shown(levels) == ["共享内存", "L1（16 KiB 环形缓冲区）"]
    numbers = [1, 2]
    assert i18n.shown(numbers) is numbers and i18n.shown(range(3)) == range(3)
