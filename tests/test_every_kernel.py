"""Every kernel of the registry, each the same way, with cases built from the registry (a new kernel brings
its own): a family and an idea; what it needs of the card (cp.async, dynamic shared memory beyond 48 KiB), and
refused in one line by a card without it;
right against float64 numpy on an odd shape at its default constants; counted exactly as the formulas say
at small constants its own rules accept; its source what `show()` prints."""
import dataclasses

import numpy as np
import pytest
from kernel_cases import small

import tiledlab
from tiledlab.core import card, registry
from tiledlab.core.launch import prepare
from tiledlab.counting import count_loads

FAMILIES = {"lesson", "fair", "ladder", "search", "async", "waits", "dynamic", "split"}
NAMES = list(registry.KERNELS)
ODD = (33, 21, 70)  # a partial block in M and N; K two whole tiles of 8 and a partial one; N not a multiple of 4
SMALL_ODD = (19, 13, 37)  # the same edges, for the counted runs (the counting simulator is the slow part)


def operands(seed, M, K, N):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((M, K), dtype=np.float32), rng.standard_normal((K, N), dtype=np.float32)


@pytest.mark.parametrize("name", NAMES)
def test_it_says_what_it_is_and_what_it_needs(name):
    kernel = registry.KERNELS[name]
    assert kernel.family in FAMILIES and kernel.idea, (kernel.family, kernel.idea)
    needs = kernel.needs()
    assert needs.threads == np.prod(kernel.sizes(kernel.bind())[1]) and needs.shared.bytes >= 0
    uses_cp_async = "cp_async4(" in kernel.source()
    assert (needs.compute_capability >= card.CP_ASYNC) == uses_cp_async
    t4 = kernel.refusal(card.KNOWN["t4"])
    assert (t4 is not None) == uses_cp_async
    if t4:
        assert t4.startswith(f"{name}: Tesla T4 (sm_75, 40 SMs) cannot run it") and "\n" not in t4
    # tiles beyond the 48 KiB a block may declare: views of dynamic shared memory, the family "dynamic"
    assert needs.shared.dynamic == ("shared_view(" in kernel.source()) == (kernel.family == "dynamic")
    if needs.shared.dynamic:
        rtx = card.KNOWN["rtx4090"]  # cp.async, 99 KiB a block by opt-in
        assert needs.shared.bytes > card.STATIC_SHARED_BYTES and kernel.refusal(rtx) is None
        less = kernel.refusal(dataclasses.replace(rtx, shared_per_block_optin_bytes=needs.shared.bytes - 1))
        assert f"{needs.shared.bytes:,} bytes of dynamic shared memory" in less and "\n" not in less


@pytest.mark.parametrize("name", NAMES)
def test_right_on_an_odd_shape_at_its_defaults(name):
    A, B = operands(7, *ODD)
    C = tiledlab.matmul(A, B, name)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-5, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("name", NAMES)
def test_counted_exactly_at_small_constants(name):
    constants = small(registry.KERNELS[name])
    A, B = operands(3, *SMALL_ODD)
    c = count_loads(name, A, B, **constants)
    want = registry.predicted(name, *SMALL_ODD, **constants)
    got = {"A": c.A, "B": c.B, "C": int(c.maps["C"].sum()), "reads": int(c.shared_reads.sum()),
           "stores": int(c.shared_stores.sum())}
    assert got == {k: want[k] for k in got}
    assert int(c.C_stores.sum()) == (want["C"] or SMALL_ODD[0] * SMALL_ODD[2])  # an add stores too; else once each
    assert not any(c.hazards.values()), c.hazards
    np.testing.assert_allclose(c.C, A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_the_source_shown_is_the_source_built(name):
    kernel = registry.KERNELS[name]
    text = kernel.source()
    built = prepare(name, *operands(1, 4, 4, 4)).kernel
    assert built.py_func.__code__.co_name == name and f"def {name}(A, B, C):" in text
