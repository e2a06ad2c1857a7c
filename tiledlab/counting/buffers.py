"""The extra arguments a counting kernel takes after (A, B, C), described once: `CountingBuffers` names them for
the rewrite, allocates them for a launch and reads them back by name, so no two files agree on positions."""
import numpy as np
from numba import cuda

OPERANDS = ("A", "B", "C")  # counts are keyed by argument position, not by the kernel's own names
# One record per global load: operand 0 = A, 1 = B, 2 = C; seq = its place in the thread's own order;
# epoch = how many cuda.syncthreads() the thread had passed when it made the load.
TRACE_FIELDS = ("operand", "i", "j", "by", "bx", "ty", "tx", "seq", "epoch")
# One record per shared-memory access: array = position among the kernel's shared arrays; store 0/1.
SHARED_TRACE_FIELDS = ("array", "i", "j", "by", "bx", "ty", "tx", "epoch", "store")
# Shared-memory hazards by kind. copy_in_flight: a cp_async4 copy read or overwritten before a wait covered it;
# divergent_barrier: a barrier not every thread of the block reached alike (from the arrivals counted per barrier);
# unstored_read: a read of a shared element no thread of the block had stored (a block's shared memory holds no value).
HAZARDS = ("read_after_write", "write_after_read", "write_after_write", "copy_in_flight", "divergent_barrier",
           "unstored_read")
# The examples table, a row per hazard kind: the lowest of its kind (block, epoch, pair of threads), with the other
# thread (its index + 1) and both lines (line * LINES + the other's); claimed: its rank (0: none); lock: 1 in use.
EXAMPLE_FIELDS = ("array", "i", "j", "by", "bx", "ty", "tx", "other", "lines", "claimed", "lock")
# ... and its last row: the first access outside its array, `what` the operand (0-2) or 3 + the shared array.
OUTSIDE_FIELDS = ("what", "i", "j", "by", "bx", "ty", "tx", "store", "line", "claimed")
LINES = 1 << 20  # more lines than any kernel's file has
LOWEST = 1 << 62  # above an example's ((block << 30) + epoch * STAMP + one thread) * STAMP + the other
STAMP = 2048  # a thread's stamp: block or epoch * STAMP + its index in the block + 1 (at most 1024 threads)


class CountingBuffers:
    """Extra kernel arguments for counting a kernel with shared arrays `shared` ({name: shape}), `targets` of them
    copied into by cp_async4, `asynchronous` if it copies or waits, and its barriers' lines."""

    def __init__(self, shared, targets=(), asynchronous=False, barriers=()):
        self.shared = dict(shared)
        self.barriers = barriers  # the line of each barrier site, in the order `arrivals` numbers them

        def grid(L, cap):  # one per thread, indexed [y, x] of cuda.grid(2)
            return L.blockspergrid[1] * L.threadsperblock[1], L.blockspergrid[0] * L.threadsperblock[0]

        def per_block(*shape):  # per block: an element of a shared array, or a thread
            return lambda L, cap: (L.blockspergrid[0] * L.blockspergrid[1], *shape)

        def operand(k):  # A, B or C's shape from the launch's (M, K, N)
            return lambda L, cap: (lambda M, K, N: ((M, K), (K, N), (M, N))[k])(*L.shape)
        C = operand(2)
        self.layout = [  # (name, dtype, shape from the launch and the trace's capacity, initial value)
            *[(f"count_{op}", np.int64, operand(k), 0) for k, op in enumerate(OPERANDS)],
            ("thread_loads", np.int64, grid, 0),       # global loads per thread
            ("trace", np.int32, lambda L, cap: (cap, len(TRACE_FIELDS)), -1),  # one row per global load
            ("trace_pos", np.int64, lambda L, cap: (1,), 0),
            ("shared_trace", np.int32, lambda L, cap: (2 * cap, len(SHARED_TRACE_FIELDS)), -1),
            ("shared_trace_pos", np.int64, lambda L, cap: (1,), 0),
            ("shared_reads", np.int64, grid, 0),
            ("shared_stores", np.int64, grid, 0),
            ("hazards", np.int64, lambda L, cap: (len(HAZARDS),), 0),
            ("examples", np.int64, lambda L, cap: (len(HAZARDS) + 1, len(EXAMPLE_FIELDS)), 0),
            # the first thread whose loop went round (or would go round) too often: line, by, bx, ty, tx, the limit,
            # a range's length
            ("spun", np.int64, lambda L, cap: (7,), 0),
            ("C_stores", np.int64, C, 0),         # stores into each element of C
            ("C_atomics", np.int64, C, 0),        # ... of which cuda.atomic.add(C, ...), each also a load of C
            # per block, thread (its index in the block) and barrier site: how often it reached that barrier
            ("arrivals", np.int32, lambda L, cap: (L.blockspergrid[0] * L.blockspergrid[1],
                                                   L.threadsperblock[0] * L.threadsperblock[1],
                                                   max(len(barriers), 1)), 0),
            ("C_writer", np.int64, C, -1),        # stamp (block * STAMP + thread) of its highest writer
            ("C_lowest_writer", np.int64, C, LOWEST),  # ... and of its lowest: another in a race
            # per block and element, who touched it this epoch: the highest stamp, the lowest counted
            # downwards, the line of the latest touch (rewrite._tl_touch)
            *[(f"{rw}_{name}", np.int64, per_block(*shape, 3), -1)
              for name, shape in self.shared.items() for rw in ("wrote", "read")],
            *[(f"pending_{name}", np.int64, per_block(*self.shared[name]), -1)  # group, thread of the last copy
              for name in targets],
            *[("async_done", np.int64, per_block(STAMP), 0)] * bool(asynchronous or targets),  # groups done
        ]

    @property
    def parameters(self):
        """Names of the extra kernel parameters, in order."""
        return [f"_tl_{name}" for name, *_ in self.layout]

    def allocate(self, launch, trace_capacity=0):
        """Device arrays for `launch` (a tiledlab.core.launch.Launch), in parameter order."""
        return [cuda.to_device(np.full(shape(launch, trace_capacity), fill, dtype=dtype))
                for _, dtype, shape, fill in self.layout]

    def read(self, arrays):
        """{name: host array} of the device arrays that `allocate` made."""
        return {name: a.copy_to_host() for (name, *_), a in zip(self.layout, arrays)}


def as_records(rows, fields=TRACE_FIELDS):
    """A trace as a numpy record array: `t.tx`, `t["seq"]`, and masks like `t[t.operand == 0]` work."""
    columns = rows.T.astype(np.int64) if len(rows) else [np.zeros(0, np.int64)] * len(fields)
    return np.rec.fromarrays(columns, names=list(fields))
