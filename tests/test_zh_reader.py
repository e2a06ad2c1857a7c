"""What a reader of the Chinese edition sees is Chinese: every figure the package draws (titles,
suptitles, axis labels, legends, colour bars, tick labels that are words, annotations), the words the
notebooks' own figures use, and every line the zh notebooks store. A Latin word is allowed only where
it is a name: a kernel or identifier, a unit, a product or tool, or a term the glossary keeps in English.

The stored outputs of notebooks/zh/ are Chinese only after the zh notebooks have been run in Chinese
(on the H200, by the lead: tests/data/zh_outputs.txt says which are). The stored-output test reads those;
nbval does not compare the others' stored outputs (tests/conftest.py), though it still runs every cell.

The slow test (`pytest -m slow`) runs every zh notebook on this backend, in Chinese, and checks every
figure it draws and every line it prints.
"""
import ast
import io
import json
import os
import pathlib
import re
import warnings

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from tiledlab import data, i18n  # noqa: E402
from tiledlab.core import registry  # noqa: E402
from tiledlab.notebook import cells  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
ZH = ROOT / "notebooks" / "zh"

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]")
# Names written in code form: $math$, `code`, key=value, dotted names and calls, words with _ or digits.
_NAMES = re.compile(r"\$[^$]*\$|`[^`]*`|\b\w+=\S*|\b[A-Za-z_]\w*(?:\.\w+)+(?:\(\))?|\b\w*(?:_|\d)\w*\b")
_WORD = re.compile(r"[A-Za-z]{2,}(?:-[A-Za-z]+)*")
ALLOWED = set("""
naive tiled cublas triton cuBLAS CuPy Triton numba numpy NumPy CUDA GPU GPUs CPU NVIDIA Ampere Hopper PTX NVVM
DRAM SM SMs FMA FFMA SASS LDS LDG STS BAR LDGSTS TMA LSU ncu Nsight Compute racecheck compute-sanitizer
TFLOP FLOP TB GB MB KB KiB MiB GiB ms ns MHz Python LRU FP IEEE BLAS CUTLASS SGEMM Colab Binder JupyterLab
warp-FMA wavefront wavefronts bank banks lane warp roofline tiledlab ipywidgets numba-cuda cudaMemcpy best tune split-K
sA sB tx ty bx by acc row col cuda syncthreads threadIdx blockIdx BM BN BK TM TN MNK rtol atol
True False None nan NaN inf xy vs min max log ID
""".split())
# What tools print, quoted as they wrote it (compute-sanitizer's summary, ncu's version), a line of a kernel
# quoted in '…', and a gloss: Latin words alone in full-width parentheses after the Chinese word they name.
QUOTED = re.compile(r"RACECHECK SUMMARY: \d+ hazards? displayed \(\d+ errors?, \d+ warnings?\)"
                    r"|Version [\d.]+ \(build \d+\) \(public-release\)|'[^'\n]*'|（[^（）\u3400-\u9fff]*）")


def allowed_names():
    from tiledlab.experiments import profile
    return ALLOWED | set(registry.KERNELS) | set(profile.STALLS)


def foreign_words(text, names=None):
    """The Latin words of `text` that are not names (see the module's docstring)."""
    names = names or allowed_names()
    return [w for w in _WORD.findall(_NAMES.sub(" ", QUOTED.sub(" ", text))) if w not in names]


def english_lines(text, names=None):
    """The lines of `text` with a Latin word that is no name: a line all in English, or an English phrase
    inside a Chinese line (a heading left untranslated, a value of the data printed as it is)."""
    return [line for line in text.splitlines() if foreign_words(line, names)]


@pytest.fixture
def zh(monkeypatch):
    monkeypatch.setenv("TILEDLAB_LANG", "zh")
    monkeypatch.setitem(plt.rcParams, "font.sans-serif", list(plt.rcParams["font.sans-serif"]))
    if cells.cjk_font() is None:
        if os.environ.get("TILEDLAB_REQUIRE_CJK_FONT"):
            pytest.fail("no CJK font: apt-get install fonts-noto-cjk")
        pytest.skip("no CJK font installed (Debian: apt-get install fonts-noto-cjk)")


@pytest.fixture
def en(monkeypatch, tmp_path):
    monkeypatch.delenv("TILEDLAB_LANG", raising=False)
    monkeypatch.chdir(tmp_path)


def texts(fig):
    """Every text the figure shows once drawn: titles, labels, legends, tick labels, colour bars, notes."""
    fig.canvas.draw()
    return [t.get_text() for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]


# --- the package's figures ------------------------------------------------------------------------

def _bench_rows():
    bench = data.load("h200/bench.csv")
    return bench[bench["kernel"].isin(["naive", "tiled", "cublas", "naive_unsigned", "tiled_unsigned"])]


def heatmaps():
    import numpy as np
    from tiledlab.notebook import plots
    counts = np.arange(16).reshape(4, 4) % 5
    title = i18n.notebook_text("A: elements it read")  # a notebook's title, as its cell passes it translated
    return plots.heatmaps([counts, counts.T], [title, title], suptitle=i18n.notebook_text("naive / tiled"))[0]


def bench_and_cubic():
    from tiledlab.notebook import plots
    rows = _bench_rows().query("tile == 16 or kernel == 'cublas'")
    ax = plots.bench_plot(rows, "", metric="median_ms")
    plots.cubic_guide(ax, rows, "naive_unsigned")
    return ax.figure


def tile_and_effects():
    from tiledlab.notebook import plots
    bench = _bench_rows()
    fig, axes = plt.subplots(1, 2, figsize=(14, 5))
    plots.tile_plot(bench[(bench["N"] == bench["N"].max()) & bench["kernel"].str.endswith("unsigned")], "", axes[0])
    effects = data.load("h200/effects.csv")
    plots.effect_bars(effects[effects["N"] == effects["N"].max()], "", axes[1])
    return fig


def roofline():
    from tiledlab.notebook import plots
    fig, ax = plt.subplots(figsize=(11, 5))
    points = plots.rung_points([("tiled T=32", "lesson", 4.0, 8.0), ("regtile_2d", "ladder", 16.0, 20.0),
                                (registry.LADDER_TOP, "search", 40.0, 40.0), ("cuBLAS", "cublas", 40.0, 50.0)])
    plots.roofline(ax, [(i18n.notebook_text("shared memory"), 33.0)], 65.0, points,
                   i18n.notebook_text("FLOP per shared-memory byte (wavefronts × 128 B)"), "",
                   extra_legend=plots.group_legend(["lesson", "ladder", "search", "cublas"]))
    plots.number_points(ax, points)
    return fig


def timing_panels():
    from tiledlab import notebook
    from tiledlab.notebook import plots
    bench = _bench_rows()
    fig, axes = plt.subplots(1, 4, figsize=(24, 5), layout="constrained")
    notebook._draw("lesson", bench[bench["kernel"].isin(notebook.VIEWS["lesson"][0]) & (bench["tile"] == 16)
                                   | (bench["kernel"] == "cublas")], axes[0], live=True)
    notebook._draw("naive", bench[bench["kernel"].isin(notebook.VIEWS["naive"][0])], axes[1], live=False)
    notebook._draw("tile", bench[(bench["N"] == bench["N"].max()) & bench["kernel"].str.endswith("unsigned")],
                   axes[2], live=False)
    effects = data.load("h200/effects.csv")
    notebook._draw("effects", effects[effects["N"] == effects["N"].max()], axes[3], live=False)
    plots.shared_legend(fig, axes[:2])
    return fig


def stepper_strip():
    from tiledlab.notebook.stepper import TileStepper
    return TileStepper(N=8, T=4).strip()


def stepper_frame():
    from tiledlab.notebook.stepper import TileStepper
    return TileStepper(N=8, T=4).frame_figure(1, counts=False)


def takeaways():
    from tiledlab.notebook import takeaways as slides
    figs = slides.figures()
    first, *rest = figs.values()
    for fig in rest:  # one figure carries every slide's texts
        for t in texts(fig):
            first.text(0, 0, t)
        plt.close(fig)
    return first


FIGURES = [heatmaps, bench_and_cubic, tile_and_effects, roofline, timing_panels, stepper_strip, stepper_frame,
           takeaways]


@pytest.mark.parametrize("draw", FIGURES, ids=lambda f: f.__name__)
def test_every_figure_the_package_draws_speaks_chinese(zh, draw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = draw()
        shown = texts(fig)
        fig.savefig(io.BytesIO(), format="png", dpi=40)
    plt.close(fig)
    assert any(CJK.search(t) for t in shown)
    assert {t: foreign_words(t) for t in shown if foreign_words(t)} == {}
    assert [str(w.message) for w in caught if re.search(r"Glyph .* missing from", str(w.message))] == []


@pytest.mark.parametrize("draw", FIGURES, ids=lambda f: f.__name__)
def test_the_english_figures_have_no_chinese(en, draw):
    fig = draw()
    assert [t for t in texts(fig) if CJK.search(t)] == []
    plt.close(fig)


def test_the_words_each_notebook_draws_are_chinese():
    """Every literal a notebook's code passes to a figure (a title, label, legend) has a translation with
    no English word: the words of the notebooks' own figures, those no helper draws."""
    from tools.edition import sources
    names, catalog = allowed_names(), i18n.catalog(i18n.NOTEBOOK_DOMAIN)
    english = {}
    for path in sources.english_notebooks(ROOT):
        for i, cell in enumerate(sources.read_notebook(path).cells, 1):
            if cell.cell_type != "code" or sources.INSTALL_TAG in cell.metadata.get("tags", []):
                continue
            for _node, msgid, where in cells.display_strings(ast.parse(cell.source)):
                shown = re.sub(r"\{[^{}]*(\{[^{}]*\}[^{}]*)*\}", " ", catalog.gettext(msgid))  # its fields are code
                words = foreign_words(shown, names) if where == "figure" else []
                if words:
                    english[f"{path.stem} [{i}] {msgid!r}"] = words
    assert english == {}, "translate these in tiledlab/locale/zh_CN/LC_MESSAGES/notebooks.po"


# --- what the zh notebooks store and print --------------------------------------------------------

def outputs_text(nb):
    """(cell number, text) of each output a reader reads as words: streams and plain-text results, not
    images, HTML or listings of code (a stored `show()` or a printed kernel)."""
    for i, cell in enumerate(nb["cells"], 1):
        for out in cell.get("outputs", []):
            if out["output_type"] == "stream":
                text = "".join(out["text"])
            elif {"image/png", "text/html"} & set(out.get("data", {})) or "text/plain" not in out.get("data", {}):
                continue
            else:
                text = "".join(out["data"]["text/plain"])
            if not is_code(text):
                yield i, text


def is_code(text):
    try:
        ast.parse(text)
        return True
    except SyntaxError:
        return text.lstrip().startswith(("def ", "@cuda.jit", "@"))


def english_outputs(paths):
    names = allowed_names()
    return [f"{p.name} [{i}]: {line.strip()[:100]}" for p in paths
            for i, text in outputs_text(json.loads(p.read_text(encoding="utf-8"))) for line in english_lines(text, names)]


def chinese_outputs():
    """The zh notebooks (paths) whose stored outputs tests/data/zh_outputs.txt says come from a Chinese run."""
    from conftest import chinese_zh_outputs  # tests/conftest.py: the file's one reader
    return [p for p in sorted(ZH.glob("*.ipynb")) if p.stem in chinese_zh_outputs()]


def test_no_stored_output_line_of_a_chinese_run_is_english():
    assert english_outputs(chinese_outputs()) == []


def test_notebook_0_says_where_the_chinese_stored_outputs_come_from():
    """Notebook 0's Chinese edition note (cell nb0-zh-edition) must be true of the stored outputs: while some
    zh notebook stores the English run's (tests/data/zh_outputs.txt says `english`), it says they are still
    English (「仍是英文」) and names each one (第 N 本); once every one is `chinese`, that clause must go
    (edit its msgstr in locale/zh_CN/LC_MESSAGES/notebooks/00_start_here.po, then `python -m tools translate build`)."""
    from tools.edition import catalogs
    po = catalogs.read(ROOT / "locale" / "zh_CN" / "LC_MESSAGES" / "notebooks" / "00_start_here.po")
    note = next(m.string for m in po if m.context == "nb0-zh-edition")
    english = sorted(set(ZH.glob("*.ipynb")) - set(chinese_outputs()))
    assert ("仍是英文" in note) == bool(english), note
    assert all(f"第 {int(p.stem[:2])} 本" in note for p in english), note


@pytest.mark.parametrize("text, english", [
    ("matches numpy: True", ["matches numpy: True"]), ("与 numpy 一致：True", []),
    ("naive_unsigned  16  1,024  3.2 ms", []), (" tiled (both barriers)  RACECHECK SUMMARY: 0 hazards displayed "
                                                "(0 errors, 0 warnings)", [" tiled (both barriers)  RACECHECK SUMMARY: "
                                                                           "0 hazards displayed (0 errors, 0 warnings)"]),
    ("long_scoreboard 71%, not_selected 8%, barrier 5%", []), ("cuBLAS (CuPy)  51.05 TFLOP/s", []),
    ("核函数  threads/block  寄存器", ["核函数  threads/block  寄存器"]),  # an English heading in a Chinese line
    ("numpy 2.4.6 | back-to-back, ≥2 ms per sample", ["numpy 2.4.6 | back-to-back, ≥2 ms per sample"]),
    ("停顿（short scoreboard）22%；加载 'sA[ty, tx] = A[row, k] if row < M else 0'", [])])  # a gloss, a quoted line
def test_an_english_line_is_one_with_a_word_that_is_no_name(text, english):
    assert english_lines(text) == english


@pytest.mark.slow
def test_every_zh_notebook_run_here_draws_and_prints_chinese(tmp_path):
    """Run each zh notebook on this backend in Chinese (a copy, in tmp_path); every figure drawn (a hook
    records the texts of each figure as it is rendered) and every line printed must be Chinese. The one run
    of every zh notebook in Chinese (the browser runs two): a cell that raises fails it."""
    import nbclient
    import nbformat
    record = tmp_path / "figures.jsonl"
    hook = (f"import json, matplotlib.text\nfrom matplotlib.backends.backend_agg import FigureCanvasAgg\n"
            f"_draw = FigureCanvasAgg.draw\n"
            f"def draw(canvas, *a, **k):\n    out = _draw(canvas, *a, **k)\n"
            f"    with open({str(record)!r}, 'a', encoding='utf-8') as f:\n"
            f"        f.write(json.dumps([t.get_text() for t in canvas.figure.findobj(matplotlib.text.Text)"
            f" if t.get_visible()]) + '\\n')\n    return out\nFigureCanvasAgg.draw = draw")
    (tmp_path / "LANGUAGE").write_text("zh\n")
    problems, names = [], allowed_names()
    for path in sorted(ZH.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        nb.cells.insert(0, nbformat.v4.new_code_cell(hook))
        nbclient.NotebookClient(nb, timeout=1200, kernel_name="python3",
                                resources={"metadata": {"path": str(tmp_path)}}).execute()
        copy = tmp_path / path.name
        nbformat.write(nb, copy)
        problems += english_outputs([copy])
    for line in record.read_text(encoding="utf-8").splitlines():
        problems += [f"figure: {t!r}" for t in json.loads(line) if foreign_words(t, names)]
    assert problems == []


def test_count_speaks_chinese_in_the_chinese_edition(monkeypatch, capsys):
    from tiledlab import cli
    monkeypatch.setenv("TILEDLAB_LANG", "zh")
    assert cli.main(["count", "--n", "12", "--tile", "3"]) == 0
    out = capsys.readouterr().out
    assert CJK.search(out) and english_lines(out) == [], out


def test_lab_says_its_own_words_in_the_editions_language():
    from tiledlab.notebook import lab
    said = "working copy: {folder} (the committed notebooks in {src} stay as they are)"
    assert CJK.search(lab._in("zh", said)) and lab._in("en", said) == said
