import numpy as np
import pytest

import tiledlab

gpu_only = pytest.mark.skipif(tiledlab.SIMULATOR, reason="needs a real GPU: the simulator has no caches, "
                                                        "warps or clocks, and its times say nothing of GPU speed")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def operands(rng, M, K, N):
    return (rng.standard_normal((M, K), dtype=np.float32), rng.standard_normal((K, N), dtype=np.float32))


class Recording(np.ndarray):
    """An array that logs every scalar index read from it (the simulator keeps the subclass on the
    'device' copy and forwards kernel loads to it). One log for all views: copies keep recording."""
    log = []

    def __getitem__(self, index):
        if isinstance(index, (int, np.integer)):
            Recording.log.append(int(index))
        return super().__getitem__(index)


@pytest.fixture
def recording():
    Recording.log = []
    yield Recording
    Recording.log = []


simulator_only = pytest.mark.skipif(not tiledlab.SIMULATOR, reason="records loads through the simulator's arrays")
