import threading

import numpy as np
import pytest
from conftest import source_line
from numba import cuda, float32, int32

import tiledlab
from tiledlab import simulator

pytestmark = pytest.mark.skipif(not tiledlab.SIMULATOR, reason="tests tiledlab's simulator barrier")
SECONDS = 20  # a launch of 8 threads takes milliseconds: longer is a barrier that never releases


def launched(kernel, threads, *args):
    """kernel[1, threads](*args), failing within SECONDS if a broken barrier hangs it (its simulated
    threads are daemons, so the hung ones do not keep the test run alive), re-raising what it raised."""
    outcome = []

    def run():
        try:
            kernel[1, threads](*args)
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001  re-raised below, in the test's own thread
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(SECONDS)
    assert outcome, f"the launch hangs: the simulator's barrier did not release within {SECONDS} s"
    if outcome[0] is not None:
        raise outcome[0]


@cuda.jit
def early_exit_then_barrier(out):
    s = cuda.shared.array(8, float32)
    if cuda.threadIdx.x >= 4:
        return  # these threads never reach the barrier; the others must not wait for them
    s[cuda.threadIdx.x] = cuda.threadIdx.x
    cuda.syncthreads()  # the four writes must land before the neighbour reads one
    out[cuda.threadIdx.x] = s[(cuda.threadIdx.x + 1) % 4]


@cuda.jit
def fails_before_barrier(out):
    if cuda.threadIdx.x == 3:
        out[100] = 1.0  # out of range: this thread fails
    cuda.syncthreads()  # the other threads wait here; they must be released, not hang


@cuda.jit
def fails_then_neighbours_write(out):
    if cuda.threadIdx.x == 3:
        out[100] = 1.0  # out of range: this thread fails before the barrier
    cuda.syncthreads()  # the block failed: its other threads must stop here, not run on
    out[cuda.threadIdx.x % 4] = 1.0


def test_threads_that_return_early_release_the_barrier():
    out = np.zeros(4, np.float32)
    launched(early_exit_then_barrier, 8, out)
    np.testing.assert_array_equal(out, [1, 2, 3, 0])


def test_a_failing_thread_raises_instead_of_hanging():
    with pytest.raises(IndexError):
        launched(fails_before_barrier, 8, np.zeros(4, np.float32))


def test_a_failing_thread_stops_its_neighbours_at_the_barrier_and_its_own_error_is_raised():
    out = cuda.to_device(np.zeros(4, np.float32))  # a device array: what the other threads wrote stays visible
    with pytest.raises(IndexError):  # the cause, not the BarrierAbandoned of the threads it released
        launched(fails_then_neighbours_write, 8, out)
    np.testing.assert_array_equal(out.copy_to_host(), 0)  # no thread ran past the barrier


@cuda.jit
def barriers_in_step(out):
    s = cuda.shared.array(8, float32)
    for step in range(3):
        s[cuda.threadIdx.x] = step + cuda.threadIdx.x
        cuda.syncthreads()  # every thread stored this step's element
        out[cuda.threadIdx.x] += s[(cuda.threadIdx.x + 1) % 8]
        cuda.syncthreads()  # every thread read it before the next step overwrites it


def test_a_block_passes_its_barriers_together():
    out = np.zeros(8, np.float32)
    launched(barriers_in_step, 8, out)
    np.testing.assert_array_equal(out, [3 * ((t + 1) % 8) + 3 for t in range(8)])


def test_a_hung_barrier_fails_within_seconds(monkeypatch):
    import time
    monkeypatch.setattr(simulator, "HUNG_S", 0.5)
    monkeypatch.setattr(simulator.BlockBarrier, "leave", lambda self: None)  # a finished thread counted as live
    start = time.monotonic()
    with pytest.raises(simulator.BarrierHung, match="waited 0.5 s for threads that never came"):
        launched(early_exit_then_barrier, 8, np.zeros(4, np.float32))
    assert time.monotonic() - start < 5


@cuda.jit
def reads_the_last_blocks_shared(out):
    s = cuda.shared.array(1, float32)
    if cuda.blockIdx.x == 0:
        s[0] = 7.0
    cuda.syncthreads()  # block 0 stored its element; block 1 stored none
    out[cuda.blockIdx.x] = s[0]


def test_each_block_starts_with_shared_memory_that_holds_no_value():
    out = np.zeros(2, np.float32)
    reads_the_last_blocks_shared[2, 1](out)
    assert out[0] == 7.0 and np.isnan(out[1])  # numba's simulator alone gives block 1 block 0's 7.0


def installed():
    """True when the sleeping barrier is in place."""
    from numba.cuda.simulator import kernel
    return kernel.BlockManager.run is simulator._run_block and kernel.BlockThread.syncthreads is simulator._syncthreads


def test_the_faster_barrier_is_installed():
    assert installed()


def test_the_patch_can_be_switched_off():
    import os
    import subprocess
    import sys
    code = ("import numpy as np, tiledlab; from tiledlab import simulator; from numba.cuda.simulator import kernel; "
            "A = np.ones((4, 4), np.float32); C = tiledlab.matmul(A, A, 'tiled', 2); "
            "print(kernel.BlockManager.run is simulator._run_block, float(C[0, 0]))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "TILEDLAB_BACKEND": "simulator", "TILEDLAB_SIMULATOR_PATCH": "0"})
    assert run.stdout.split() == ["False", "4.0"], run.stderr


def test_missing_simulator_internals_leave_it_alone_with_one_warning(monkeypatch):
    from numba.cuda.simulator import kernel

    from tiledlab import simulator
    monkeypatch.delattr(kernel.BlockThread, "syncthreads")
    with pytest.warns(RuntimeWarning, match="BlockThread.syncthreads"):
        assert simulator.speed_up() is False


@cuda.jit
def aligned_pair(out):
    a = cuda.shared.array(4, float32, alignment=16)  # a GPU needs the alignment to read 4 floats at once
    b = cuda.shared.array(4, float32, alignment=16)  # declared on its own line: its own array
    i = cuda.threadIdx.x
    a[i] = i
    b[i] = 10 * i
    cuda.syncthreads()  # both arrays filled before anyone reads a neighbour's element
    out[i] = a[(i + 1) % 4] + b[i]


def test_aligned_shared_arrays_run_and_stay_apart():
    from tiledlab import simulator
    from numba.cuda.simulator import kernelapi
    assert kernelapi.FakeCUDAShared.array is simulator._shared_array
    out = np.zeros(4, np.float32)
    launched(aligned_pair, 4, out)
    np.testing.assert_array_equal(out, [1, 12, 23, 30])


def test_missing_shared_internals_leave_alignment_refused_with_one_warning(monkeypatch):
    from numba.cuda.simulator import kernelapi

    from tiledlab import simulator
    monkeypatch.delattr(kernelapi, "numpy_support")
    with pytest.warns(RuntimeWarning, match="kernelapi.numpy_support"):
        assert simulator.accept_alignment() is False


@cuda.jit
def half_set_locals(out, whole):
    a = cuda.local.array(2, float32)
    n = cuda.local.array(2, int32)
    i = cuda.threadIdx.x
    a[0] = i  # element 1 of each is never stored
    n[0] = i
    out[i] = a[0] + a[1]
    whole[i] = n[1]
    a[1] = 7.0  # the next thread's array is its own, FRESH again


def test_a_local_array_starts_fresh_in_every_thread():
    from numba.cuda.simulator import kernelapi
    assert kernelapi.FakeCUDALocal.array is simulator._local_array
    out, whole = np.zeros(4, np.float32), np.zeros(4, np.int32)
    launched(half_set_locals, 4, out, whole)
    assert np.isnan(out).all() and (whole == -1).all(), (out, whole)


def test_missing_local_internals_leave_numbas_local_arrays_with_one_warning(monkeypatch):
    from numba.cuda.simulator import kernelapi
    monkeypatch.delattr(kernelapi, "types")
    with pytest.warns(RuntimeWarning, match="kernelapi.types"):
        assert simulator.fresh_locals() is False
