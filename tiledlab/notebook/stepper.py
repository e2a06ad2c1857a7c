"""The tile stepper: one block of the tiled kernel, phase by phase, as a counted launch saw it.

    step_through(N=8, T=4, block=(0, 0), thread=(1, 2), kernel=tiled)   # the strip, then the widget

Everything drawn is read from the traces of `count_loads(..., trace=True)` (tiled and naive): a tile's place
pairs each thread's global load with its shared store, never the kernel's index arithmetic. Phase t = epoch // 2
(two barriers a trip); `TiledTrace` checks that shape first and says what failed in a kernel that breaks it.
"""
import base64
import functools
import html
from collections import Counter, defaultdict

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LinearSegmentedColormap, to_hex
from matplotlib.patches import Patch, Rectangle

from ..core.launch import resolve
from ..core.operands import operands
from ..core.rules import is_whole, listed, whole
from ..counting import count_loads
from ..counting.hazards import EFFECT
from ..i18n import N_, _
from . import plots
from .plots import tr

__all__ = ["TileStepper", "TiledTrace", "TraceMismatch", "step_through", "launches", "FALLBACK_TEXT"]

FALLBACK_TEXT = N_("Tile stepper (interactive in JupyterLab): the frames above show every phase.")
SIZES = range(4, 17)  # N: square matrices small enough to read cell by cell (and to count on the simulator)
TILES = (2, 4, 8)
OPERANDS = ("A", "B")
FETCH, READ, OWN = "tab:red", "tab:orange", "tab:green"  # the chosen thread's fetches, reads and C element
CMAP = LinearSegmentedColormap.from_list("fetched", ["#ffffff", "#5b9bd5"])  # light enough for black labels
EARLIER = 0.35  # opacity of elements fetched in an earlier phase (no longer in shared memory)
FONT = 12  # titles, labels and counts; every text in the figures is at least 10 pt
CELL_FONT = 11  # the labels inside cells
SHAPE_OF_PHASES = N_("in each phase every thread loads one element of A's tile and one of B's into sA and sB, passes "
                      "a cuda.syncthreads(), multiply-adds from sA and sB, and passes a second cuda.syncthreads()")
# Figure layout in inches, fixed (a layout engine took most of the drawing time of a tall strip).
_LEFT, _GAP, _TEXT, _TOP, _ROW_EXTRA, _BOTTOM = 0.7, 0.7, 3.6, 0.5, 1.05, 1.3
_seen = set()  # (N, T, seed, kernel) already counted: the status line says "counting" only for new ones


class TraceMismatch(RuntimeError):
    """A counted launch without the tiled kernel's phases; `problems` lists every check that failed."""

    def __init__(self, counted, problems, shown=3):
        self.problems = problems
        more = _(" (and {n} more)").format(n=len(problems) - shown) if len(problems) > shown else ""
        super().__init__(
            _("The stepper cannot replay {kernel} at N = {N}, T = {T}: its counted launch does not have the "
              "tiled kernel's shape of phases ({shape}).\nWhat differs: {problems}{more}.\n"
              "A cuda.syncthreads() removed or moved, or a tile loaded another way, does this: put it back, or "
              "step through the library's kernel (leave out kernel=).").format(
                kernel=counted.kernel, N=counted.shape[2], T=counted.tile, shape=_(SHAPE_OF_PHASES),
                problems="; ".join(problems[:shown]), more=more))


def _validate(N, T, seed=0, block=(0, 0), thread=(0, 0)):
    if not is_whole(N) or N not in SIZES:
        raise ValueError(_("N must be a whole number from {low} to {high}, got {N!r}").format(
            low=SIZES.start, high=SIZES.stop - 1, N=N))
    if not is_whole(T) or T not in TILES:
        raise ValueError(_("T must be one of {tiles}, got {T!r}").format(tiles=TILES, T=T))
    whole("seed", seed, least=0)
    for name, pair, axes in (("block", block, "by, bx"), ("thread", thread, "ty, tx")):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and is_whole(*pair)):
            raise ValueError(_("{name}={pair!r}: give {name}=({axes}), two whole numbers, e.g. {name}=(0, 1)").format(
                name=name, pair=pair, axes=axes))
    blocks = -(-N // T)
    if not all(0 <= b < blocks for b in block):
        raise ValueError(_("block (by, bx) = {block}: with N={N}, T={T} there are {blocks}×{blocks} blocks, so "
                           "each index runs from 0 to {top}").format(block=tuple(block), N=N, T=T, blocks=blocks,
                                                                    top=blocks - 1))
    if not all(0 <= t < T for t in thread):
        raise ValueError(_("thread (ty, tx) = {thread}: a block has {T}×{T} threads, so each index runs from "
                           "0 to {top}").format(thread=tuple(thread), T=T, top=T - 1))


def _tiled(kernel, T):
    """`kernel` if the stepper can replay it: a T×T tiled kernel with shared tiles, else a ValueError naming why."""
    if "T" not in kernel.constants:
        raise ValueError(_("{kernel} has no tile width T ({constants}): the stepper replays the lesson's tiled kernel "
                           "shape only, T×T tiles at step_through's T, and takes no other constants; pass a tiled "
                           "kernel or leave out kernel=").format(kernel=kernel.name,
                                                                 constants=listed(kernel.constants)))
    try:
        declared = kernel.bind(tile=T).shared_declarations
    except (TypeError, ValueError):  # declared in a way the count refuses: count_loads says why, in its order
        declared = True
    if not declared:
        raise ValueError(_("{kernel} declares no shared arrays: the stepper replays a tiled kernel (sA and sB loaded "
                           "each phase); pass a tiled kernel or leave out kernel=").format(kernel=kernel.name))
    return kernel


def _fields(r):
    return (int(r.by), int(r.bx)), (int(r.ty), int(r.tx)), int(r.epoch), (int(r.i), int(r.j))


class TiledTrace:
    """The counted tiled launch, checked (else TraceMismatch) and indexed by (block, phase): stores[(block,
    phase, array)] = {(a, b): thread}; reads[(block, phase, thread, array)] = [(a, b), ...] in order;
    fetches[(block, phase, name)] = {(i, j): thread}; origin[(block, phase, name)] = the tile's place."""

    def __init__(self, counted):
        self.counted = c = counted
        M, K, N = self.shape = c.shape
        self.T = T = c.tile
        self.phases = -(-K // T)
        self.blocks = (-(-M // T), -(-N // T))  # (rows of blocks, columns of blocks)
        self.padded = (self.blocks[0] * T, self.phases * T, self.blocks[1] * T)  # M, K, N rounded up to T
        if c.trace is None or c.shared_trace is None:  # nothing else can be checked: refused at once
            raise TraceMismatch(c, [_("count the launch with trace=True")])
        if sorted(c.shared_names) != ["sA", "sB"]:
            raise TraceMismatch(c, [_("shared arrays {names}: expected sA and sB").format(names=c.shared_names)])
        self.array_of = {name: c.shared_names.index("s" + name) for name in OPERANDS}
        stores, reads = c.shared_trace[c.shared_trace.store == 1], c.shared_trace[c.shared_trace.store == 0]
        shared, store_of = self._index_shared(stores, reads)
        problems = _epoch_problems(c, stores, reads, self.phases) + shared + self._pair_fetches(store_of)
        problems += [_("block {block} phase {phase}: no thread fetched any of {name}'s tile").format(
                         block=block, phase=phase, name=name) for block in np.ndindex(self.blocks)
                     for phase in range(self.phases) for name in OPERANDS if (block, phase, name) not in self.origin]
        if problems:
            raise TraceMismatch(c, problems)

    def _index_shared(self, stores, reads):
        """self.stores, self.reads; (what failed, {(block, thread, epoch, array): [(a, b)]})."""
        names, problems, read_cells = self.counted.shared_names, [], defaultdict(set)
        self.stores, self.reads, store_of = defaultdict(dict), defaultdict(list), defaultdict(list)
        for r in stores:
            block, thread, epoch, cell = _fields(r)
            key = (block, epoch // 2, int(r.array))
            store_of[(block, thread, epoch, key[2])].append(cell)
            if cell in self.stores[key]:
                problems.append(_("block {block} phase {phase}: {element} stored twice").format(
                    block=block, phase=key[1], element=f"{names[key[2]]}{list(cell)}"))
            self.stores[key][cell] = thread
        problems += [_("block {block} phase {phase}: {n} of {size} elements of {name} stored").format(
                         block=key[0], phase=key[1], n=len(cells), size=self.T ** 2, name=names[key[2]])
                     for key, cells in self.stores.items() if len(cells) != self.T ** 2]
        for r in reads:
            block, thread, epoch, cell = _fields(r)
            self.reads[(block, epoch // 2, thread, int(r.array))].append(cell)
            read_cells[(block, epoch // 2, int(r.array))].add(cell)
        problems += [_("block {block} phase {phase}: the reads of {name} do not read exactly the elements stored "
                       "in that phase").format(block=key[0], phase=key[1], name=names[key[2]])
                     for key in set(read_cells) | set(self.stores)
                     if read_cells.get(key, set()) != set(self.stores.get(key, {}))]
        return problems, store_of

    def _pair_fetches(self, store_of):
        """self.fetches, self.origin: each global load paired with its thread's one store in that epoch."""
        problems = []
        self.fetches, offsets, per_block = defaultdict(dict), defaultdict(set), Counter()
        for r in self.counted.trace:
            name, (block, thread, epoch, cell) = OPERANDS[int(r.operand)], _fields(r)
            per_block[(block, name, cell)] += 1
            paired = store_of.get((block, thread, epoch, self.array_of[name]), [])
            if len(paired) != 1:
                problems.append(_("thread {thread} of block {block} fetched {element} in epoch {epoch} but made {n} "
                                  "stores into s{name} then").format(thread=thread, block=block, epoch=epoch, name=name,
                                                                     element=f"{name}{list(cell)}", n=len(paired)))
                continue
            (a, b), = paired
            offsets[(block, epoch // 2, name)].add((cell[0] - a, cell[1] - b))
            self.fetches[(block, epoch // 2, name)][cell] = thread
        if twice := [k for k, n in per_block.items() if n > 1]:
            problems.append(_("{n} elements fetched more than once by one block, e.g. {example}").format(
                n=len(twice), example=twice[0]))
        self.origin = {key: min(found) for key, found in offsets.items()}
        return problems + [_("block {block} phase {phase}: the {name} tile's elements sit at {n} different offsets "
                             "from their places in s{name}").format(block=key[0], phase=key[1], name=key[2],
                                                                    n=len(found))
                           for key, found in offsets.items() if len(found) != 1]


def _epoch_problems(c, stores, reads, phases):
    """No hazards; only A and B loaded; loads and stores in even epochs, reads in odd ones; every phase."""
    g, problems = c.trace, []
    if total := sum(c.hazards.values()):
        problems.append(_("{total:,} barrier hazards ({effect})").format(total=total, effect=_(EFFECT)))
    if len(g) and not set(np.unique(g.operand).tolist()) <= {0, 1}:
        problems.append(_("global loads of C: the tiled kernel loads only A and B"))
    if n := int(np.sum(g.epoch % 2 == 1)):
        problems.append(_("{n} global loads in an odd epoch (after the first barrier of a phase)").format(n=n))
    if n := int(np.sum(stores.epoch % 2 == 1)):
        problems.append(_("{n} shared stores in an odd epoch").format(n=n))
    if n := int(np.sum(reads.epoch % 2 == 0)):
        problems.append(_("{n} shared reads in an even epoch").format(n=n))
    seen = sorted(set((np.concatenate([g.epoch, c.shared_trace.epoch]) // 2).tolist()))
    if seen != list(range(phases)):
        problems.append(_("phases {seen} in the trace, expected 0…{last} (K={K}, T={T})").format(
            seen=seen, last=phases - 1, K=c.shape[1], T=c.tile))
    return problems


def launches(N, T, seed=0, kernel=None):
    """(TiledTrace, naive LoadCount) of counted launches at N×N, tile T: cached per (N, T, seed, kernel)."""
    _validate(N, T, seed)  # the cache's key: one Kernel object per kernel, however it was written
    return _launches(int(N), int(T), int(seed), _tiled(resolve("tiled" if kernel is None else kernel), T))


@functools.lru_cache(maxsize=48)
def _launches(N, T, seed, kernel):
    return TiledTrace(count_loads(kernel, *operands(N, N, N, seed), tile=T, trace=True)), _naive(N, T, seed)


@functools.lru_cache(maxsize=48)
def _naive(N, T, seed):
    naive = count_loads("naive", *operands(N, N, N, seed), tile=T, trace=True)
    n = naive.trace  # the comparison needs the naive launch's blocks to be the tiled one's: T×T threads
    if not (n.tx.max() < T and n.ty.max() < T and n.bx.max() == n.by.max() == -(-N // T) - 1):
        raise RuntimeError(f"the naive launch's blocks are not {T}×{T} threads on the tiled kernel's grid")
    return naive


class TileStepper:
    """One block and thread of a tiled kernel (the library's by default) at N×N, tile T, phase by phase."""

    def __init__(self, N=8, T=4, block=(0, 0), thread=(1, 2), seed=0, kernel=None):
        _validate(N, T, seed, block, thread)
        self.N, self.T, self.seed = int(N), int(T), seed
        self.block, self.thread = tuple(map(int, block)), tuple(map(int, thread))
        self.kernel = resolve("tiled" if kernel is None else kernel)
        self.tiled, self.naive = launches(self.N, self.T, seed, self.kernel)
        self.phases = self.tiled.phases
        self._frames = [self._frame(t) for t in range(self.phases)]

    # ---- what is drawn -------------------------------------------------------------------------
    def frames(self):
        return list(self._frames)

    def frame(self, t):
        """What phase t shows, (row, column) coordinates: tiles[name] (origin, fetched_by, zero), thread_view,
        counts (phases 0…t: block, thread, naive over the same k), loads_so_far[name] (phases 0…t, padded grid)."""
        if not 0 <= t < self.phases:
            raise ValueError(f"phase t runs from 0 to {self.phases - 1} (N={self.N}, T={self.T}), got {t}")
        return self._frames[t]

    def _frame(self, t):
        tiles = {name: self._tile(t, name) for name in OPERANDS}
        k_lo = tiles["A"]["origin"][1]
        k_hi = min(k_lo + self.T, self.tiled.shape[1])
        return {"N": self.N, "T": self.T, "block": self.block, "thread": self.thread, "phase": t,
                "phases": self.phases, "epochs": (2 * t, 2 * t + 1), "k": (k_lo, k_hi), "tiles": tiles,
                "thread_view": self._thread_view(t, tiles), "counts": self._counts(t, k_hi),
                "loads_so_far": self._loads_so_far(t)}

    def _tile(self, t, name):
        tiled, T, b = self.tiled, self.T, self.block
        r0, c0 = tiled.origin[(b, t, name)]
        fetched = dict(tiled.fetches[(b, t, name)])
        zero = [(r0 + a, c0 + c) for a in range(T) for c in range(T) if (r0 + a, c0 + c) not in fetched]
        rows, cols = tiled.shape[:2] if name == "A" else tiled.shape[1:]  # A is M×K, B is K×N
        if any(i < rows and j < cols for i, j in zero):
            raise TraceMismatch(tiled.counted, [_("block {block} phase {t}: elements of {name} inside the matrix were "
                                                  "never fetched").format(block=b, t=t, name=name)])
        return {"origin": (r0, c0), "fetched_by": fetched, "zero": zero}

    def _thread_view(self, t, tiles):
        tiled, b, th = self.tiled, self.block, self.thread
        view = {"fetched": {}, "stored": {}, "reads": {}, "reads_at": {}}
        for name in OPERANDS:
            array, (r0, c0) = tiled.array_of[name], tiles[name]["origin"]
            view["fetched"][name] = sorted(cell for cell, who in tiles[name]["fetched_by"].items() if who == th)
            view["stored"]["s" + name] = sorted(cell for cell, who in tiled.stores[(b, t, array)].items() if who == th)
            view["reads"]["s" + name] = tiled.reads[(b, t, th, array)]
            view["reads_at"][name] = [(r0 + a, c0 + c) for a, c in view["reads"]["s" + name]]
        rows, cols = {i for i, _ in view["reads_at"]["A"]}, {j for _, j in view["reads_at"]["B"]}
        if len(rows) != 1 or len(cols) != 1:
            raise TraceMismatch(tiled.counted, [_("thread {thread} of block {block} read A rows {rows} and B columns "
                                                  "{cols} in phase {t}: expected one row and one column").format(
                                                      thread=th, block=b, rows=sorted(rows), cols=sorted(cols), t=t)])
        view["C"] = (rows.pop(), cols.pop())
        view["computes"] = view["C"][0] < tiled.shape[0] and view["C"][1] < tiled.shape[2]
        return view

    def _counts(self, t, k_end):
        c, b, th = self.tiled.counted, self.block, self.thread
        g, s = c.trace, c.shared_trace
        gb = g[(g.by == b[0]) & (g.bx == b[1]) & (g.epoch <= 2 * t + 1)]
        sb = s[(s.by == b[0]) & (s.bx == b[1]) & (s.epoch <= 2 * t + 1)]
        mine = lambda r: r[(r.ty == th[0]) & (r.tx == th[1])]  # noqa: E731
        tally = lambda g, s: {"global": len(g), "shared_stores": int(np.sum(s.store == 1)),  # noqa: E731
                              "shared_reads": int(np.sum(s.store == 0))}
        n = self.naive.trace
        # The naive kernel has no phases: "the same k range" is k < k_end, where k is A's column / B's row.
        nb = n[(n.by == b[0]) & (n.bx == b[1]) & (np.where(n.operand == 0, n.j, n.i) < k_end)]
        return {"block": tally(gb, sb), "thread": tally(mine(gb), mine(sb)),
                "naive": {"block": len(nb), "thread": len(mine(nb)), "k_end": k_end}}

    def _loads_so_far(self, t):
        Mp, Kp, Np = self.tiled.padded
        g, b = self.tiled.counted.trace, self.block
        mine = g[(g.by == b[0]) & (g.bx == b[1]) & (g.epoch <= 2 * t + 1)]
        maps = {"A": np.zeros((Mp, Kp), int), "B": np.zeros((Kp, Np), int)}
        for k, name in enumerate(OPERANDS):
            loads = mine[mine.operand == k]
            np.add.at(maps[name], (loads.i, loads.j), 1)  # counted from the trace, record by record
        return maps

    # ---- pictures ------------------------------------------------------------------------------
    def strip(self):
        """Every phase of the chosen block, one row each: A and B (who fetched what), C, the counts."""
        phases = tr(N_(", all {n} phases")).format(n=self.phases) if self.phases > 1 else tr(N_(", 1 phase"))
        return self._figure(self.frames(), phases)

    def frame_figure(self, t, counts=True):
        """Phase t alone (the widget's, counts=False: its counts are HTML, so the picture stays large)."""
        return self._figure([self.frame(t)], tr(N_(", phase t = {t} of 0…{last}")).format(t=t, last=self.phases - 1),
                            counts)

    def _figure(self, frames, subtitle, counts=True):
        """The frames one row each on one colour scale: up to the most loads of one element (1 when tiling works)."""
        vmax = max(1, max(int(m.max()) for m in self._frames[-1]["loads_so_far"].values()))
        size = max(2.7, 0.34 * max(self.tiled.padded))  # 0.34 inch a cell or more: "7,7" at 11 pt fits
        fig, axes = _layout(len(frames), size, counts)
        for frame, row in zip(frames, axes):  # A, B, C (and the counts)
            image = _draw_operand(row[0], frame, "A", vmax)
            _draw_operand(row[1], frame, "B", vmax)
            _draw_C(row[2], frame)
            if counts:
                _text_panel(row[3], frame)
        title = tr(N_("Tiled kernel {kernel}, N = {N}, T = {T}: block (by, bx) = {block}, thread (ty, tx) = "
                            "{thread}")).format(kernel=self.kernel.name, N=self.N, T=self.T, block=self.block,
                                                thread=self.thread)
        _finish(fig, image, title + subtitle, vmax, size)
        return fig

    def widget(self):
        """The sliders over one frame image; its text/plain form is FALLBACK_TEXT."""
        import ipywidgets as w

        class StepperBox(w.VBox):
            def __repr__(self):
                return _(FALLBACK_TEXT)

        c = _controls(w, self)
        status, image = w.HTML(), w.Image(format="png", layout=w.Layout(max_width="100%", height="auto"))
        tile_row = w.HBox([w.HTML('<div style="text-align: right; padding-right: 8px">T</div>',
                                  layout=w.Layout(width="78px")), c["T"]])
        rows = w.HBox([w.VBox([c["N"], tile_row]), w.VBox([c["by"], c["bx"]]), w.VBox([c["ty"], c["tx"]]),
                       w.VBox([c["phase"], c["play"]])])
        box = StepperBox([rows, status, image])
        box.stepper, box.frame, box.controls = self, None, c
        busy = []  # non-empty while the widget updates itself: the slider moves it makes are not the reader's

        def show(change=None):
            if busy:
                return
            busy.append(True)
            try:
                if change and change["owner"] is not c["phase"]:
                    box.stepper = _new_stepper(c, box.stepper, status)
                t = c["phase"].value
                box.frame = box.stepper.frame(t)
                image.value = plots.png(box.stepper.frame_figure(t, counts=False), dpi=90)
                status.value = _counts_html(box.frame)
            except TraceMismatch as refused:  # e.g. an edited kernel with one phase at the old size, more now
                status.value = html.escape(str(refused))
            finally:
                busy.clear()

        for name in ("N", "T", "by", "bx", "ty", "tx", "phase"):
            c[name].observe(show, names="value")
        _seen.add((self.N, self.T, self.seed, self.kernel))
        show()
        return box


def counts_text(frame):
    """[(cells, style)] for the strip's counts panel and the widget's table: one cell a line, three a row
    (label, block, thread); style None, "bold", "header" or a colour (FETCH, READ)."""
    c, t, th, view = frame["counts"], frame["phase"], frame["thread"], frame["thread_view"]
    k_lo, k_hi = frame["k"]
    fetched = ", ".join(f"{n}[{i},{j}]" for n in OPERANDS for i, j in view["fetched"][n]) or tr(N_("nothing (padding)"))
    ci, cj = view["C"]
    ks = f"{k_lo}" + (f"…{k_hi - 1}" if k_hi - 1 > k_lo else "")
    return [
        ((tr(N_("phase t = {t}: k = {ks}")).format(t=t, ks=ks),), "bold"),
        ((tr(N_("epochs {load} (load, store), {read} (read)")).format(load=frame["epochs"][0],
                                                                      read=frame["epochs"][1]),), None),
        (("",), None),
        ((tr(N_("running totals, phases 0…{t}")).format(t=t),), "bold"),
        (("", tr(N_("block")), tr(N_("thread"))), "header"),
        ((tr(N_("global loads")), c["block"]["global"], c["thread"]["global"]), None),
        (("  " + tr(N_("naive kernel")), c["naive"]["block"], c["naive"]["thread"]), None),
        ((tr(N_("shared stores")), c["block"]["shared_stores"], c["thread"]["shared_stores"]), None),
        ((tr(N_("shared reads")), c["block"]["shared_reads"], c["thread"]["shared_reads"]), None),
        ((tr(N_("(naive: same block, k < {k})")).format(k=c["naive"]["k_end"]),), None),
        (("",), None),
        ((tr(N_("thread {ty},{tx} → C[{i},{j}]")).format(ty=th[0], tx=th[1], i=ci, j=cj)
          + ("" if view["computes"] else tr(N_(" (outside C)"))),), "bold"),
        ((tr(N_("fetched {what}")).format(what=fetched),), FETCH),
        ((tr(N_("reads sA row {ty}, sB column {tx}")).format(ty=th[0], tx=th[1]),), READ),
    ]


def _colour(style):
    return style if style in (FETCH, READ) else "black"


# ---- drawing (matplotlib) -------------------------------------------------------------------------
def _grid(ax, shape, n_true, title):
    rows, cols = shape
    ax.set(xlim=(-0.5, cols - 0.5), ylim=(rows - 0.5, -0.5), aspect="equal")
    step = 1 if max(rows, cols) <= 12 else 2  # every index while the labels fit, else every other one
    ax.set(xticks=range(0, cols, step), yticks=range(0, rows, step))
    ax.tick_params(labelsize=10, length=0)
    edges = np.arange(-0.5, max(rows, cols))  # thin cell borders, as two collections (ticks are slow)
    ax.hlines(edges[:rows + 1], -0.5, cols - 0.5, color="0.85", lw=0.6, zorder=1)
    ax.vlines(edges[:cols + 1], -0.5, rows - 0.5, color="0.85", lw=0.6, zorder=1)
    if n_true[0] < rows or n_true[1] < cols:  # padding: outside the matrix
        pad = dict(facecolor="0.93", edgecolor="0.6", hatch="//", lw=0, zorder=0)
        ax.add_patch(Rectangle((-0.5, n_true[0] - 0.5), cols, rows - n_true[0], **pad))
        ax.add_patch(Rectangle((n_true[1] - 0.5, -0.5), cols - n_true[1], n_true[0], **pad))
        ax.add_patch(Rectangle((-0.5, -0.5), n_true[1], n_true[0], fill=False, lw=2, color="black", zorder=6))
    ax.set_title(title, fontsize=FONT + 1)
    ax.set_xlabel(tr(N_("column")), fontsize=FONT)
    ax.set_ylabel(tr(N_("row")), fontsize=FONT)


def _box(ax, i, j, h, w, color, lw, inset=0.0, ls="-", z=7):
    ax.add_patch(Rectangle((j - 0.5 + inset, i - 0.5 + inset), w - 2 * inset, h - 2 * inset, fill=False,
                           edgecolor=color, lw=lw, ls=ls, zorder=z))


def _draw_operand(ax, frame, name, vmax):
    """A or B: loads so far on the one colour scale, this phase's tile, who fetched what, the thread's reads."""
    T, t, view, N = frame["T"], frame["phase"], frame["thread_view"], frame["N"]
    counts, tile = frame["loads_so_far"][name], frame["tiles"][name]
    r0, c0 = tile["origin"]
    alpha = np.full(counts.shape, EARLIER)
    alpha[r0:r0 + T, c0:c0 + T] = 1.0
    image = ax.imshow(np.ma.masked_equal(counts, 0), cmap=CMAP, vmin=0, vmax=vmax, zorder=2, alpha=alpha)
    _grid(ax, counts.shape, (N, N), tr(N_("phase t = {t}: {name} tile in s{name}")).format(t=t, name=name))
    _box(ax, r0, c0, T, T, "black", 2.6)
    for (i, j), (ty, tx) in tile["fetched_by"].items():
        ax.text(j, i, f"{ty},{tx}", ha="center", va="center", fontsize=CELL_FONT, zorder=8)
    for i, j in tile["zero"]:
        ax.text(j, i, "0", ha="center", va="center", fontsize=CELL_FONT, color="0.35", zorder=8)
    for i, j in view["fetched"][name]:
        _box(ax, i, j, 1, 1, FETCH, 3.2, inset=0.06, z=9)
    if read := view["reads_at"][name]:
        (i, j) = min(read)
        h, w = (1, len(read)) if name == "A" else (len(read), 1)
        _box(ax, i, j, h, w, READ, 2.4, inset=0.16, ls=(0, (3, 1.5)), z=9)
    return image


def _draw_C(ax, frame):
    T, t, th, N = frame["T"], frame["phase"], frame["thread"], frame["N"]
    Mp, Np = frame["loads_so_far"]["A"].shape[0], frame["loads_so_far"]["B"].shape[1]
    _grid(ax, (Mp, Np), (N, N), tr(N_("phase t = {t}: C tile of block {block}")).format(t=t, block=frame["block"]))
    rb, cb = frame["tiles"]["A"]["origin"][0], frame["tiles"]["B"]["origin"][1]
    ax.add_patch(Rectangle((cb - 0.5, rb - 0.5), T, T, facecolor=OWN, alpha=0.18, zorder=2))
    _box(ax, rb, cb, T, T, "black", 2.6)
    ci, cj = frame["thread_view"]["C"]
    ax.add_patch(Rectangle((cj - 0.5, ci - 0.5), 1, 1, facecolor=OWN, alpha=0.9, zorder=3))
    ax.text(cj, ci, f"{th[0]},{th[1]}", ha="center", va="center", fontsize=CELL_FONT, color="white", zorder=8)


def _text_panel(ax, frame):
    """counts_text, each column aligned at its own place: no monospace font draws Chinese."""
    ax.axis("off")
    box = ax.get_position()
    step = FONT * 1.5 / 72 / (box.height * ax.figure.get_figheight())  # 1.5 lines of FONT points, in axes units
    for k, (cells, style) in enumerate(counts_text(frame)):
        y, weight = 1.0 - k * step, "bold" if style == "bold" else "normal"
        for text, x, ha in zip(cells, (0.0, 0.72, 0.97), ("left", "right", "right")):
            ax.text(x, y, str(text), transform=ax.transAxes, va="top", ha=ha, fontsize=FONT, fontweight=weight,
                    color=_colour(style))


def _layout(rows, size, counts=True):
    columns = 4 if counts else 3
    width = _LEFT + 3 * size + 2 * _GAP + (0.45 + _TEXT if counts else 0.3)
    width = max(width, _LEFT + size + _GAP + 7.4)  # room for the legend's two columns
    height = _TOP + rows * (size + _ROW_EXTRA) + _BOTTOM
    fig = plt.figure(figsize=(width, height))
    axes = np.empty((rows, columns), dtype=object)
    for r in range(rows):
        y = height - _TOP - (r + 1) * (size + _ROW_EXTRA) + 0.65  # 0.65: below the panel, its x label
        for k in range(columns):
            x = _LEFT + k * (size + _GAP) if k < 3 else _LEFT + 3 * size + 2 * _GAP + 0.45
            w = size if k < 3 else _TEXT
            axes[r, k] = fig.add_axes([x / width, y / height, w / width, size / height])
    return fig, axes


def _finish(fig, image, title, vmax, size):
    width, height = fig.get_size_inches()
    fig.suptitle(title, fontsize=FONT + 3, y=1 - 0.18 / height, va="top")
    cax = fig.add_axes([_LEFT / width, 0.8 / height, size / width, 0.16 / height])
    bar = fig.colorbar(image, cax=cax, orientation="horizontal")
    bar.set_label(tr(N_("global loads of each element\nby this block so far (one scale)")), fontsize=FONT)
    bar.set_ticks(range(0, vmax + 1))
    bar.ax.tick_params(labelsize=10)
    legend = [
        Patch(facecolor="none", edgecolor="black", lw=2.6, label=tr(N_("tile in shared memory"))),
        Patch(facecolor="none", edgecolor=FETCH, lw=3, label=tr(N_("fetched by the thread"))),
        Patch(facecolor="none", edgecolor=READ, lw=2.4, ls="--", label=tr(N_("read by the thread from shared"))),
        Patch(facecolor=CMAP(1.0), alpha=EARLIER, label=tr(N_("fetched in an earlier phase"))),
        Patch(facecolor=OWN, label=tr(N_("the thread's element of C"))),
        Patch(facecolor="0.93", edgecolor="0.6", hatch="//", label=tr(N_("outside the matrix: stored as 0")))]
    fig.legend(handles=legend, loc="lower left", ncols=2, fontsize=FONT, frameon=False,
               bbox_to_anchor=((_LEFT + size + _GAP + 0.1) / width, 0.05 / height))


# ---- the widget (ipywidgets) ----------------------------------------------------------------------
def _counts_html(frame):
    cell = 'style="padding: 1px 10px; text-align: {}"'
    parts, table = [], []
    for cells, style in counts_text(frame) + [((), None)]:  # the empty end closes an open table
        if len(cells) == 3:
            tag = "th" if style == "header" else "td"
            table.append("<tr>" + "".join(f"<{tag} {cell.format(align)}>{_html(v)}</{tag}>"
                                          for v, align in zip(cells, ("left", "right", "right"))) + "</tr>")
            continue
        if table:
            parts.append('<table style="margin: 4px 0">' + "".join(table) + "</table>")
            table = []
        if cells:
            weight = "bold" if style == "bold" else "normal"
            parts.append(f'<div style="font-weight: {weight}; color: {to_hex(_colour(style))}; min-height: 0.6em">'
                         f"{_html(cells[0])}</div>")
    return '<div style="font-size: 14px; line-height: 1.35">' + "".join(parts) + "</div>"


def _html(value):
    text = html.escape(str(value))
    return "&nbsp;" * (len(text) - len(text.lstrip(" "))) + text.lstrip(" ")


def _controls(w, s):
    layout, style = w.Layout(width="260px"), {"description_width": "70px"}

    def slider(value, top, description, low=0, **more):
        return w.IntSlider(value, min=low, max=top, description=description, layout=layout, style=style, **more)

    c = {"N": slider(s.N, SIZES.stop - 1, "N", SIZES.start, continuous_update=False),
         "T": w.ToggleButtons(options=list(TILES), value=s.T, style={"button_width": "44px"}),
         "by": slider(s.block[0], s.tiled.blocks[0] - 1, _("block by")),
         "bx": slider(s.block[1], s.tiled.blocks[1] - 1, _("block bx")),
         "ty": slider(s.thread[0], s.T - 1, _("thread ty")), "tx": slider(s.thread[1], s.T - 1, _("thread tx")),
         "phase": slider(0, s.phases - 1, _("phase t")),
         "play": w.Play(value=0, min=0, max=s.phases - 1, interval=1500, description=_("play the phases"),
                        tooltip=_("play the phases"))}
    w.jslink((c["play"], "value"), (c["phase"], "value"))
    return c


def _new_stepper(c, old, status):
    """The stepper the controls ask for; a slider's value follows its max down, so block and thread stay in range."""
    N, T = c["N"].value, c["T"].value
    if (N, T, old.seed, old.kernel) not in _seen:
        status.value = html.escape(_("counting N = {N}, T = {T} …").format(N=N, T=T))
    for name, top in (("by", -(-N // T) - 1), ("bx", -(-N // T) - 1), ("ty", T - 1), ("tx", T - 1)):
        c[name].max = top
    new = TileStepper(N, T, (c["by"].value, c["bx"].value), (c["ty"].value, c["tx"].value), old.seed, old.kernel)
    _seen.add((N, T, old.seed, old.kernel))
    c["phase"].max = c["play"].max = new.phases - 1
    return new


def step_through(N=8, T=4, block=(0, 0), thread=(1, 2), seed=0, kernel=None):
    """The widget in a live JupyterLab, else (or without ipywidgets) the strip; a refused kernel is named, with why."""
    from IPython.display import display
    try:
        s = TileStepper(N, T, block, thread, seed, kernel)
    except TraceMismatch as refused:
        print(refused)
        return
    fig = s.strip()
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        display(fig)
        plt.close(fig)
        print(_("(install ipywidgets for the interactive stepper; the frames above show every phase)"))
        return
    strip = plots.png(fig, bbox_inches="tight")  # as the inline backend would draw it
    display({**s.widget()._repr_mimebundle_(), "image/png": base64.b64encode(strip).decode()}, raw=True)
