"""Time launches: CUDA events on a GPU, wall-clock on the simulator (which says nothing of GPU speed).
`back_to_back(launch)`, the one method for every kernel and cuBLAS, hides launch overhead in MIN_SAMPLE_MS samples."""
import math
import time
from dataclasses import dataclass

import numpy as np
from numba import cuda

from ..backend import SIMULATOR

MIN_SAMPLE_MS = 2.0  # a sample lasts at least this long on a GPU: launch overhead stops counting
MAX_LAUNCHES_PER_SAMPLE = 100


@dataclass
class Timing:
    median_ms: float
    min_ms: float
    max_ms: float
    repeats: int
    clock: str  # "cuda events" or "simulator wall time"
    launches_per_sample: int = 1
    min_sample_ms: float = 0.0  # what a sample had to last (0: one launch per sample)

    @property
    def method(self):
        """How the samples were taken, in words: what a row's "timing" column says."""
        if self.min_sample_ms and self.clock == "cuda events":
            return f"back-to-back, ≥{self.min_sample_ms:g} ms per sample, median of {self.repeats}"
        return f"one launch per sample, median of {self.repeats}"

    def tflops(self, M, K, N):
        return 2 * M * K * N / (self.median_ms * 1e-3) / 1e12

    def gbps(self, M, K, N):
        """Effective bandwidth: the bytes of A, B and C that must move at least once, per second."""
        return 4 * (M * K + K * N + M * N) / (self.median_ms * 1e-3) / 1e9


def time_launch(launch, warmup=2, repeats=10, min_sample_ms=0.0):
    """Median, min and max of `repeats` samples after `warmup` calls; with `min_sample_ms` on a GPU, a sample is as
    many back-to-back calls as last that long (MAX_LAUNCHES_PER_SAMPLE at most), divided by their number."""
    for _ in range(warmup):
        launch()
    per_sample = 1
    if min_sample_ms and not SIMULATOR:
        per_sample = max(1, min(MAX_LAUNCHES_PER_SAMPLE, math.ceil(min_sample_ms / max(per_launch_ms(launch), 1e-3))))
    s = np.array([per_launch_ms(launch, per_sample) for _ in range(repeats)])
    return Timing(float(np.median(s)), float(s.min()), float(s.max()), repeats,
                  "simulator wall time" if SIMULATOR else "cuda events", per_sample, min_sample_ms)


def back_to_back(launch, warmup=2, repeats=10):
    """`time_launch` with samples of at least MIN_SAMPLE_MS (on the simulator, one launch per sample)."""
    return time_launch(launch, warmup, repeats, MIN_SAMPLE_MS)


def per_launch_ms(launch, times=1):
    """Milliseconds per call of `times` back-to-back calls of `launch()` (CUDA events; simulator: wall clock)."""
    if SIMULATOR:
        t0 = time.perf_counter()
        for _ in range(times):
            launch()
        return (time.perf_counter() - t0) * 1e3 / times
    start, stop = cuda.event(), cuda.event()
    start.record()
    for _ in range(times):
        launch()
    stop.record()
    stop.synchronize()
    return cuda.event_elapsed_time(start, stop) / times
