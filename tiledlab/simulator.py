"""Make numba's CUDA simulator fast enough for class, without changing what any kernel computes.

The simulator runs each thread of a block as a Python thread, and its block manager polls them in a busy
loop, competing with the threads it waits for, to see that all reached `cuda.syncthreads()`. `speed_up()`
puts a barrier on a condition variable in its place: waiting threads sleep, the last arrival wakes them, a
thread that returns early stops counting. With it Python's default thread-switch interval is the fastest
(measured: README, "Simulator speed"). The barrier also says where each thread waits: `watching()` collects,
for each block, the first barrier its threads did not reach alike (in CUDA undefined behaviour: a hang, or
a wrong result; here they are released all the same), for the counting lab to report by line.

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
from contextlib import contextmanager

import numpy as np


class BarrierAbandoned(RuntimeError):
    """Raised in threads waiting at a barrier when another thread of the block failed."""


class BlockBarrier:
    """cuda.syncthreads() for one simulated block."""

    def __init__(self, threads):
        self._cond = threading.Condition()
        self._live, self._arrived, self._generation, self._broken = threads, 0, 0, False
        self._waiting, self._left = {}, []  # {(file, line): threads waiting there now}; threads that finished
        self.divergent = None  # the first barrier not reached alike: ({(file, line): threads}, finished threads)

    def wait(self, site=None, thread=None):
        with self._cond:
            generation = self._generation
            self._waiting.setdefault(site, []).append(thread)
            self._arrived += 1
            if self._arrived == self._live:
                self._release()
            while generation == self._generation and not self._broken:
                self._cond.wait()
            if self._broken:
                raise BarrierAbandoned("another thread of this block failed; barrier abandoned")

    def leave(self, thread=None):
        """A thread finished: the others no longer wait for it."""
        with self._cond:
            self._live -= 1
            self._left.append(thread)
            if self._arrived and self._arrived == self._live:
                self._release()

    def abort(self):
        with self._cond:
            self._broken = True
            self._cond.notify_all()

    def _release(self):
        if self.divergent is None and (len(self._waiting) > 1 or self._left):  # two barriers, or not everyone
            self.divergent = (self._waiting, list(self._left))
        self._waiting = {}
        self._arrived = 0
        self._generation += 1
        self._cond.notify_all()


def _run_block(manager, grid_point, *args):
    from numba.cuda.simulator.kernel import BlockThread
    barrier = BlockBarrier(int(np.prod(manager._block_dim)))

    def target():
        try:
            manager._f(*args)
        except BaseException:
            barrier.abort()
            raise
        finally:
            barrier.leave(tuple(threading.current_thread().threadIdx))

    threads = [BlockThread(target, manager, grid_point, point, manager._debug)
               for point in np.ndindex(*manager._block_dim)]
    for t in threads:
        t.barrier = barrier
        t.start()
    for t in threads:
        t.join()
    for found in _watchers:
        if barrier.divergent:
            found.append((tuple(grid_point), *barrier.divergent))
    failed = [t.exception for t in threads if t.exception]
    failed.sort(key=lambda e: isinstance(e[0], BarrierAbandoned))  # the cause first, not its echoes
    if failed:
        raise failed[0][0].with_traceback(failed[0][1])


def _syncthreads(thread):
    caller = sys._getframe(1)
    while caller.f_back and caller.f_code.co_filename.startswith(_SIMULATOR_DIR):
        caller = caller.f_back  # past numba's cuda.syncthreads() (and _count, _and, _or) to the kernel's line
    thread.barrier.wait((caller.f_code.co_filename, caller.f_lineno), tuple(thread.threadIdx))


_watchers = []  # lists that `watching` fills


@contextmanager
def watching():
    """A list that collects, for each block run meanwhile whose threads did not all reach the same barriers,
    (block, {(file, line): threads waiting there}, threads that had finished) of its first such barrier."""
    found = []
    _watchers.append(found)
    try:
        yield found
    finally:
        _watchers.remove(found)


ENV = "TILEDLAB_SIMULATOR_PATCH"  # "0" leaves numba's simulator untouched
_SIMULATOR_DIR = None  # numba's simulator package, whose frames stand between a barrier and the kernel
_BLOCK_MANAGER_FIELDS = ("self._block_dim", "self._f", "self._debug")  # what _run_block reads


def _missing(kernel):
    """What of numba's simulator internals this patch needs is not there (empty when all is)."""
    missing = [f"{cls}.{attr}" for cls, attr in (("BlockManager", "run"), ("BlockThread", "syncthreads"))
               if not hasattr(getattr(kernel, cls, None), attr)]
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
        global _SIMULATOR_DIR
        _SIMULATOR_DIR = os.path.dirname(kernel.__file__)
        kernel.BlockManager.run = _run_block
        kernel.BlockThread.syncthreads = _syncthreads
    return _patch(lambda: _missing(kernel), "tiledlab's faster simulator barrier is off (kernels still run "
                  "correctly, only slower)", install)


def _shared_array(self, shape, dtype, alignment=None):
    """FakeCUDAShared.array, accepting and ignoring `alignment`. As numba's own: one array per declaring
    line (the caller's frame), shared by the block's threads; size 0 is the dynamic shared memory."""
    from numba.cuda.simulator import kernelapi
    if isinstance(dtype, kernelapi.types.Type):
        dtype = kernelapi.numpy_support.as_dtype(dtype)
    dtype = np.dtype(dtype)
    if shape == 0:
        return np.frombuffer(self._dynshared.data, dtype=dtype, count=self._dynshared_size // dtype.itemsize)
    caller = sys._getframe(1)
    line = (caller.f_code.co_filename, caller.f_lineno)
    if line not in self._allocations:
        self._allocations[line] = np.empty(shape, dtype)
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

