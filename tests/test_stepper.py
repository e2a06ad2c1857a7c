"""The tile stepper draws what a counted launch recorded: frames against the raw traces, counts against
the formulas, the strip, the widget and its text form, and one run in a real Jupyter kernel."""
import dataclasses

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import tiledlab  # noqa: E402,F401  first: it picks the simulator on a machine without a GPU
from tiledlab.core.operands import operands  # noqa: E402
from tiledlab.counting import count_loads  # noqa: E402
from tiledlab.notebook.stepper import FALLBACK_TEXT, TiledTrace, TileStepper, TraceMismatch, launches  # noqa: E402


def raw(c, block, operand, epoch):
    """{(i, j): (ty, tx)} straight from the global trace, for one block, operand and epoch."""
    t = c.trace
    t = t[(t.by == block[0]) & (t.bx == block[1]) & (t.operand == operand) & (t.epoch == epoch)]
    return {(int(r.i), int(r.j)): (int(r.ty), int(r.tx)) for r in t}


def test_phase_1_of_block_0_0_holds_A_0_4_by_4_8_each_element_fetched_once_by_its_thread():
    s = TileStepper(N=8, T=4, block=(0, 0), thread=(1, 2))
    f = s.frame(1)
    assert f["epochs"] == (2, 3) and f["k"] == (4, 8)
    A, B = f["tiles"]["A"], f["tiles"]["B"]
    assert A["origin"] == (0, 4) and B["origin"] == (4, 0)
    assert A["fetched_by"] == {(i, j): (i, j - 4) for i in range(4) for j in range(4, 8)}
    assert B["fetched_by"] == {(i, j): (i - 4, j) for i in range(4, 8) for j in range(4)}
    assert A["zero"] == [] and B["zero"] == []
    # the same as the raw trace says, epoch 2 = phase 1's loads
    assert A["fetched_by"] == raw(s.tiled.counted, (0, 0), 0, 2)
    assert B["fetched_by"] == raw(s.tiled.counted, (0, 0), 1, 2)
    view = f["thread_view"]
    assert view["C"] == (1, 2) and view["computes"]
    assert view["fetched"] == {"A": [(1, 6)], "B": [(5, 2)]}
    assert view["stored"] == {"sA": [(1, 2)], "sB": [(1, 2)]}
    assert view["reads"] == {"sA": [(1, k) for k in range(4)], "sB": [(k, 2) for k in range(4)]}
    assert view["reads_at"] == {"A": [(1, 4 + k) for k in range(4)], "B": [(4 + k, 2) for k in range(4)]}


@pytest.mark.parametrize("N, T", [(8, 4), (8, 2), (4, 2), (6, 4), (5, 2)])
def test_every_element_enters_a_block_once(N, T):
    for by in range(-(-N // T)):
        for bx in range(-(-N // T)):
            s = TileStepper(N, T, (by, bx), (0, 0))
            maps = s.frames()[-1]["loads_so_far"]
            assert max(int(m.max()) for m in maps.values()) == 1


@pytest.mark.parametrize("N, T", [(8, 4), (8, 2), (4, 2), (4, 4), (16, 8)])
def test_running_counts_when_T_divides_N(N, T):
    phases = N // T
    s = TileStepper(N, T, (phases - 1, 0), (T - 1, 0))
    frames = s.frames()
    for t, f in enumerate(frames):
        c = f["counts"]
        assert c["block"] == {"global": 2 * T * T * (t + 1), "shared_stores": 2 * T * T * (t + 1),
                              "shared_reads": 2 * T ** 3 * (t + 1)}
        assert c["thread"] == {"global": 2 * (t + 1), "shared_stores": 2 * (t + 1), "shared_reads": 2 * T * (t + 1)}
        assert c["naive"]["block"] == 2 * T ** 3 * (t + 1)  # naive: T× the tiled block's loads
        assert c["naive"]["thread"] == 2 * T * (t + 1)
    assert frames[-1]["counts"]["block"]["global"] == 2 * T * T * phases


def test_counts_for_a_non_dividing_shape_N6_T4():
    # 2×2 blocks; block (1, 1) covers rows and columns 4..7, of which only 4 and 5 exist
    s = TileStepper(N=6, T=4, block=(1, 1), thread=(3, 2))
    f0, f1 = s.frames()
    assert [f["k"] for f in (f0, f1)] == [(0, 4), (4, 6)]
    assert f0["counts"]["block"]["global"] == 2 * 4 + 4 * 2  # A rows 4-5 × k 0-3, B k 0-3 × cols 4-5
    assert f1["counts"]["block"]["global"] == 16 + 2 * 2 + 2 * 2
    # padding is stored (as zeros) and read like any element: stores and reads do not shrink
    assert f1["counts"]["block"]["shared_stores"] == 2 * 16 * 2 and f1["counts"]["block"]["shared_reads"] == 2 * 64 * 2
    assert f1["counts"]["naive"]["block"] == 2 * 2 * 2 * 6  # 4 threads inside C, 2·6 loads each
    assert len(f1["tiles"]["A"]["zero"]) == 16 - 4 and len(f1["tiles"]["A"]["fetched_by"]) == 4
    # thread (3, 2) sits on row 7, outside C: it fetches nothing but still stores and reads
    view = f1["thread_view"]
    assert view["C"] == (7, 6) and not view["computes"]
    assert view["fetched"] == {"A": [], "B": []} and f1["counts"]["thread"]["global"] == 0
    assert f1["counts"]["thread"]["shared_stores"] == 4 and f1["counts"]["thread"]["shared_reads"] == 16
    # summed over blocks, the stepper's block counts are the launch's total
    total = sum(TileStepper(6, 4, (by, bx), (0, 0)).frames()[-1]["counts"]["block"]["global"]
                for by in range(2) for bx in range(2))
    assert total == s.tiled.counted.total == 2 * 36 * 2


def test_trace_structure_is_checked_not_assumed():
    c = launches(8, 4)[0].counted
    s = c.shared_trace.copy()
    s.epoch[s.store == 0] -= 1  # reads moved into the stores' epoch: as if the first barrier were gone
    with pytest.raises(TraceMismatch, match="shared reads in an even epoch") as refused:
        TiledTrace(dataclasses.replace(c, shared_trace=s))
    assert "cannot replay tiled at N = 8, T = 4" in str(refused.value)  # the stepper's one refusal
    g = c.trace.copy()
    g.j[(g.operand == 0) & (g.ty == 1) & (g.tx == 1) & (g.by == 0) & (g.bx == 0) & (g.epoch == 0)] += 1
    with pytest.raises(TraceMismatch, match="different offsets"):
        TiledTrace(dataclasses.replace(c, trace=g))
    g = c.trace[~((c.trace.by == 1) & (c.trace.bx == 0) & (c.trace.epoch == 2) & (c.trace.operand == 0))]
    with pytest.raises(TraceMismatch, match=r"block \(1, 0\) phase 1: no thread fetched any of A's tile"):
        TiledTrace(dataclasses.replace(c, trace=g))


def test_counted_launches_are_cached():
    from tiledlab.notebook.stepper import _launches
    launches(8, 4)
    before = _launches.cache_info()
    TileStepper(8, 4, (1, 0), (3, 3))  # the stepper passes a seed: the same key as launches(8, 4)
    launches(np.int64(8), 4, 0)
    assert _launches.cache_info().hits == before.hits + 2 and _launches.cache_info().misses == before.misses


def test_edge_tiles_fit_in_the_trace():
    A, B = operands(6, 6, 6)  # T = 4 does not divide 6: edge blocks also store and read the padding's zeros
    assert len(count_loads("tiled", A, B, tile=4, trace=True).shared_trace) == 64 * 2 * (2 + 2 * 4)


@pytest.mark.parametrize("bad, message", [
    (dict(N=3), "N must be"), (dict(N=17), "N must be"), (dict(N=8.0), "N must be"), (dict(N=True), "N must be"),
    (dict(T=3), "T must be"),
    (dict(N=8, T=4, block=(2, 0)), "block"), (dict(N=8, T=4, thread=(0, 4)), "thread")])
def test_bad_choices_say_what_to_fix(bad, message):
    with pytest.raises(ValueError, match=message):
        TileStepper(**bad)


@pytest.mark.parametrize("N, T, rows", [(8, 4, 2), (6, 4, 2), (4, 2, 2)])
def test_strip_has_a_row_per_phase(N, T, rows):
    s = TileStepper(N, T, (0, 0), (1, 1))
    fig = s.strip()
    assert len(fig.axes) == 4 * rows + 1  # A, B, C, counts per phase; one colour bar
    title = fig._suptitle.get_text()
    assert f"N = {N}" in title and f"T = {T}" in title and "block" in title and "thread" in title
    assert [ax.get_title() for ax in fig.axes[:4 * rows:4]] == [f"phase t = {t}: A tile in sA" for t in range(rows)]
    assert all(t.get_fontsize() >= 10 for ax in fig.axes for t in ax.texts)
    matplotlib.pyplot.close(fig)


@pytest.mark.parametrize("N, T, counts", [(4, 2, False), (4, 2, True), (16, 8, True), (9, 4, False)])
def test_every_text_fits_inside_the_figure(N, T, counts):
    s = TileStepper(N, T, (0, 0), (T - 1, 0))
    fig = s.frame_figure(s.phases - 1, counts=counts)
    fig.canvas.draw()
    renderer, box = fig.canvas.get_renderer(), fig.bbox
    texts = [fig._suptitle, *fig.legends[0].get_texts()] + [t for ax in fig.axes for t in ax.texts]
    for t in texts:
        e = t.get_window_extent(renderer)
        assert box.x0 - 1 <= e.x0 and e.x1 <= box.x1 + 1 and box.y0 - 1 <= e.y0 and e.y1 <= box.y1 + 1, t.get_text()
    matplotlib.pyplot.close(fig)


def test_widget_steps_and_falls_back_to_a_sentence():
    pytest.importorskip("ipywidgets")
    box = TileStepper(8, 4, (0, 0), (1, 2)).widget()
    assert repr(box) == FALLBACK_TEXT
    assert box._repr_mimebundle_()["text/plain"] == FALLBACK_TEXT
    image = box.children[-1]
    first, png = box.frame, image.value
    assert first["phase"] == 0 and png[:4] == b"\x89PNG"
    assert "block</th>" in box.children[1].value and ">32<" in box.children[1].value  # the counts table
    box.controls["phase"].value = 1
    assert box.frame["phase"] == 1 and box.frame["tiles"]["A"]["origin"] == (0, 4)
    assert image.value != png
    box.controls["N"].value = 6  # a smaller matrix: the sliders follow, the frame is recounted
    assert box.stepper.N == 6 and box.controls["by"].max == 1 and box.frame["k"] == (4, 6)
    box.controls["T"].value = 8
    assert box.stepper.phases == 1 and box.controls["phase"].max == 0 and box.frame["phase"] == 0
    assert box.controls["ty"].max == 7 and box.controls["by"].max == 0


def test_runs_in_a_real_kernel_without_stderr(tmp_path):
    pytest.importorskip("ipywidgets")  # without it the stepper prints its text form instead
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import tiledlab\nfrom tiledlab.notebook.stepper import step_through"),
                nbformat.v4.new_code_cell("step_through(N=6, T=4, block=(1, 1), thread=(3, 2))")]
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = nb.cells[1].outputs  # one output: the widget where a front end runs it, the strip elsewhere
    assert [o.output_type for o in outputs] == ["display_data"]
    assert outputs[0].data["image/png"].startswith("iVBORw0KGgo")  # a PNG, base64
    assert outputs[0].data["text/plain"] == FALLBACK_TEXT
    assert "application/vnd.jupyter.widget-view+json" in outputs[0].data
    for cell in nb.cells:
        assert not [o for o in cell.outputs if o.output_type == "error" or o.get("name") == "stderr"]


def test_without_ipywidgets_the_strip_alone_is_shown(monkeypatch, capsys):
    import sys

    from tiledlab.notebook.stepper import step_through
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import ipywidgets now raises ImportError
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    step_through(N=4, T=2, block=(1, 0), thread=(0, 1))
    assert len(shown) == 1 and isinstance(shown[0], matplotlib.figure.Figure)
    assert "install ipywidgets" in capsys.readouterr().out


def _words(text):
    return " ".join(text.replace("\xa0", " ").split())


@pytest.mark.parametrize("N, T, block, thread", [(8, 4, (0, 0), (1, 2)), (6, 4, (1, 1), (3, 2))])
def test_strip_and_widget_show_the_same_counts_text(N, T, block, thread):
    import html
    import re
    pytest.importorskip("ipywidgets")
    s = TileStepper(N, T, block, thread)
    fig, box = s.strip(), s.widget()
    for t in range(s.phases):
        box.controls["phase"].value = t
        panel = _words(" ".join(text.get_text() for text in fig.axes[4 * t + 3].texts))
        shown = _words(html.unescape(re.sub(r"<[^>]+>", " ", box.children[1].value)))
        assert shown == panel, t
        counts = box.frame["counts"]
        assert f"global loads {counts['block']['global']} {counts['thread']['global']}" in panel
    matplotlib.pyplot.close(fig)


# ---- the kernel the student edited ------------------------------------------------------------------
from numba import cuda, float32  # noqa: E402

from tiledlab.counting.variants import without_barrier  # noqa: E402

T = 4


@cuda.jit
def tiled_A_by_columns(A, B, C):
    """The tiled kernel, except that thread (ty, tx) brings sA[tx, ty]: A's tile is loaded by columns."""
    sA = cuda.shared.array((T, T), float32)
    sB = cuda.shared.array((T, T), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * T + ty
    col = cuda.blockIdx.x * T + tx
    M, K = A.shape
    N = B.shape[1]
    acc = float32(0.0)
    for t in range((K + T - 1) // T):
        k0 = t * T
        r = cuda.blockIdx.y * T + tx
        sA[tx, ty] = A[r, k0 + ty] if r < M and k0 + ty < K else float32(0.0)
        sB[ty, tx] = B[k0 + ty, col] if k0 + ty < K and col < N else float32(0.0)
        cuda.syncthreads()  # the whole tile in shared memory before anyone reads it
        for k in range(T):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # nobody overwrites the tile while a neighbour still reads it
    if row < M and col < N:
        C[row, col] = acc


def test_the_stepper_replays_the_kernel_it_is_given():
    mine = TileStepper(8, 4, (0, 0), (1, 2), kernel=tiled_A_by_columns).frame(1)
    library = TileStepper(8, 4, (0, 0), (1, 2)).frame(1)
    # phase 1 of block (0, 0): A[i, j] comes from thread (ty, tx) = (j - 4, i), not (i, j - 4)
    assert mine["tiles"]["A"]["fetched_by"] == {(i, j): (j - 4, i) for i in range(4) for j in range(4, 8)}
    assert library["tiles"]["A"]["fetched_by"] == {(i, j): (i, j - 4) for i in range(4) for j in range(4, 8)}
    assert mine["thread_view"]["fetched"]["A"] == [(2, 5)] and mine["thread_view"]["stored"]["sA"] == [(2, 1)]
    assert mine["tiles"]["B"] == library["tiles"]["B"] and mine["counts"] == library["counts"]


@pytest.mark.parametrize("which", [0, 1])
def test_a_kernel_that_lost_a_barrier_is_refused_saying_why(which):
    broken = without_barrier(tiledlab.tiled, which)
    with pytest.raises(TraceMismatch) as refused:
        TileStepper(8, 4, kernel=broken)
    message = str(refused.value)
    assert broken.name in message and "N = 8, T = 4" in message
    assert "barrier hazards" in message and "cuda.syncthreads()" in message
    assert "phases" in message and "{" not in message  # words, not a dict of hazard kinds


def test_step_through_prints_the_refusal_instead_of_raising(monkeypatch, capsys):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    from tiledlab.notebook.stepper import step_through
    step_through(N=8, T=4, kernel=without_barrier(tiledlab.tiled, 1))
    assert shown == [] and "cannot replay" in capsys.readouterr().out


def test_counted_launches_are_cached_per_kernel():
    from tiledlab.notebook.stepper import _launches
    _launches.cache_clear()
    launches(8, 4, kernel=tiled_A_by_columns)
    launches(8, 4, kernel=tiled_A_by_columns)
    launches(8, 4, kernel=tiledlab.tiled)
    launches(8, 4)  # the library's kernel by object is the default's key
    assert _launches.cache_info().misses == 2 and _launches.cache_info().hits == 2
    assert launches(8, 4, kernel=tiled_A_by_columns)[0] is not launches(8, 4)[0]


def test_the_widget_keeps_the_kernel_when_the_size_changes():
    pytest.importorskip("ipywidgets")
    box = TileStepper(8, 4, (0, 0), (1, 2), kernel=tiled_A_by_columns).widget()
    box.controls["N"].value = 12
    box.controls["phase"].value = 2
    assert box.frame["tiles"]["A"]["fetched_by"] == {(i, j): (j - 8, i) for i in range(4) for j in range(8, 12)}
