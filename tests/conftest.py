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
