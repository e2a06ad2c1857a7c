"""Run a kernel with counting switched on and return what it fetched, from where, and how often."""
from dataclasses import dataclass

import numpy as np
from numba import cuda

from .instrument import TRACE_FIELDS, instrumented
from .kernels import KERNELS
from .launch import check_operands, check_tile, launch_config


@dataclass
class LoadCount:
    """Measured memory traffic of one launch. Maps are indexed like the matrices they describe."""
    kernel: str
    shape: tuple          # (M, K, N)
    tile: int
    maps: dict            # argument name → how often each element was read from global memory
    thread_loads: np.ndarray   # global loads made by each thread, indexed [row, col] of the thread grid
    shared_reads: np.ndarray   # shared-memory reads made by each thread
    shared_stores: np.ndarray  # shared-memory writes made by each thread
    hazards: dict         # barrier hazards seen in shared memory (0 everywhere for a correct kernel)
    C: np.ndarray         # the product the counted launch computed
    trace: np.ndarray = None   # one row per global load (fields TRACE_FIELDS), when asked for

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

    With trace=True, also record every global load as (array 0=A/1=B, i, j, block_y, block_x, ty, tx,
    seq), where seq is the load's position in its thread's own order; meant for small examples.
    """
    tile = check_tile(tile)
    A, B = check_operands(A, B)
    name = kernel if isinstance(kernel, str) else kernel.__name__
    kernel = KERNELS.get(kernel, kernel) if isinstance(kernel, str) else kernel
    compiled, params, shared = instrumented(kernel, tile)
    M, K = A.shape
    N = B.shape[1]
    blockspergrid, threadsperblock = launch_config(M, N, tile)
    grid_shape = (blockspergrid[1] * tile, blockspergrid[0] * tile)
    nblocks = blockspergrid[0] * blockspergrid[1]
    C = np.zeros((M, N), dtype=np.float32)
    arrays = dict(zip(params, (A, B, C)))
    counts = [np.zeros(arrays[p].shape, dtype=np.int64) for p in params]
    capacity = 2 * M * N * K + 2 * K * (M + N) if trace else 0
    tbuf = np.full((capacity, len(TRACE_FIELDS)), -1, dtype=np.int32)
    tpos = np.zeros(1, dtype=np.int64)
    tloads, sreads, sstores = (np.zeros(grid_shape, dtype=np.int64) for _ in range(3))
    hazards = np.zeros(3, dtype=np.int64)
    tables = [np.full((nblocks, *shape), -1, dtype=np.int64) for shape in shared.values() for _ in "wr"]
    args = [cuda.to_device(x) for x in (A, B, C, *counts, tloads, tbuf, tpos, sreads, sstores, hazards, *tables)]
    compiled[blockspergrid, threadsperblock](*args)
    host = [a.copy_to_host() for a in args]
    C, counts = host[2], host[3:3 + len(params)]
    tloads, tbuf, tpos, sreads, sstores, hazards = host[3 + len(params):9 + len(params)]
    return LoadCount(
        kernel=name, shape=(M, K, N), tile=tile, maps=dict(zip(params, counts)),
        thread_loads=tloads, shared_reads=sreads, shared_stores=sstores,
        hazards=dict(zip(("read_after_write", "write_after_read", "write_after_write"), map(int, hazards))),
        C=C, trace=tbuf[: int(tpos[0])] if trace else None)
