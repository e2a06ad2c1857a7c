"""Make numba's CUDA simulator fast enough for class, without changing what any kernel computes.

The simulator runs each thread of a block as a Python thread, and its block manager polls them in a busy
loop, competing with the threads it waits for, to see that all reached `cuda.syncthreads()`. `speed_up()`
puts a barrier on a condition variable in its place: waiting threads sleep, the last arrival wakes them, a
thread that returns early stops counting. With it Python's default thread-switch interval is the fastest
(measured: README, "Simulator speed"). A barrier no thread reaches or leaves for HUNG_S seconds raises
BarrierHung in every waiting thread instead of hanging. Each block starts with fresh shared memory, filled
with FRESH bytes (NaN as a float), as on a GPU no block sees another's.

`accept_alignment()` lets notebook 7's `cuda.shared.array(..., alignment=16)` run, which numba's simulator
refuses: a numpy array needs no alignment, so the argument is accepted and ignored.

Both replace private parts of numba's simulator: each first checks that what it relies on is there, else
warns once and leaves the simulator as it is (slower, or refusing alignment=, still correct otherwise).
TILEDLAB_SIMULATOR_PATCH=0 switches both off.
"""
import inspect
import os
import sys
import threading
import warnings

import numpy as np


class BarrierAbandoned(RuntimeError):
    """Raised in threads waiting at a barrier when another thread of the block failed."""


class BarrierHung(RuntimeError):
    """Raised in threads waiting at a barrier that no thread of the block reached or left for HUNG_S seconds."""


HUNG_S = 10.0  # far longer than any thread waits for the next arrival at a barrier, even in a 1,024-thread block


class BlockBarrier:
    """cuda.syncthreads() for one simulated block. A thread that finished no longer counts; a barrier that
    not every thread reaches alike (CUDA's undefined behaviour) releases all the same: the counting lab
    reports it from the arrivals it counts (tiledlab.counting.count)."""

    def __init__(self, threads):
        self._cond = threading.Condition()
        self._live, self._arrived, self._generation, self._broken = threads, 0, 0, False
        self._moved = 0  # arrivals and departures so far: a wait with none for HUNG_S is hung

    def wait(self):
        with self._cond:
            generation = self._generation
            self._arrived += 1
            self._moved += 1
            if self._arrived == self._live:
                self._release()
            while generation == self._generation and not self._broken:
                moved = self._moved
                if not self._cond.wait(HUNG_S) and moved == self._moved and generation == self._generation:
                    self._broken = True  # the whole block is stuck: every waiting thread raises
                    self._cond.notify_all()
                    raise BarrierHung(f"a cuda.syncthreads() waited {HUNG_S:g} s for threads that never came")
            if self._broken:
                raise BarrierAbandoned("another thread of this block failed; barrier abandoned")

    def leave(self):
        """A thread finished: the others no longer wait for it."""
        with self._cond:
            self._live -= 1
            self._moved += 1
            if self._arrived and self._arrived == self._live:
                self._release()

    def abort(self):
        with self._cond:
            self._broken = True
            self._cond.notify_all()

    def _release(self):
        self._arrived = 0
        self._generation += 1
        self._cond.notify_all()


def _run_block(manager, grid_point, *args):
    from numba.cuda.simulator import kernel
    _fresh_shared(kernel._kernel_context._shared)
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
    failed = [t.exception for t in threads if t.exception]
    failed.sort(key=lambda e: isinstance(e[0], BarrierAbandoned))  # the cause first, not its echoes
    if failed:
        raise failed[0][0].with_traceback(failed[0][1])


FRESH = 0xFF  # the byte a block's shared memory starts with: NaN in float32 and float64, -1 in integers


def _fresh_shared(shared):
    """A block starts with shared memory that holds no value: its arrays are allocated again (by _shared_array)
    and its dynamic shared memory is filled with FRESH, where numba's simulator would keep the last block's."""
    shared._allocations.clear()
    shared._dynshared.view(np.uint8).fill(FRESH)


def _syncthreads(thread):
    thread.barrier.wait()


ENV = "TILEDLAB_SIMULATOR_PATCH"  # "0" leaves numba's simulator untouched
_BLOCK_MANAGER_FIELDS = ("self._block_dim", "self._f", "self._debug")  # what _run_block reads


def _missing(kernel):
    """What of numba's simulator internals this patch needs is not there (empty when all is)."""
    missing = [f"{cls}.{attr}" for cls, attr in (("BlockManager", "run"), ("BlockThread", "syncthreads"))
               if not hasattr(getattr(kernel, cls, None), attr)]
    missing += [] if hasattr(kernel, "_kernel_context") else ["kernel._kernel_context"]
    from numba.cuda.simulator import kernelapi
    module, shared = inspect.getsource(kernelapi.FakeCUDAModule.__init__), inspect.getsource(kernelapi.FakeCUDAShared)
    missing += [f"FakeCUDAModule.{f[5:]}" for f in ("self._shared",) if f not in module]
    missing += [f"FakeCUDAShared.{f[5:]}" for f in ("self._allocations", "self._dynshared") if f not in shared]
    if missing:
        return missing
    init = inspect.getsource(kernel.BlockManager.__init__)
    missing += [f"BlockManager.{f[5:]}" for f in _BLOCK_MANAGER_FIELDS if f not in init]
    params = list(inspect.signature(kernel.BlockThread.__init__).parameters)
    if params[1:6] != ["f", "manager", "blockIdx", "threadIdx", "debug"]:
        missing.append("BlockThread(f, manager, blockIdx, threadIdx, debug)")
    return missing


def _patch(missing, lost, install):
    """Run `install()` unless switched off (ENV) or numba lacks what it needs: then warn once, saying
    what is `lost`. True when installed."""
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

    def install():
        kernel.BlockManager.run = _run_block
        kernel.BlockThread.syncthreads = _syncthreads
    return _patch(lambda: _missing(kernel), "tiledlab's faster simulator barrier is off (kernels still run "
                  "correctly, only slower)", install)


def _shared_array(self, shape, dtype, alignment=None):
    """FakeCUDAShared.array, accepting and ignoring `alignment`. As numba's own: one array per declaring
    line (the caller's frame), shared by the block's threads; size 0 is the dynamic shared memory. Unlike
    numba's, a new block gets new arrays (_fresh_shared), filled with FRESH bytes."""
    from numba.cuda.simulator import kernelapi
    if isinstance(dtype, kernelapi.types.Type):
        dtype = kernelapi.numpy_support.as_dtype(dtype)
    dtype = np.dtype(dtype)
    if shape == 0:
        return np.frombuffer(self._dynshared.data, dtype=dtype, count=self._dynshared_size // dtype.itemsize)
    caller = sys._getframe(1)
    line = (caller.f_code.co_filename, caller.f_lineno)
    if line not in self._allocations:
        fresh = np.empty(shape, dtype)
        fresh.view(np.uint8).fill(FRESH)
        self._allocations.setdefault(line, fresh)  # the first thread's, if two arrive at once
    return self._allocations[line]


_SHARED_FIELDS = ("self._allocations", "self._dynshared_size", "self._dynshared")  # what _shared_array uses


def _missing_for_alignment(kernelapi):
    shared = getattr(kernelapi, "FakeCUDAShared", None)
    if shared is None or not hasattr(shared, "array"):
        return ["FakeCUDAShared.array"]
    missing = [f"kernelapi.{name}" for name in ("types", "numpy_support") if not hasattr(kernelapi, name)]
    init = inspect.getsource(shared.__init__)
    return missing + [f"FakeCUDAShared.{f[5:]}" for f in _SHARED_FIELDS if f not in init]


def accept_alignment():
    """Let cuda.shared.array(..., alignment=16) run on the simulator; True when installed."""
    from numba.cuda.simulator import kernelapi

    def install():
        kernelapi.FakeCUDAShared.array = _shared_array
    return _patch(lambda: _missing_for_alignment(kernelapi), "cuda.shared.array(..., alignment=) stays refused "
                  "on the simulator (notebook 7's 128-bit kernels cannot run there)", install)

