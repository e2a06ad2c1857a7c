"""The figures' own rules: colour bars of counts tick at whole numbers only, and the numbers written in
cells are readable (at least 8 points) and do not overlap."""
import itertools

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from tiledlab.notebook import plots  # noqa: E402


def colorbar_ticks(fig):
    """The ticks shown on every colour bar of a figure (those inside its axis)."""
    fig.draw_without_rendering()
    shown = []
    for cax in (ax for ax in fig.axes if ax.get_label() == "<colorbar>"):
        low, high = sorted(cax.get_ylim())
        shown += [t for t in cax.get_yticks() if low - 1e-9 <= t <= high + 1e-9]
    return shown


@pytest.mark.parametrize("vmax", [1, 4, 7, 32])
def test_a_colour_bar_of_small_counts_ticks_at_whole_numbers_only(vmax):
    counts = np.arange(16).reshape(4, 4) % (vmax + 1)
    fig, _ = plots.heatmaps([counts, counts[::-1]], ["a", "b"])
    ticks = colorbar_ticks(fig)
    assert ticks and all(float(t).is_integer() for t in ticks), ticks
    plt.close(fig)


def test_a_single_heat_map_has_whole_number_ticks_too():
    fig, ax = plt.subplots()
    plots.heatmap(np.array([[0, 1], [2, 3]]), "t", ax)
    ticks = colorbar_ticks(fig)
    assert ticks == [0, 1, 2, 3]
    plt.close(fig)


def cell_texts(ax):
    return [t for t in ax.texts if t.get_text().strip()]


def assert_readable_and_apart(fig, texts):
    renderer = fig.canvas.get_renderer()
    assert texts and all(t.get_fontsize() >= plots.SMALLEST_LABEL for t in texts)
    boxes = [t.get_window_extent(renderer) for t in texts]
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b), (a, b)


@pytest.mark.parametrize("n", [4, 8, 16])
def test_counts_in_cells_are_readable_and_do_not_overlap(n):
    counts = (np.arange(n * n).reshape(n, n) % 11) * 3  # up to two digits
    fig, axes = plots.heatmaps([counts, counts.T], ["a", "b"])
    for ax in axes:
        assert len(cell_texts(ax)) == n * n
        assert_readable_and_apart(fig, cell_texts(ax))
    plt.close(fig)


def test_cell_labels_shrink_with_the_grid_but_not_below_the_smallest():
    sizes = []
    for n in (4, 12, 24, 48):
        fig, ax = plt.subplots(figsize=(6, 6))
        ax.imshow(np.zeros((n, n)))
        sizes.append(plots.cell_fontsize(ax, (n, n), chars=3))
        plt.close(fig)
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[-1]
    assert min(sizes) == plots.SMALLEST_LABEL


@pytest.mark.parametrize("n, inches", [(16, 3), (17, 12)])  # too small to read; more than 256 cells
def test_a_grid_too_large_to_read_is_not_numbered(n, inches):
    fig, ax = plt.subplots(figsize=(inches, inches))
    plots.heatmap(np.arange(n * n).reshape(n, n) % 100, "t", ax)
    assert cell_texts(ax) == []
    plt.close(fig)


def test_thread_labels_of_notebook_5s_grid_are_readable_and_apart():
    n = 12
    fig, ax = plt.subplots(figsize=plots.grid_figsize(n, n, chars=3))
    ax.imshow(np.zeros((n, n)))
    labels = np.array([[f"{i % 4},{j % 4}" for j in range(n)] for i in range(n)], dtype=object)
    plots.cell_text(ax, labels)
    assert_readable_and_apart(fig, cell_texts(ax))
    plt.close(fig)


def roofline_of_the_ladder():
    """Notebook 7's roofline points, from the committed ladder profile."""
    from tiledlab import data
    from tiledlab.core import registry
    ladder = data.load("h200/ladder.csv").drop_duplicates("kernel").set_index("kernel")
    prof = data.load("h200/ladder_profile.csv").replace({"kernel": {"best": registry.LADDER_TOP}})
    first = prof.dropna(subset=["flop_per_shared_byte"]).drop_duplicates("kernel")
    return plots.rung_points([(r.kernel, ladder.loc[r.kernel, "group"], r.flop_per_shared_byte,
                               2 * r.ffma / (r.time_ns * 1e-9) / 1e12) for r in first.itertuples()])


def test_rungs_get_a_colour_per_group_and_a_marker_each():
    points = roofline_of_the_ladder()
    styles = [style for *_, style in points]
    assert len({(s["marker"], s["color"]) for s in styles}) == len(points)  # no two points drawn alike
    assert len({s["color"] for s in styles}) == 4  # lesson, register-tiled rungs, search, cuBLAS
    assert all(s["markerfacecolor"] == "none" for s in styles)  # hollow: overlapping points stay visible
    assert [label.split()[0] for label, *_ in points] == [str(i) for i in range(1, len(points) + 1)]


def test_every_point_is_numbered_once_and_no_number_covers_a_marker_or_another_number():
    points = roofline_of_the_ladder()
    fig, ax = plt.subplots(figsize=(8, 6), layout="constrained")
    plots.roofline(ax, [("shared", 33.0)], 65.0, points, "x", "t", x=(4.5, 14), legend=False)
    ax.set_ylim(15, 80)
    plots.number_points(ax, points)
    numbers = [t for t in ax.texts]
    inside = [p for p in points if 4.5 <= p[1] <= 14 and 15 <= p[2] <= 80]
    assert sorted(t.get_text() for t in numbers) == sorted(p[0].split()[0] for p in inside)
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in numbers]
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b)
    r = (9 / 2) * fig.dpi / 72
    for x, y in ax.transData.transform([(p[1], p[2]) for p in inside]):
        assert not any(b.x0 < x + r and x - r < b.x1 and b.y0 < y + r and y - r < b.y1 for b in boxes)
    plt.close(fig)


def figure_texts(fig):
    """Every text a figure shows: titles, axis labels, tick labels, legend entries, texts in the axes."""
    fig.draw_without_rendering()
    texts = [fig.get_suptitle()] if fig.get_suptitle() else []
    for ax in fig.axes:
        texts += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        texts += [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels() + ax.texts]
        if ax.get_legend():
            texts += [t.get_text() for t in ax.get_legend().get_texts()]
    for legend in fig.legends:
        texts += [t.get_text() for t in legend.get_texts()]
    return [t for t in texts if t]


def test_every_tiled_label_of_the_takeaway_figures_says_its_t():
    import re

    from tiledlab.notebook import takeaways
    figures = takeaways.figures()
    tiled = [t for fig in figures.values() for t in figure_texts(fig) if re.search(r"(?<![-\w])tiled\b", t)]
    assert tiled  # the figures do name the tiled kernel
    assert [t for t in tiled if not re.search(r"\bT\b", t)] == []
    for fig in figures.values():
        plt.close(fig)
