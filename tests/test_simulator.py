import numpy as np
import pytest
from numba import cuda, float32

import tiledlab

pytestmark = pytest.mark.skipif(not tiledlab.SIMULATOR, reason="tests tiledlab's simulator barrier")


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
    early_exit_then_barrier[1, 8](out)
    np.testing.assert_array_equal(out, [1, 2, 3, 0])


def test_a_failing_thread_raises_instead_of_hanging():
    with pytest.raises(IndexError):
        fails_before_barrier[1, 8](np.zeros(4, np.float32))


def test_a_failing_thread_stops_its_neighbours_at_the_barrier_and_its_own_error_is_raised():
    out = cuda.to_device(np.zeros(4, np.float32))  # a device array: what the other threads wrote stays visible
    with pytest.raises(IndexError):  # the cause, not the BarrierAbandoned of the threads it released
        fails_then_neighbours_write[1, 8](out)
    np.testing.assert_array_equal(out.copy_to_host(), 0)  # no thread ran past the barrier


def test_the_faster_barrier_is_installed():
    from tiledlab import simulator
    assert simulator.installed()


def test_the_patch_can_be_switched_off():
    import os
    import subprocess
    import sys
    code = ("import numpy as np, tiledlab; from tiledlab import simulator; "
            "A = np.ones((4, 4), np.float32); C = tiledlab.matmul(A, A, 'tiled', 2); "
            "print(simulator.installed(), float(C[0, 0]))")
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
    aligned_pair[1, 4](out)
    np.testing.assert_array_equal(out, [1, 12, 23, 30])


def test_missing_shared_internals_leave_alignment_refused_with_one_warning(monkeypatch):
    from numba.cuda.simulator import kernelapi

    from tiledlab import simulator
    monkeypatch.delattr(kernelapi, "numpy_support")
    with pytest.warns(RuntimeWarning, match="kernelapi.numpy_support"):
        assert simulator.accept_alignment() is False
