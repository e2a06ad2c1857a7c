"""The card's facts, read once (tiledlab.experiments.device; tools.measure.facts), and the cuBLAS helper's refusal to pretend."""
import numpy as np
import pytest

import tiledlab
from tiledlab import data
from tiledlab.experiments import Unavailable, cublas, device
from tools.measure import facts as card_facts, latency, peaks


def test_facts_of_the_committed_h200_give_its_datasheet_figures():
    row = data.load("h200/device.csv").iloc[0]
    facts = card_facts.Facts.of(row)
    assert facts.sm_clock_mhz == row["sm_clock_khz"] / 1000 and facts.l2_bytes == row["l2_bytes"]
    assert facts.fp32_datasheet_tflops == pytest.approx(row["fp32_datasheet_tflops"])
    assert device.fp32_datasheet_tflops(row["sms"], row["fp32_lanes_per_sm"], row["sm_clock_khz"]) == \
        pytest.approx(row["fp32_datasheet_tflops"])


def test_latency_and_peaks_read_the_one_device_facts():
    assert latency.device_facts is card_facts.device_facts is peaks.device_facts


@pytest.mark.skipif(not tiledlab.SIMULATOR, reason="checks the simulator's refusal")
@pytest.mark.parametrize("run", [latency.run, peaks.run])
def test_without_a_gpu_the_experiments_say_so(run):
    with pytest.raises(Unavailable, match="needs a real GPU"):
        run()


@pytest.mark.skipif(not tiledlab.SIMULATOR, reason="on a GPU CuPy may well be there")
def test_cublas_is_none_on_the_simulator():
    A = np.ones((4, 4), np.float32)
    assert cublas.import_cupy() is None and cublas.cupy_version() == "" and cublas.sgemm(A, A) is None
    assert cublas.timed_sgemm(A, A, timer=lambda launch: pytest.fail("nothing to time")) is None


def test_sgemm_launches_into_a_nan_filled_c_and_returns_the_product():
    """With a stand-in for CuPy (numpy, which has the same asarray, full and matmul), SGEMM's bookkeeping."""
    class Device(np.ndarray):
        def get(self):
            return np.array(self)

    class FakeCupy:
        nan, float32 = np.nan, np.float32
        asarray, matmul = staticmethod(np.asarray), staticmethod(np.matmul)
        full = staticmethod(lambda shape, value, dtype: np.full(shape, value, dtype).view(Device))

    A, B = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((3, 4), np.float32)
    launch = cublas.SGEMM(FakeCupy, A, B)
    assert np.isnan(launch.result()).all()  # not launched yet: C is still NaN
    launch()
    np.testing.assert_array_equal(launch.result(), A @ B)
