"""Run a kernel with counting switched on and return what it fetched, from where, and how often."""
from dataclasses import dataclass

import numpy as np

from ..core.launch import prepare
from .buffers import HAZARDS, OPERANDS, as_records
from .rewrite import instrumented


@dataclass
class LoadCount:
    """Measured memory traffic of one launch. Maps are indexed like the matrices they describe."""
    kernel: str
    shape: tuple          # (M, K, N)
    tile: int
    maps: dict            # "A", "B", "C" (by argument position) → how often each element was read
    thread_loads: np.ndarray   # global loads made by each thread, indexed [row, col] of the thread grid
    shared_reads: np.ndarray   # shared-memory reads made by each thread
    shared_stores: np.ndarray  # shared-memory writes made by each thread
    hazards: dict         # barrier hazards seen in shared memory (0 everywhere for a correct kernel)
    C: np.ndarray         # the product the counted launch computed
    trace: np.recarray = None  # one record per global load (fields: buffers.TRACE_FIELDS), when asked for

    @property
    def A(self):
        return int(self.maps["A"].sum())

    @property
    def B(self):
        return int(self.maps["B"].sum())

    @property
    def total(self):
        return self.A + self.B


def count_loads(kernel, A, B, tile=16, trace=False):
    """Launch `kernel` ('naive', 'tiled' or a @cuda.jit(A, B, C) function) with counting on.

    With trace=True, also record every global load as a record (operand 0=A/1=B/2=C, i, j, by, bx,
    ty, tx, seq), where seq is the load's position in its thread's own order; meant for small examples.
    """
    launch = prepare(kernel, A, B, tile, build=instrumented)
    M, K, N = launch.shape
    capacity = 2 * M * N * K + 2 * K * (M + N) + M * N if trace else 0  # more than any sensible kernel loads
    buffers = launch.kernel.tiledlab_buffers
    arrays = buffers.allocate(launch, capacity)
    launch(*arrays)
    got = buffers.read(arrays)
    made = int(got["trace_pos"][0])
    if made > capacity and trace:
        raise ValueError(f"the kernel made {made:,} global loads, more than the trace holds ({capacity:,})")
    return LoadCount(
        kernel=launch.name, shape=launch.shape, tile=launch.tile,
        maps={op: got[f"count_{op}"] for op in OPERANDS},
        thread_loads=got["thread_loads"], shared_reads=got["shared_reads"], shared_stores=got["shared_stores"],
        hazards=dict(zip(HAZARDS, map(int, got["hazards"]))), C=launch.result(),
        trace=as_records(got["trace"][:made]) if trace else None)
