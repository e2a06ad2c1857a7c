"""Timing arithmetic on fake clocks: a batch of launches is divided by its size, on both clocks."""
import types

import pytest

from tiledlab.experiments import timing


class FakeClock:
    """perf_counter for the simulator branch: each launch takes 2 ms of 'wall time'."""

    def __init__(self):
        self.now, self.launches = 100.0, 0

    def perf_counter(self):
        return self.now

    def launch(self):
        self.now += 0.002
        self.launches += 1


def test_wall_clock_time_per_launch_divides_the_batch_by_its_size(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(timing, "SIMULATOR", True)
    monkeypatch.setattr(timing, "time", clock)
    assert timing.per_launch_ms(clock.launch, times=5) == pytest.approx(2.0, rel=1e-9)
    assert clock.launches == 5


def test_cuda_event_time_per_launch_divides_the_batch_by_its_size(monkeypatch):
    event = types.SimpleNamespace(record=lambda: None, synchronize=lambda: None)
    calls = []
    fake_cuda = types.SimpleNamespace(event=lambda: event, event_elapsed_time=lambda start, stop: 10.0)
    monkeypatch.setattr(timing, "SIMULATOR", False)
    monkeypatch.setattr(timing, "cuda", fake_cuda)
    assert timing.per_launch_ms(lambda: calls.append(1), times=5) == 2.0  # 10 ms between the events, 5 launches
    assert len(calls) == 5


def test_a_timing_reports_rates_from_its_median():
    t = timing.Timing(median_ms=2.0, min_ms=1.0, max_ms=3.0, repeats=3, clock="fake clock")
    assert t.tflops(1000, 1000, 1000) == pytest.approx(2e9 / 2e-3 / 1e12)  # 2·M·K·N FLOP in 2 ms
    assert t.gbps(1000, 1000, 1000) == pytest.approx(4 * 3e6 / 2e-3 / 1e9)  # A, B and C once, 4 bytes each


def test_back_to_back_fills_each_sample_to_two_ms_and_says_so(monkeypatch):
    calls = []
    monkeypatch.setattr(timing, "SIMULATOR", False)
    monkeypatch.setattr(timing, "per_launch_ms", lambda launch, times=1: calls.append(times) or 0.3)
    t = timing.back_to_back(lambda: None, warmup=0, repeats=4)
    assert calls == [1] + [7] * 4  # one launch to measure, then ceil(2 / 0.3) = 7 per sample
    assert t.launches_per_sample == 7 and t.method == "back-to-back, ≥2 ms per sample, median of 4"


def test_a_slow_kernel_gets_one_launch_per_sample_and_the_cap_holds(monkeypatch):
    monkeypatch.setattr(timing, "SIMULATOR", False)
    monkeypatch.setattr(timing, "per_launch_ms", lambda launch, times=1: 50.0)
    assert timing.back_to_back(lambda: None, 0, 2).launches_per_sample == 1
    monkeypatch.setattr(timing, "per_launch_ms", lambda launch, times=1: 1e-6)
    assert timing.back_to_back(lambda: None, 0, 2).launches_per_sample == timing.MAX_LAUNCHES_PER_SAMPLE
