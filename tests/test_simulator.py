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


def test_threads_that_return_early_release_the_barrier():
    out = np.zeros(4, np.float32)
    early_exit_then_barrier[1, 8](out)
    np.testing.assert_array_equal(out, [1, 2, 3, 0])


def test_a_failing_thread_raises_instead_of_hanging():
    with pytest.raises(IndexError):
        fails_before_barrier[1, 8](np.zeros(4, np.float32))
