"""Shared tiles beyond 48 KiB: views of dynamic shared memory (core.ptx.shared_view), reserved by every launch of
the build (ptx.DynamicShared), counted exactly like static tiles, their pipeline checked by the counting lab."""
import dataclasses

import numpy as np
import pytest

from tiledlab.core import best, contract, unrolled
from tiledlab.core.generated import generated
from tiledlab.core.launch import prepare
from tiledlab.core.ptx import DynamicShared
from tiledlab.core.registry import KERNELS, family, predicted
from tiledlab.counting.count import count_loads

# 2 warps, 5 stages of 32×32 + 32×64: 66 KiB of tiles, small enough for the simulator
TINY = dict(BM=32, BN=64, BK=32, TM=4, TN=8, stages=5, **unrolled.ASYNC)


def operands(M, K, N, seed=26):
    rng = np.random.default_rng(seed)
    return rng.random((M, K), dtype=np.float32), rng.random((K, N), dtype=np.float32)


def test_the_generator_reports_the_bytes_it_declares():
    for name in [*family("async"), *family("dynamic"), *best.CANDIDATES]:  # pipelines, dynamic tiles, buffers
        kernel = KERNELS[name]
        bound = kernel.bind()
        tree = kernel.checked_code(bound).tree
        used, dynamic = kernel.shared_memory(bound)  # what the generator reports (unrolled.shared_memory)
        declared = dataclasses.replace(kernel, shared=None).shared_memory(bound)  # summed from the source
        assert declared.bytes == used, name
        assert contract.dynamic_bytes(tree, {**kernel.namespace, **bound}) == (used if dynamic else 0), name
        assert dynamic == (kernel.family == "dynamic"), name


def test_tiles_over_48_kib_are_dynamic_and_launch_reserving_them():
    kernel = generated("t_dynamic", **TINY)
    used, dynamic = kernel.shared_memory(kernel.bind())
    assert dynamic and used == 4 * (5 * 32 * 36 + 5 * 32 * 68)
    assert "shared_view(smem, 5760, 160, 68)" in kernel.source()
    launch = prepare(kernel, *operands(34, 45, 70))
    assert isinstance(launch.kernel, DynamicShared) and launch.kernel.nbytes == used


def test_dynamic_tiles_count_exactly_on_an_odd_shape():
    kernel = generated("t_dynamic", **TINY)
    A, B = operands(34, 45, 70)  # partial tiles in M, N and K; K and N not multiples of 4: the plain path
    c = count_loads(kernel, A, B)
    want = predicted(kernel, 34, 45, 70)
    np.testing.assert_allclose(c.C, A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)
    assert (c.A, c.B, int(c.shared_reads.sum())) == (want["A"], want["B"], want["reads"])
    assert int(c.shared_stores.sum()) == want["stores"]
    assert not any(c.hazards.values()), c.hazards
    assert set(c.shared) == {"sA", "sB"}


def test_a_pipeline_without_its_barrier_is_caught(monkeypatch):
    original = unrolled.pipeline_loop

    def no_barrier(p):  # the barrier after the wait: other threads' copies may not have landed
        return [line for line in original(p) if "cuda.syncthreads()" not in line]
    monkeypatch.setattr(unrolled, "pipeline_loop", no_barrier)
    c = count_loads(generated("t_no_barrier", **TINY), *operands(32, 64, 64))
    assert c.hazards["read_after_write"] > 0 or c.hazards["write_after_read"] > 0, c.hazards


@pytest.mark.parametrize("edit, why", [
    (lambda s: s.replace("shared_view(smem, 5760,", "shared_view(smem, 5000,"), "overlaps"),
    (lambda s: s.replace("    sA = shared_view", "    smem[0] = 1.0\n    sA = shared_view"), "2-D accesses"),
])
def test_a_view_the_lab_cannot_follow_is_refused(edit, why):
    from tiledlab.counting.countable import check_countable
    from tiledlab.counting.rewrite import shared_arrays
    kernel = generated("t_dynamic", **TINY)
    bound = kernel.bind()
    tree = contract.parse_kernel(edit(kernel.checked_code(bound).text), "<edited>", "t_dynamic")
    namespace = {**kernel.namespace, **bound}
    with pytest.raises(ValueError, match=why):
        contract.dynamic_bytes(tree, namespace)
        declared = contract.shared_declarations(tree, namespace)
        check_countable(tree, ["A", "B"], "C", shared_arrays(declared), namespace, declared)
