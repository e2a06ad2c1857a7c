import numpy as np
import pytest
from conftest import operands
from numba import cuda  # a global, as in a notebook: the simulator swaps module globals only

import tiledlab
from tiledlab.core import formulas
from tiledlab.counting import count_loads
from tiledlab.counting.rewrite import instrumented_source

CASES = [(8, 8, 8, 4), (16, 16, 16, 4), (5, 23, 7, 4), (12, 9, 20, 3), (1, 1, 1, 1), (8, 8, 8, 8)]


@pytest.mark.parametrize("M,K,N,T", CASES)
@pytest.mark.parametrize("kernel", ["naive", "tiled"])
def test_measured_loads_equal_formula(rng, kernel, M, K, N, T):
    A, B = operands(rng, M, K, N)
    c = count_loads(kernel, A, B, T)
    want = formulas.naive_loads(M, K, N) if kernel == "naive" else formulas.tiled_loads(M, K, N, T)
    assert {"A": c.A, "B": c.B} == want
    np.testing.assert_allclose(c.C, A @ B, rtol=1e-5, atol=1e-5)  # counting does not change the answer


def test_formulas_reduce_to_the_articles():
    n, T = 64, 8
    assert sum(formulas.naive_loads(n, n, n).values()) == 2 * n**3
    assert sum(formulas.tiled_loads(n, n, n, T).values()) == 2 * n**3 // T
    assert formulas.tile_step_loads(4) == {"naive": 128, "tiled": 32}


def test_naive_maps_and_per_thread_loads(rng):
    n = 8
    A, B = operands(rng, n, n, n)
    c = count_loads("naive", A, B, 4)
    assert (c.maps["A"] == n).all() and (c.maps["B"] == n).all()  # every element fetched N times
    assert (c.thread_loads == 2 * n).all()  # 2N loads per thread
    assert c.shared_reads.sum() == 0 and c.maps["C"].sum() == 0


def test_tiled_maps_shared_traffic_and_no_hazards(rng):
    n, T = 8, 4
    A, B = operands(rng, n, n, n)
    c = count_loads("tiled", A, B, T)
    assert (c.maps["A"] == n // T).all() and (c.maps["B"] == n // T).all()
    assert (c.thread_loads == 2 * n // T).all()
    assert (c.shared_stores == 2 * n // T).all()  # each thread stores one element of sA and of sB per step
    assert (c.shared_reads == 2 * n).all()  # and reads T of each per step
    assert c.hazards == {"read_after_write": 0, "write_after_read": 0, "write_after_write": 0, "copy_in_flight": 0,
                         "divergent_barrier": 0, "unstored_read": 0}


def test_trace_records_who_loaded_what(rng):
    A, B = operands(rng, 4, 4, 4)
    c = count_loads("naive", A, B, 4, trace=True)
    assert len(c.trace) == c.total == 128
    t = c.trace
    a11 = t[(t.operand == 0) & (t.i == 0) & (t.j == 0)]
    assert sorted(a11.tx) == [0, 1, 2, 3] and set(a11.ty) == {0}  # threads (ty=0, tx=0..3)


@pytest.mark.parametrize("n, T", [(6, 4), (5, 8), (9, 4), (4, 8), (12, 8)])
def test_trace_has_room_when_the_tile_does_not_divide_n(rng, n, T):
    # edge blocks store and read the padding's zeros: more shared accesses than n alone suggests
    A, B = operands(rng, n, n, n)
    c = count_loads("tiled", A, B, T, trace=True)
    assert len(c.trace) == c.total
    assert len(c.shared_trace) == int(c.shared_reads.sum() + c.shared_stores.sum()) == \
        (-(-n // T) * T) ** 2 * -(-n // T) * (2 + 2 * T)


def test_instrumented_source_keeps_the_arithmetic():
    text = instrumented_source(tiledlab.tiled)
    assert "_tl_gload(A, 0" in text and "_tl_sload(sA" in text and "_tl_sstore(sB" in text
    assert text.count("cuda.syncthreads()") == 2


def test_counting_needs_two_index_access(rng):
    @cuda.jit
    def flat(A, B, C):
        C[0, 0] = A[0][0]

    A, B = operands(rng, 2, 2, 2)
    with pytest.raises(ValueError, match=r"A\[i, j\]"):
        count_loads(flat, A, B, 2)


def test_lru_model_sees_reuse(rng):
    from tiledlab.counting.cachesim import address_stream, hit_rate
    A, B = operands(rng, 16, 16, 16)
    naive = address_stream(count_loads("naive", A, B, 4, trace=True))
    assert len(naive) == 2 * 16**3
    assert hit_rate(naive, 1) < hit_rate(naive, 64) == 1 - 16 / len(naive)  # only the 16 lines' first touch misses


@pytest.mark.parametrize("M,K,N,T", [(5, 6, 7, 4), (8, 9, 8, 4), (4, 4, 4, 4)])
def test_shared_traffic_counts_the_zeros_of_a_padded_last_step(rng, M, K, N, T):
    steps = -(-K // T)  # the last step multiplies the zeros past K too
    want = formulas.shared_traffic(M, K, N, T, T, T)
    assert want["fmas"] == -(-M // T) * -(-N // T) * T * T * steps * T
    c = count_loads("tiled", *operands(rng, M, K, N), T)
    assert (int(c.shared_reads.sum()), int(c.shared_stores.sum())) == (want["reads"], want["stores"])
    assert want["reads"] == 2 * want["fmas"]  # two shared reads per multiply-add, the padding's included
