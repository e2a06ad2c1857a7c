"""Time launches: CUDA events on a GPU, wall-clock on the simulator (which says nothing of GPU speed)."""
import time
from dataclasses import dataclass

import numpy as np
from numba import cuda

from ..backend import SIMULATOR


@dataclass
class Timing:
    median_ms: float
    min_ms: float
    max_ms: float
    repeats: int
    clock: str  # "cuda events" or "simulator wall time"

    def tflops(self, M, K, N):
        return 2 * M * K * N / (self.median_ms * 1e-3) / 1e12

    def gbps(self, M, K, N):
        """Effective bandwidth: the bytes of A, B and C that must move at least once, per second."""
        return 4 * (M * K + K * N + M * N) / (self.median_ms * 1e-3) / 1e9


def time_launch(launch, warmup=2, repeats=10):
    """Median, min and max of `repeats` calls of `launch()` after `warmup` untimed ones."""
    for _ in range(warmup):
        launch()
    samples = []
    for _ in range(repeats):
        if SIMULATOR:
            t0 = time.perf_counter()
            launch()
            samples.append((time.perf_counter() - t0) * 1e3)
        else:
            start, stop = cuda.event(), cuda.event()
            start.record()
            launch()
            stop.record()
            stop.synchronize()
            samples.append(cuda.event_elapsed_time(start, stop))
    s = np.array(samples)
    return Timing(float(np.median(s)), float(s.min()), float(s.max()), repeats,
                  "simulator wall time" if SIMULATOR else "cuda events")
