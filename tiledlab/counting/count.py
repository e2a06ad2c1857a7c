"""Run a kernel with counting switched on and return what it fetched, from where, and how often."""
from dataclasses import dataclass

import numpy as np

from ..backend import SIMULATOR
from ..core.launch import prepare
from ..i18n import _
from .buffers import HAZARDS, OPERANDS, SHARED_TRACE_FIELDS, STAMP, as_records
from .recorded import second_count
from .rewrite import instrumented


@dataclass
class LoadCount:
    """Measured memory traffic of one launch. Maps are indexed like the matrices they describe."""
    kernel: str
    shape: tuple          # (M, K, N)
    tile: int             # T of the lesson's kernels; None for kernels with other constants
    maps: dict            # "A", "B", "C" (by argument position) → how often each element was read
    thread_loads: np.ndarray   # global loads made by each thread, indexed [row, col] of the thread grid
    shared_reads: np.ndarray   # shared-memory reads made by each thread
    shared_stores: np.ndarray  # shared-memory writes made by each thread
    hazards: dict         # barrier hazards seen in shared memory (0 everywhere for a correct kernel)
    C: np.ndarray         # the product the counted launch computed
    trace: np.recarray = None  # one record per global load (fields: buffers.TRACE_FIELDS), when asked for
    shared_trace: np.recarray = None  # one record per shared access (buffers.SHARED_TRACE_FIELDS), likewise
    shared: dict = None   # the kernel's shared arrays {name: shape}, in the order shared_trace.array numbers them
    constants: dict = None  # every compile-time constant of the counted build ({"T": 4}, {"BM": 64, ...})
    C_stores: np.ndarray = None  # stores into each element of C
    C_races: list = None  # elements of C stored by two threads: (i, j, first, other), each (by, bx, ty, tx)

    @property
    def A(self):
        return int(self.maps["A"].sum())

    @property
    def B(self):
        return int(self.maps["B"].sum())

    @property
    def shared_names(self):
        return tuple(self.shared or ())

    @property
    def total(self):
        return self.A + self.B


def trace_room(launch):
    """Records the traces need room for: more than any sensible kernel makes. Sized from the part of C
    the launched grid covers and from K padded by a block tile, not from M, K, N: when a tile does not
    divide them, edge blocks also store and read the zeros of the padding (N=6, T=4: 1,280 shared
    accesses), and a register-tiled kernel may read clamped rows again."""
    rows, cols = launch.block
    M, N = launch.blockspergrid[1] * rows, launch.blockspergrid[0] * cols
    K = launch.shape[1] + max(rows, cols)  # at least K rounded up to any step ≤ the tile
    return 2 * M * N * K + 2 * K * (M + N) + M * N


def count_loads(kernel, A, B, tile=None, trace=False, **constants):
    """Launch `kernel` (a name such as 'naive', 'tiled', 'regtile_2d', or a @cuda.jit(A, B, C) function)
    with counting on: at tile width `tile` (the lesson's kernels, 16 by default) or at the named
    constants of a register-tiled kernel (`count_loads("regtile_2d", A, B, BM=32, TM=4)`).

    With trace=True, also record every global load (`trace`) and every shared-memory access
    (`shared_trace`), each with the thread that made it; meant for small examples.

    On the simulator every launch is counted twice, by the rewrite and by operands that record each
    element read and stored (`recorded`); when the two differ this raises a RuntimeError instead of
    returning a count. On a GPU only the rewrite counts.
    """
    launch = prepare(kernel, A, B, tile, build=instrumented, **constants)
    capacity = trace_room(launch) if trace else 0
    buffers = launch.kernel.buffers
    arrays = buffers.allocate(launch, capacity)
    second = second_count(launch, SIMULATOR)
    if second:
        with second.armed():
            launch(*arrays)
    else:
        launch(*arrays)
    got = buffers.read(arrays)
    if second:
        second.compare(got, launch.name)
    made, shared_made = int(got["trace_pos"][0]), int(got["shared_trace_pos"][0])
    if trace and (made > capacity or shared_made > 2 * capacity):
        raise ValueError(_("the kernel made {loads:,} global loads and {shared:,} shared accesses, more "
                           "than the trace holds: trace a smaller product").format(loads=made, shared=shared_made))
    return LoadCount(
        kernel=launch.name, shape=launch.shape, tile=launch.tile,
        maps={op: got[f"count_{op}"] for op in OPERANDS},
        thread_loads=got["thread_loads"], shared_reads=got["shared_reads"], shared_stores=got["shared_stores"],
        hazards=dict(zip(HAZARDS, map(int, got["hazards"]))), C=np.asarray(launch.result()),
        trace=as_records(got["trace"][:made]) if trace else None,
        shared_trace=as_records(got["shared_trace"][:shared_made], SHARED_TRACE_FIELDS) if trace else None,
        shared=dict(buffers.shared), constants=dict(launch.constants),
        C_stores=got["C_stores"], C_races=races(got["C_writer"], got["C_other_writer"], launch))


def races(writer, other, launch):
    """(i, j, first, other) for each element of C stored by two threads; threads as (by, bx, ty, tx)."""
    def thread(stamp):
        block, me = divmod(int(stamp), STAMP)
        by, bx = divmod(block, launch.blockspergrid[0])
        ty, tx = divmod(me - 1, launch.threadsperblock[0])
        return by, bx, ty, tx
    return [(int(i), int(j), thread(writer[i, j]), thread(other[i, j])) for i, j in np.argwhere(other >= 0)]
