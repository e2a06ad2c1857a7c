"""The two ceilings of a roofline, measured: device-memory bandwidth and FP32 arithmetic rate."""
import numpy as np
from numba import cuda, float32

from .timing import time_launch

FMA_CHAINS = 8  # independent fused multiply-add chains per thread, to hide arithmetic latency
FMA_STEPS = 4096


@cuda.jit
def fma_burst(out, a):
    i = cuda.grid(1)
    x0 = float32(i)
    one = float32(1.0)  # float32 constants: a bare 1 would promote the chains to float64
    x1, x2, x3, x4, x5, x6, x7 = x0 + one, x0 - one, x0 * a, x0 + a, x0 - a, a - x0, x0 * one + a
    for _ in range(FMA_STEPS):
        x0 = cuda.fma(x0, a, a)
        x1 = cuda.fma(x1, a, a)
        x2 = cuda.fma(x2, a, a)
        x3 = cuda.fma(x3, a, a)
        x4 = cuda.fma(x4, a, a)
        x5 = cuda.fma(x5, a, a)
        x6 = cuda.fma(x6, a, a)
        x7 = cuda.fma(x7, a, a)
    out[i] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7  # keep every chain alive


def bandwidth_gbps(nbytes=2 << 30, repeats=10):
    """Bytes read plus bytes written per second by a device-to-device copy (cudaMemcpy) of `nbytes`."""
    n = nbytes // 4
    src, dst = cuda.to_device(np.ones(n, np.float32)), cuda.device_array(n, np.float32)
    t = time_launch(lambda: dst.copy_to_device(src), 2, repeats)
    return 2 * nbytes / (t.median_ms * 1e-3) / 1e9


def fp32_tflops(repeats=10):
    """Plain FP32 fused multiply-adds per second (2 FLOP each) over a grid that fills every SM."""
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    blocks, threads = sms * 8, 256
    out = cuda.device_array(blocks * threads, np.float32)
    t = time_launch(lambda: fma_burst[blocks, threads](out, np.float32(0.999)), 2, repeats)
    return 2 * FMA_CHAINS * FMA_STEPS * blocks * threads / (t.median_ms * 1e-3) / 1e12


def run():
    return [{"ceiling": "DRAM bandwidth (copy, read+write)", "value": bandwidth_gbps(), "unit": "GB/s"},
            {"ceiling": "FP32 FMA rate", "value": fp32_tflops(), "unit": "TFLOP/s"}]
