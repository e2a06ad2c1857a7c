"""Make numba's CUDA simulator fast enough for class, without changing what any kernel computes.

The simulator runs each CUDA thread of a block as a Python thread. Its block manager finds out
that all threads reached `cuda.syncthreads()` by polling them in a busy loop, which competes with
the very threads it waits for. Here a barrier built on a condition variable replaces that loop:
waiting threads sleep, the last arrival wakes them, and a thread that returns early stops counting
(as in the original manager). With it, Python's default thread-switch interval is also the fastest
choice; shorter ones only help the polling manager. Measured figures: README, "Simulator speed".
"""
import threading

import numpy as np


class BarrierAbandoned(RuntimeError):
    """Raised in threads waiting at a barrier when another thread of the block failed."""


class BlockBarrier:
    """cuda.syncthreads() for one simulated block."""

    def __init__(self, threads):
        self._cond = threading.Condition()
        self._live, self._arrived, self._generation, self._broken = threads, 0, 0, False

    def wait(self):
        with self._cond:
            generation = self._generation
            self._arrived += 1
            if self._arrived == self._live:
                self._release()
            while generation == self._generation and not self._broken:
                self._cond.wait()
            if self._broken:
                raise BarrierAbandoned("another thread of this block failed; barrier abandoned")

    def leave(self):
        """A thread finished: the others no longer wait for it."""
        with self._cond:
            self._live -= 1
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
    from numba.cuda.simulator.kernel import BlockThread

    barrier = BlockBarrier(int(np.prod(manager._block_dim)))

    def target():
        try:
            manager._f(*args)
        except BaseException:
            barrier.abort()
            raise
        finally:
            barrier.leave()

    threads = [BlockThread(target, manager, grid_point, point, manager._debug)
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


def _syncthreads(thread):
    thread.barrier.wait()


def speed_up():
    """Install the sleeping barrier in place of the polling block manager."""
    from numba.cuda.simulator import kernel

    kernel.BlockManager.run = _run_block
    kernel.BlockThread.syncthreads = _syncthreads
