"""A slide deck to teach from, built from the series: `python -m classroom slides --out DIR` writes
DIR/slides.html.

Per notebook: what it teaches, the kernel lines the lesson turns on (highlighted, from the kernel's own
source), for notebook 1 the launch from the host with a diagram of its grid of blocks (LAUNCH), its
takeaway figure (takeaways.py), each prediction exercise with its answer on the next slide (from the
teacher's key, solutions/key.py, when the checkout has it), and its summary; speaker notes give the
modelled minutes, the misconception to watch (docs/teaching.md), what the lines or figure show, and for each
exercise the reasoning to listen for and how its cell measures the answer.
One self-contained file, nothing fetched. → ← space Page Up/Down Home End move; S opens the presenter view
(this slide, the next, the notes, a clock) in a window that follows; P prints (KEYS_NOTE).
"""
import ast
import base64
import html
import pathlib
import runpy
import textwrap
from dataclasses import dataclass

from markdown_it import MarkdownIt

from tiledlab import data
from tiledlab.counting.outcomes import EXERCISE

from .series import ROOT, lessons, read_notebook

MD = MarkdownIt("commonmark", {"html": False}).enable("table")
WALKTHROUGH = "simulator/walkthrough.csv"  # the modelled minutes of every part of every notebook


@dataclass(frozen=True)
class Code:
    """The lines of a registry kernel a lesson turns on; `span` (first, last line) cuts a long kernel."""
    kernel: str
    marks: tuple
    why: str
    span: tuple = ()


CODE = {
    "01_naive_reads": Code("naive", ("acc += A[row, k]",), "Each thread walks a row of A and a column of B: two "
                           "global loads per multiply-add, 2N per thread, 2N³ for the N² threads."),
    "02_redundant_reads": Code("tiled",
                               ("sA[ty, tx] = A[", "sB[ty, tx] = B[", "acc += sA[ty, k]", "cuda.syncthreads()"),
                               "Each thread stores one element of each tile; the T threads that need it read it "
                               "from shared memory. a11 is fetched once per block, not T times. The first barrier: "
                               "no read before the tile is complete; the second: no overwrite while a neighbour reads."),
    "03_one_tile_step": Code("tiled", ("sA[ty, tx] = A[", "sB[ty, tx] = B[", "for k in range(T):"),
                             "One trip of the t loop is one tile step: T² threads store 2T² values, then read "
                             "2T³ from shared memory instead of global memory.", ("for t in range", "C[row, col]")),
    "04_whole_matrix": Code("tiled", ("for t in range(",),
                            "⌈K/T⌉ tile steps per block, (N/T)² blocks, 2T² loads a step: (N/T)³ · 2T² = 2N³/T."),
    "05_line_by_line": Code("tiled", ("col = cuda.blockIdx.x", "acc += sA[ty, k]"),
                            "threadIdx.x walks columns, so a warp's loads are neighbours; it reads sB[k, tx] "
                            "along a row, 32 banks, and sA[ty, k] as one word, a broadcast."),
    "06_caches": Code("naive", ("acc += A[row, k]",), "These loads fetch every element N times: do L1 and L2 "
                      "catch the repeats? The counters at each level answer; then where the tiled kernel's time goes."),
    "07_register_tiling": Code("regtile_2d", ("a[i] = sA[", "b[j] = sB[", "acc[i, j] +="),
                               "TM + TN shared reads feed TM·TN multiply-adds from registers: the 2T³ → 2T² "
                               "argument one level down.", ("for k in range(BK):", "acc[i, j] +=")),
}
#: The launch from the host: the notebook whose cell under this heading launches by hand, the lines to mark.
LAUNCH = ("01_naive_reads", "Launching it by hand", ("threadsperblock =", "blockspergrid =", "naive["))
KEYS_NOTE = ("→ / ← (or space, Page Up/Down) move; S opens the presenter view in a second window, which follows "
             "this one: put this window on the projector. P prints: here one slide per page, from the presenter "
             "view each slide with its notes.")


def _lines(text, tokens, first, stop=None):
    """The Markdown source of tokens[first] up to (not including) the line where tokens[stop] starts."""
    lines = text.splitlines()
    end = tokens[stop].map[0] if stop is not None else len(lines)
    return "\n".join(lines[tokens[first].map[0]:end]).strip()


def _blocks(text):
    """The cell's tokens, and (first inline text, start index) of each top-level block."""
    tokens = MD.parse(text)
    starts = [i for i, t in enumerate(tokens) if t.level == 0 and t.nesting >= 0 and t.map]
    return tokens, [(tokens[i + 1].content if tokens[i].nesting == 1 else "", i) for i in starts]


def section(text, heading):
    """The Markdown under `## heading` in `text`, up to the next heading ("" when there is none)."""
    tokens, blocks = _blocks(text)
    for k, (content, i) in enumerate(blocks):
        if tokens[i].type == "heading_open" and content == heading:
            stop = next((j for _c, j in blocks[k + 1:] if tokens[j].type == "heading_open"), None)
            return _lines(text, tokens, blocks[k + 1][1], stop) if k + 1 < len(blocks) else ""
    return ""


def learn(text):
    """The "**You will learn**" list of a title cell, or else its first paragraph after the title."""
    tokens, blocks = _blocks(text)
    for k, (content, i) in enumerate(blocks[:-1]):
        if content == "**You will learn**":
            return _lines(text, tokens, blocks[k + 1][1], blocks[k + 2][1] if k + 2 < len(blocks) else None)
    return next((content for content, i in blocks if tokens[i].type == "paragraph_open"), "")


def exercises(text):
    """{number: its statement in Markdown} of the exercises a Markdown cell states ("**Exercise 3.2.** ...")."""
    tokens, blocks = _blocks(text)
    found = {}
    for k, (content, i) in enumerate(blocks):
        if content.startswith("**Exercise "):
            stop = next((j for c, j in blocks[k + 1:] if c.startswith("**Exercise ")
                         or tokens[j].type == "heading_open"), None)
            found[content.split()[1].rstrip(".*")] = _lines(text, tokens, i, stop)
    return found


def measured(cell):
    """The statements of a prediction exercise's cell that measure its answer: those after `prediction = None`
    but its verdict, the last (the imports and the prediction left out)."""
    tree = ast.parse(cell)
    at = next(k for k, node in enumerate(tree.body) if isinstance(node, ast.Assign)
              and getattr(node.targets[0], "id", None) == "prediction")
    return "\n".join(ast.get_source_segment(cell, node) for node in tree.body[at + 1:-1])


def content(path):
    """{title, learn, summary, predictions: {number: statement}, measures: {number: code}} of one notebook."""
    cells = read_notebook(path).cells
    text = [c.source for c in cells if c.cell_type == "markdown"]
    stated = {n: s for t in text for n, s in exercises(t).items()}
    predicted = {m[1]: c.source for c in cells if c.cell_type == "code" and "predict(" in c.source
                 for m in [EXERCISE.match(c.source)] if m}
    return {"title": text[0].splitlines()[0].lstrip("# ").strip(), "learn": learn(text[0]),
            "summary": next((s for s in (section(t, "Summary") for t in text) if s), ""),
            "predictions": {n: stated[n] for n in predicted if n in stated},
            "measures": {n: measured(cell) for n, cell in predicted.items()}}


def launch_cell(path):
    """The code cell under the notebook's LAUNCH heading: the launch from the host, step by step."""
    cells = read_notebook(path).cells
    at = next(k for k, c in enumerate(cells) if c.cell_type == "markdown" and f"## {LAUNCH[1]}" in c.source)
    return next(c.source for c in cells[at:] if c.cell_type == "code")


def grid_svg(M, N, T, block=(1, 0), thread=(2, 1)):
    """A grid of T×T blocks over an M×N matrix C, as SVG: the blocks, C's outline, idle threads past its
    edges greyed, and one thread (`block` (bx, by), `thread` (tx, ty)) with the element it computes."""
    gx, gy, cell = -(-N // T), -(-M // T), 26
    (bx, by), (tx, ty) = block, thread
    row, col = by * T + ty, bx * T + tx
    parts = []
    for y in range(gy * T):
        for x in range(gx * T):
            fill = "#f4a261" if (y, x) == (row, col) else "#e9f2fb" if y < M and x < N else "#eeeeee"
            parts.append(f'<rect x="{x * cell}" y="{y * cell}" width="{cell}" height="{cell}" fill="{fill}" '
                         f'stroke="#bbb" stroke-width="1"/>')
    parts += [f'<rect x="{x * T * cell}" y="{y * T * cell}" width="{T * cell}" height="{T * cell}" fill="none" '
              f'stroke="#264653" stroke-width="3"/><text x="{x * T * cell + 4}" y="{y * T * cell + 14}" '
              f'font-size="8" fill="#264653">block ({x}, {y})</text>' for y in range(gy) for x in range(gx)]
    parts.append(f'<rect x="0" y="0" width="{N * cell}" height="{M * cell}" fill="none" stroke="#e76f51" '
                 f'stroke-width="3" stroke-dasharray="6 4"/>')
    caption = (f"grid ({gx}, {gy}) of blocks ({T}, {T}) over C, {M}×{N} (dashed); grey threads are past C's edges "
               f"and store nothing. The orange thread, threadIdx ({tx}, {ty}) of blockIdx ({bx}, {by}): "
               f"row = {by}·{T} + {ty} = {row}, col = {bx}·{T} + {tx} = {col}")
    return (f'<figure class="grid"><svg viewBox="-2 -2 {gx * T * cell + 4} {gy * T * cell + 4}" role="img" '
            f'aria-label="{html.escape(caption, quote=True)}">{"".join(parts)}</svg>'
            f'<figcaption>{html.escape(caption)}</figcaption></figure>')


def launch_slide(path):
    """The launch from the host (the notebook's own cell, its grid and launch lines marked) beside a diagram
    of its grid: (kind, heading, body HTML, notes HTML)."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer
    source = launch_cell(path)
    M, K, N, T = ast.literal_eval(ast.parse(source).body[0].value)  # its first line: M, K, N, T = ...
    lines = source.splitlines()
    marked = [i + 1 for i, line in enumerate(lines) if any(m in line for m in LAUNCH[2])]
    code = highlight(source, PythonLexer(), HtmlFormatter(cssclass="code", hl_lines=marked))
    notes = ("<p>The host's side of every launch: copy the inputs to the GPU, make room for C, choose the block "
             "(threadIdx.x walks columns) and a grid that covers C by ceil-division, launch with "
             "<code>kernel[grid, block](...)</code>, copy C back. Point at one thread in the diagram and compute its "
             "row and column with the class: every kernel of the series starts with those two lines.</p>")
    return ("launch", "Launching it by hand: grid, blocks, threads", f'<div class="launch">{code}'
            f"{grid_svg(M, N, T)}</div>", notes)


def fit_labels(fig):
    """Wrap an axis label longer than its side of the figure at the space nearest its middle (a label that
    long is cut off at both ends on the slide)."""
    fig.canvas.draw()
    box = fig.bbox
    for ax in fig.axes:
        for label, room in ((ax.yaxis.label, box.height), (ax.xaxis.label, box.width)):
            extent = label.get_window_extent()
            text = label.get_text()
            if text and " " in text and max(extent.height, extent.width) > 0.95 * room:
                width = len(text) // 2 + 1
                label.set_text("\n".join(textwrap.wrap(text, width=width, break_long_words=False)))
    return fig


def guide(path=None):
    """{notebook number ("01"): {column: text}} from the guide's notebook-by-notebook table."""
    path = pathlib.Path(path) if path else ROOT / "docs" / "teaching.md"
    tables = []
    for t in MD.parse(path.read_text(encoding="utf-8") if path.is_file() else ""):
        if t.type == "table_open":
            tables.append([])
        elif t.type == "tr_open":
            tables[-1].append([])
        elif t.type == "inline" and tables and tables[-1]:
            tables[-1][-1].append(t.content)
    rows = next((rows for rows in tables if "students often think" in rows[0]), [[]])
    return {r[0][:2]: dict(zip(rows[0], r)) for r in rows[1:]}


def answers():
    """The teacher's key ({number: Answer}) when this clone has it (solutions/key.py), else {}."""
    key = ROOT / "solutions" / "key.py"
    return runpy.run_path(str(key))["ANSWERS"] if key.is_file() else {}


def code_html(spec):
    """The kernel's own source (the one counted and timed), its lesson's lines highlighted."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    from tiledlab.core.launch import resolve
    lines = resolve(spec.kernel).source({}).rstrip().splitlines()
    if spec.span:
        first = next(i for i, line in enumerate(lines) if spec.span[0] in line)
        last = next(i for i, line in enumerate(lines) if i >= first and spec.span[1] in line)
        lines = lines[first:last + 1]
    marked = [i + 1 for i, line in enumerate(lines) if any(m in line for m in spec.marks)]
    return highlight("\n".join(lines), PythonLexer(), HtmlFormatter(cssclass="code", hl_lines=marked))


def _minutes(parts):
    total = parts[["reading_min", "execution_min", "exercise_min", "minutes"]].sum()
    return (f"<p>Modelled minutes (a scripted walkthrough, not observed students): reading {total.reading_min:.0f}, "
            f"running the cells {total.execution_min:.1f}, exercises {total.exercise_min:.0f}: "
            f"<strong>{total.minutes:.0f} in all</strong>. Note the real ones on the guide's form.</p>")


def _answer(answer):
    if answer is None:
        return "<p>Run the exercise's cell: it measures and says whether the answer is right.</p>"
    value = f"<p class='answer'>{html.escape(str(answer.value))}</p>" if answer.value is not None else ""
    return value + f"<p>{html.escape(answer.why)}</p>"


def notebook_slides(path, figure=None, key=None, told=None, parts=None, shows=""):
    """The slides of one notebook: (kind, heading, body HTML, notes HTML). `parts`: its rows of the
    walkthrough (the modelled minutes), `told`: the guide's table, `shows`: what its figure shows."""
    stem, text = pathlib.Path(path).stem, content(path)
    if parts is None:
        parts = data.load(WALKTHROUGH).query("notebook == @stem")
    told = (told or {}).get(stem[:2], {})
    notes = _minutes(parts) + "".join(f"<p><strong>{label}</strong>: {MD.renderInline(told[column])}</p>"
                                      for column, label in (("students often think", "Watch for"),
                                                            ("worth discussing", "Discuss")) if told.get(column))
    deck = [("lesson", text["title"], MD.render(text["learn"]), notes)]
    if stem in CODE:
        deck.append(("code", f"{text['title'].split(' · ')[0]} · the lines that matter: {CODE[stem].kernel}",
                     code_html(CODE[stem]), f"<p>{html.escape(CODE[stem].why)}</p>"))
    if stem == LAUNCH[0]:
        deck.append(launch_slide(path))
    if figure is not None:
        from tiledlab.notebook.plots import png
        alt = html.escape(f"takeaway figure of {text['title']}", quote=True)
        data64 = base64.b64encode(png(fit_labels(figure), 100))
        deck.append(("figure", text["title"], f'<img alt="{alt}" src="data:image/png;base64,{data64.decode()}">',
                     f"<p>{html.escape(shows)} Counted live, or read from the committed H200 data.</p>"))
    for number, statement in text["predictions"].items():
        allowed = parts.loc[parts["part"] == f"Exercise {number}", "exercise_min"].sum()
        answer = (key or {}).get(number)
        listen = f" Listen for: {html.escape(answer.why.split('. ')[0].rstrip('.'))}." if answer else ""
        deck.append(("predict", f"Exercise {number}: predict", MD.render(statement),
                     f"<p>Allow about {allowed:.0f} minutes (the guide's allowance). Take the class's numbers "
                     f"before you move on: the next slide gives the answer.{listen}</p>"))
        deck.append(("answer", f"Exercise {number}: the answer", _answer(answer),
                     f"<p>Exercise {number}'s cell measures it, live: run it in front of the class.</p>"
                     f"<pre>{html.escape(text['measures'][number])}</pre>"))
    if text["summary"]:
        deck.append(("summary", f"{text['title']}: summary", MD.render(text["summary"]), notes))
    return deck


def slides(notebooks=None, figures=None, key=None, told=None):
    """The deck's slides, in order: (kind, heading, body HTML, notes HTML)."""
    from tiledlab.notebook import takeaways
    notebooks = lessons() if notebooks is None else notebooks
    figures = takeaways.figures() if figures is None else figures
    walkthrough = data.load(WALKTHROUGH)
    key, told = answers() if key is None else key, guide() if told is None else told
    deck = [("title", "Why shared-memory tiling cuts global-memory loads",
             "<p>tiledlab: a Numba-CUDA notebook series, in slides built from its notebooks.</p>"
             "<p class='hint'>→ / ← or space to move; S for the presenter view; P to print</p>",
             f"<p>{KEYS_NOTE}</p>")]
    for path in notebooks:
        stem = pathlib.Path(path).stem
        shows = takeaways.FIGURES[stem].__doc__.split(": ", 1)[-1] if stem in takeaways.FIGURES else ""
        deck += notebook_slides(path, figures.get(stem), key, told, walkthrough[walkthrough["notebook"] == stem],
                                shows[:1].upper() + shows[1:])
    return deck


HERE = pathlib.Path(__file__).parent
STYLE = (HERE / "slides.css").read_text(encoding="utf-8")  # the deck's look: 16:9 slides, presenter view, print
SCRIPT = (HERE / "slides.js").read_text(encoding="utf-8")  # keys, the presenter window that follows, fit to the box


def deck_html(deck):
    """The slides as one self-contained HTML page."""
    from pygments.formatters import HtmlFormatter
    pages = "\n".join(
        f'<div class="page" data-kind="{kind}"><section class="slide {kind}"><h1>{html.escape(heading)}</h1>{body}'
        f'<div class="number">{k} / {len(deck)}</div></section><aside class="notes">{notes}</aside></div>'
        for k, (kind, heading, body, notes) in enumerate(deck, 1))
    style = STYLE + HtmlFormatter().get_style_defs(".code")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">'
            f"<title>tiledlab: the series in slides</title><style>{style}</style>"
            f'<style id="page-size">@page {{ size: 13.333in 7.5in; margin: 0; }}</style></head>\n'
            f'<body>\n{pages}\n<div id="clock"></div>\n<script>{SCRIPT}</script></body></html>\n')


def write(out):
    """Write out/slides.html; return its path."""
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "slides.html"
    path.write_text(deck_html(slides()), encoding="utf-8")
    return path
