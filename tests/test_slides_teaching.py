"""The slides a teacher asked for: the launch from the host beside a diagram of its grid, takeaway figures whose
labels fit and whose legends hide no measured point, and notes specific to each exercise (what to listen
for, how its cell measures the answer)."""
import ast
import html
import re

import matplotlib
import pytest

from classroom import series, slides

matplotlib.use("Agg")
LESSONS = sorted(series.NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def deck():
    return slides.slides(figures={})


@pytest.fixture(scope="module")
def figures():
    from tiledlab.notebook import takeaways
    return {name: slides.fit_labels(fig) for name, fig in takeaways.figures().items()}


def test_the_launch_slide_shows_notebook_1s_own_cell_and_its_grid(deck):
    kinds = [kind for kind, *_rest in deck]
    at = kinds.index("launch")
    assert deck[at - 1][0] == "code" and deck[at - 1][1].startswith("1 ·")  # after notebook 1's kernel lines
    body = deck[at][2]
    source = slides.launch_cell(series.NOTEBOOKS / "01_naive_reads.ipynb")
    assert "naive[blockspergrid, threadsperblock](dA, dB, dC)" in source
    shown = html.unescape(re.sub("<[^>]+>", "", body))
    assert all(line in shown for line in source.splitlines())  # the notebook's cell, every line
    M, K, N, T = ast.literal_eval(ast.parse(source).body[0].value)
    gx, gy = -(-N // T), -(-M // T)
    assert f"grid ({gx}, {gy}) of blocks ({T}, {T}) over C, {M}×{N}" in body
    assert body.count("<rect") == gx * T * gy * T + gx * gy + 1  # every thread, every block, C's outline
    assert "row = 0·4 + 1 = 1, col = 1·4 + 2 = 6" in body and "kernel[grid, block]" in deck[at][3]


def test_every_takeaway_figures_labels_fit_on_its_slide(figures):
    for name, fig in figures.items():
        fig.canvas.draw()
        box = fig.bbox
        for ax in fig.axes:
            for label in (x for x in (ax.xaxis.label, ax.yaxis.label) if x.get_text()):
                extent = label.get_window_extent()
                assert box.x0 - 1 <= extent.x0 and extent.x1 <= box.x1 + 1 and box.y0 - 1 <= extent.y0 \
                    and extent.y1 <= box.y1 + 1, (name, label.get_text())


def test_no_legend_hides_a_measured_point(figures):
    for name, fig in figures.items():
        fig.canvas.draw()
        for ax in fig.axes:
            legend = ax.get_legend()
            if legend is None:
                continue
            frame = legend.get_window_extent()
            for line in ax.get_lines():
                if line.get_marker() in (None, "None", ""):
                    continue
                for x, y in ax.transData.transform(line.get_xydata()):
                    assert not frame.contains(x, y), (name, line.get_label(), (x, y))


def test_each_exercise_has_notes_of_its_own(deck):
    key = slides.answers()
    predict = [(heading.split()[1].rstrip(":"), notes) for kind, heading, _b, notes in deck if kind == "predict"]
    answer = {heading.split()[1].rstrip(":"): notes for kind, heading, _b, notes in deck if kind == "answer"}
    for number, notes in predict:
        assert f"Listen for: {html.escape(key[number].why.split('. ')[0].rstrip('.'))}" in notes
        measures = slides.content(next(p for p in LESSONS if p.name.startswith(number.split('.')[0].zfill(2))))
        assert html.escape(measures["measures"][number]) in answer[number] and measures["measures"][number]
    assert len(set(answer.values())) == len(answer)  # no two alike
    assert "count_loads(naive, rand(3, 5), rand(5, 4), tile=4)" in html.unescape(answer["1.2"])
