"""Make numba's CUDA simulator fast enough for class, without changing what any kernel computes.

`speed_up()` replaces the busy polling for `cuda.syncthreads()` with a sleeping barrier (BlockBarrier), and gives
each block fresh shared memory, as on a GPU. `accept_alignment()` lets notebook 7's `cuda.shared.array(...,
alignment=16)` run. `fresh_locals()` makes an element of a cuda.local.array read before its thread stored it NaN,
not what numpy's memory last held. All three patch private parts of numba's simulator: where one is missing they warn
once and leave it (slower, refusing alignment=, or local arrays unset; still correct). TILEDLAB_SIMULATOR_PATCH=0
switches all three off.
"""
import contextlib
import inspect
import os
import re
import sys
import threading
import warnings

import numpy as np

HUNG_S = 10.0  # far longer than any thread waits for the next arrival at a barrier, even in a 1,024-thread block
FRESH = 0xFF  # the byte shared and local memory start with: NaN in float32 and float64, -1 in integers
ENV = "TILEDLAB_SIMULATOR_PATCH"  # "0" leaves numba's simulator untouched
# What each patch relies on in numba.cuda.simulator: "module.Class.name", an attribute or a field __init__ sets
BARRIER_NEEDS = ("kernel.BlockManager.run kernel.BlockManager._block_dim kernel.BlockManager._f "
                 "kernel.BlockManager._debug kernel.BlockThread.syncthreads kernel._kernel_context "
                 "kernel.BlockThread.syncthreads_count kernel.BlockThread.syncthreads_and "
                 "kernel.BlockThread.syncthreads_or "
                 "kernelapi.FakeCUDAModule._shared kernelapi.FakeCUDAShared._allocations "
                 "kernelapi.FakeCUDAShared._dynshared")
ALIGNMENT_NEEDS = ("kernelapi.FakeCUDAShared.array kernelapi.types kernelapi.numpy_support "
                   "kernelapi.FakeCUDAShared._allocations kernelapi.FakeCUDAShared._dynshared_size "
                   "kernelapi.FakeCUDAShared._dynshared")
LOCAL_NEEDS = "kernelapi.FakeCUDALocal.array kernelapi.types kernelapi.numpy_support"
VOTES = ("syncthreads_count", "syncthreads_and", "syncthreads_or")  # a whole number in, as on a GPU
THREAD_ARGS = ["f", "manager", "blockIdx", "threadIdx", "debug"]  # how _run_block makes a BlockThread


class BarrierAbandoned(RuntimeError):
    """Raised in threads waiting at a barrier when another thread of the block failed."""


class BarrierHung(RuntimeError):
    """Raised in threads waiting at a barrier that no thread of the block reached or left for HUNG_S seconds."""


class BlockBarrier:
    """cuda.syncthreads() for one block: waiters sleep, the last arrival wakes them, a finished thread stops counting.
    A barrier not every thread reaches alike releases all the same: the counting lab reports it from its arrivals."""

    def __init__(self, threads):
        self._cond = threading.Condition()
        self._live, self._arrived, self._generation, self._broken = threads, 0, 0, False
        self._moved = 0  # arrivals and departures so far: a wait with none for HUNG_S is hung

    def wait(self):
        with self._cond:
            generation = self._generation
            self._move(arrived=1)
            while generation == self._generation and not self._broken:
                moved = self._moved
                if not self._cond.wait(HUNG_S) and moved == self._moved and generation == self._generation:
                    self.abort()  # the whole block is stuck: every waiting thread raises
                    raise BarrierHung(f"a cuda.syncthreads() waited {HUNG_S:g} s for threads that never came")
            if self._broken:
                raise BarrierAbandoned("another thread of this block failed; barrier abandoned")

    def leave(self):
        """A thread finished: the others no longer wait for it."""
        with self._cond:
            self._move(live=-1)

    def abort(self):
        with self._cond:
            self._broken = True
            self._cond.notify_all()

    def _move(self, arrived=0, live=0):
        """An arrival or a departure: the barrier opens once every live thread has arrived."""
        self._arrived += arrived
        self._live += live
        self._moved += 1
        if self._arrived and self._arrived == self._live:
            self._arrived, self._generation = 0, self._generation + 1
            self._cond.notify_all()


def _run_block(manager, grid_point, *args):
    from numba.cuda.simulator import kernel
    shared = kernel._kernel_context._shared  # fresh for each block, where numba's would keep the last block's:
    shared._allocations.clear()  # its arrays made again (_shared_array)
    shared._dynshared.view(np.uint8).fill(FRESH)
    barrier = BlockBarrier(int(np.prod(manager._block_dim)))

    def target():
        try:
            manager._f(*args)
        except BaseException:
            barrier.abort()
            raise
        finally:
            barrier.leave()

    threads = [kernel.BlockThread(target, manager, grid_point, point, manager._debug)
               for point in np.ndindex(*manager._block_dim)]
    for t in threads:
        t.barrier = barrier
        t.start()
    for t in threads:
        t.join()
    failed = sorted((t.exception for t in threads if t.exception),
                    key=lambda e: isinstance(e[0], BarrierAbandoned))  # the cause first, not its echoes
    if failed:
        raise failed[0][0].with_traceback(failed[0][1])


def _syncthreads(thread):
    thread.barrier.wait()


def _checked_vote(vote):
    """numba's simulated `vote` (cuda.syncthreads_or and the like), refusing as numba's GPU compiler does a value that
    is not a whole number: True or False, or a float."""
    def checked(thread, value):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            kind = "bool" if isinstance(value, bool) else getattr(value, "dtype", np.dtype(type(value))).name
            raise TypeError(f"No implementation of function {vote.__name__} found for signature: "
                            f">>> {vote.__name__}({kind})")
        return vote(thread, value)
    checked.checked = True
    return checked


def _lacking(needs):
    """The `needs` that this numba's simulator lacks."""
    from numba.cuda import simulator

    def has(need):
        where = simulator
        *path, name = need.split(".")
        for part in path:
            where = getattr(where, part, None)
        with contextlib.suppress(TypeError, OSError):  # no class, or no source to read
            return hasattr(where, name) or re.search(rf"self\.{name}\b", inspect.getsource(where.__init__)) is not None
        return False
    return [need for need in needs.split() if not has(need)]


def _patch(missing, lost, install):
    """Run `install()` unless switched off (ENV) or numba lacks what it needs (then warn once of what is `lost`)."""
    if os.environ.get(ENV, "").strip() == "0":
        return False
    if lacking := missing():
        warnings.warn(f"{lost}: this numba-cuda lacks {', '.join(lacking)}", RuntimeWarning, stacklevel=3)
        return False
    install()
    return True


def speed_up():
    """Install the sleeping barrier in place of the polling block manager; True when installed."""
    from numba.cuda.simulator import kernel

    def lacking():
        found = _lacking(BARRIER_NEEDS)
        if not found and list(inspect.signature(kernel.BlockThread.__init__).parameters)[1:6] != THREAD_ARGS:
            found.append(f"kernel.BlockThread({', '.join(THREAD_ARGS)})")
        return found

    def install():
        kernel.BlockManager.run = _run_block
        kernel.BlockThread.syncthreads = _syncthreads
        for name in VOTES:
            if not getattr(vote := getattr(kernel.BlockThread, name), "checked", False):
                setattr(kernel.BlockThread, name, _checked_vote(vote))
    return _patch(lacking, "tiledlab's faster simulator barrier is off (kernels still run correctly, only slower)",
                  install)


def _dtype(dtype):
    """numpy's dtype of numba's (float32) or numpy's."""
    from numba.cuda.simulator import kernelapi
    return np.dtype(kernelapi.numpy_support.as_dtype(dtype) if isinstance(dtype, kernelapi.types.Type) else dtype)


def _fresh(shape, dtype):
    """An array of `shape` and `dtype` whose every byte is FRESH."""
    fresh = np.empty(shape, _dtype(dtype))
    fresh.view(np.uint8).fill(FRESH)
    return fresh


def _shared_array(self, shape, dtype, alignment=None):
    """FakeCUDAShared.array, ignoring `alignment`: one array per declaring line, as numba's, but FRESH in each block."""
    dtype = _dtype(dtype)
    if shape == 0:
        return np.frombuffer(self._dynshared.data, dtype=dtype, count=self._dynshared_size // dtype.itemsize)
    caller = sys._getframe(1)
    line = (caller.f_code.co_filename, caller.f_lineno)
    if line not in self._allocations:
        self._allocations.setdefault(line, _fresh(shape, dtype))  # the first thread's, if two arrive at once
    return self._allocations[line]


def _local_array(self, shape, dtype, alignment=None):
    """FakeCUDALocal.array, ignoring `alignment` as _shared_array does: the thread's own array, FRESH."""
    return _fresh(shape, dtype)


def accept_alignment():
    """Let cuda.shared.array(..., alignment=16) run on the simulator; True when installed."""
    from numba.cuda.simulator import kernelapi

    def install():
        kernelapi.FakeCUDAShared.array = _shared_array
    return _patch(lambda: _lacking(ALIGNMENT_NEEDS), "cuda.shared.array(..., alignment=) stays refused on the "
                  "simulator (notebook 7's 128-bit kernels cannot run there)", install)


def fresh_locals():
    """Let each cuda.local.array start FRESH on the simulator; True when installed."""
    from numba.cuda.simulator import kernelapi

    def install():
        kernelapi.FakeCUDALocal.array = _local_array
    return _patch(lambda: _lacking(LOCAL_NEEDS), "cuda.local.array starts with what numpy's memory held on the "
                  "simulator (an element read before it is stored may not be NaN)", install)
