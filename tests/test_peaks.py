"""The roofs: the FP32 kernel's FLOP count is its generated body; the bandwidth kernels read what they claim."""
import ast

import numpy as np
import pytest
from conftest import simulator_only
from numba import cuda

from tools.measure import peaks
from tools.measure.facts import Facts
from tiledlab.experiments.device import FP32_LANES_PER_SM, fp32_datasheet_tflops


@pytest.mark.parametrize("chains,unroll", [(1, 1), (3, 2), (16, 8)])
def test_flop_count_is_read_from_the_generated_body(chains, unroll):
    source = peaks.fma_source(chains, unroll)
    assert peaks.fmas_per_trip(source) == chains * unroll == source.count("cuda.fma(")
    loop = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.While))
    assert ast.unparse(loop.test) == "t < trips"  # the loop counter is the int32 t
    assert peaks.fma_flops(chains, unroll, trips=7, threads=100) == 2 * chains * unroll * 7 * 100


@pytest.mark.parametrize("chains,unroll", [(2, 3), (4, 1)])
def test_fma_kernel_performs_exactly_the_fmas_it_counts(chains, unroll):
    """With a = 1 each FMA adds 1 to its chain: the sum tells how many FMAs every thread ran."""
    trips, threads = 5, 8
    out = cuda.device_array(threads, np.float32)
    peaks.fma_kernel(chains, unroll)[1, threads](out, np.float32(1.0), np.int32(trips))
    i = np.arange(threads)
    fmas = peaks.fma_flops(chains, unroll, trips, 1) // 2  # per thread
    expected = chains * i + chains * (chains - 1) // 2 + fmas
    np.testing.assert_array_equal(out.copy_to_host(), expected)


def test_datasheet_figure_is_sms_lanes_two_and_clock():
    assert fp32_datasheet_tflops(sms=132, lanes_per_sm=128, sm_clock_khz=1_980_000) == pytest.approx(66.9, abs=0.05)
    assert FP32_LANES_PER_SM[(9, 0)] == 128


def test_shared_datasheet_is_a_wavefront_per_clock_on_every_sm():
    facts = Facts(sms=132, sm_clock_khz=1_980_000, fp32_lanes_per_sm=128, l2_bytes=60 << 20, dram_datasheet_gbps=4800)
    assert peaks.shared_datasheet_tbs(facts) == pytest.approx(132 * 128 * 1.98e9 / 1e12)


# ---------------------------------------------------------------- bandwidth kernels


@simulator_only
def test_stream_read_loads_every_element_once_per_pass(recording):
    n, passes = 32 * peaks.STREAM_UNROLL * 5, 3
    x = np.ones(n, np.float32).view(recording)
    blocks = 1
    out = cuda.device_array(blocks * peaks.THREADS, np.float32)
    peaks.stream_read[blocks, peaks.THREADS](cuda.to_device(x), np.int32(passes), out)
    counts = np.bincount(recording.log, minlength=n)
    assert (counts == passes).all()
    assert peaks.stream_bytes(n, passes) == 4 * n * passes
    assert out.copy_to_host().sum() == n * passes


def test_shared_read_reads_whole_rows_as_claimed():
    blocks, passes = 2, 3
    out = cuda.device_array(blocks * peaks.THREADS, np.float32)
    peaks.shared_read[blocks, peaks.THREADS](out, np.int32(passes))
    rows = peaks.SHARED_FLOATS // 32
    expected = 0
    for w in range(peaks.THREADS // 32):  # warp w reads rows (8w + 8p + u) mod 64, all 32 words each
        for p in range(passes):
            for u in range(peaks.SHARED_UNROLL):
                r = (w * peaks.SHARED_UNROLL + p * peaks.SHARED_UNROLL + u) % rows
                expected += sum(range(32 * r, 32 * r + 32))
    assert out.copy_to_host().sum() == blocks * expected
    assert peaks.shared_bytes(passes, blocks) == blocks * (peaks.THREADS // 32) * passes * peaks.SHARED_UNROLL * 128

