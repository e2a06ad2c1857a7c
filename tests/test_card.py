"""The card as data (core.card): the modelled cards, and each need a kernel can have of a card refused in one
line that names the card and the need, before anything is compiled."""
import dataclasses

import numpy as np
import pytest

from tiledlab.core import card, launch
from tiledlab.core.card import KNOWN, Needs, Shared
from tiledlab.core.registry import KERNELS

T4, RTX, H200 = KNOWN["t4"], KNOWN["rtx4090"], KNOWN["h200"]


def test_the_known_cards_are_the_ones_students_have():
    assert {c.arch for c in KNOWN.values()} == {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90"}
    assert all(c.shared_per_block_bytes == card.STATIC_SHARED_BYTES for c in KNOWN.values())
    assert RTX.shared_per_block_optin_bytes == 99 * 1024 and H200.shared_per_block_optin_bytes == 227 * 1024
    as_json = {**dataclasses.asdict(H200), "compute_capability": [9, 0]}  # JSON has lists, not tuples
    assert card.Card.of(as_json) == H200


@pytest.mark.parametrize("needs, on, says", [
    (Needs((8, 0), Shared(0), 128), T4, "Tesla T4 (sm_75, 40 SMs) cannot run it: cp.async needs compute capability 8.0"),
    (Needs((0, 0), Shared(50_000), 128), H200, "declares 50,000 bytes of shared memory per block; a block may declare "
                                               "at most 49,152 (48 KiB) statically"),
    (Needs((0, 0), Shared(120_000, dynamic=True), 128), RTX, "NVIDIA GeForce RTX 4090 (sm_89, 128 SMs) cannot run it: "
                                                             "it needs 120,000 bytes of dynamic shared memory"),
    (Needs((0, 0), Shared(0), 1024, min_blocks=2), T4, "launch bounds ask for 2 blocks of 1024 threads per SM"),
])
def test_each_need_is_refused_in_one_line_naming_card_and_need(needs, on, says):
    why = needs.refusal(on)
    assert says in why and "\n" not in why


def test_what_fits_is_not_refused():
    assert Needs((8, 0), Shared(120_000, dynamic=True), 256, 1).refusal(H200) is None
    assert Needs((0, 0), Shared(card.STATIC_SHARED_BYTES), 1024).refusal(T4) is None


def test_shared_memory_comes_from_one_function_of_the_constants():
    tiled = KERNELS["tiled"]
    assert tiled.shared_memory(tiled.bind(tile=8)) == Shared(2 * 8 * 8 * 4)  # from its declarations
    for name in ("gen_double", "a_64x128x16_8x8_s3", "h_64x128x8_8x8_s4", "f_128x256x8_8x16_warp"):
        gen = KERNELS[name]  # the generator's own figure equals the bytes its written declarations hold
        assert gen.shared_memory(gen.bind()) == dataclasses.replace(gen, shared=None).shared_memory(gen.bind())


def test_refused_before_compiling(monkeypatch):
    monkeypatch.setattr(card, "current", lambda: dataclasses.replace(H200, shared_per_block_bytes=1024))
    monkeypatch.setattr(type(KERNELS["tiled"].code), "compile", lambda *a: pytest.fail("compiled"))
    with pytest.raises(ValueError, match="tiled: NVIDIA H200 .*declares 2,048 bytes .* at most 1,024"):
        launch.matmul(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32), "tiled", tile=16)


@pytest.mark.skipif(card.SIMULATOR, reason="reads the card from the driver: needs a GPU")
def test_the_card_read_from_the_driver_is_the_one_modelled_for_the_simulator():
    here = card.current()
    model = next((c for c in KNOWN.values() if c.name == here.name), None)
    if model is None:
        pytest.skip(f"no model of {here} in core.card.KNOWN")
    assert here == model  # so that the simulator chooses and refuses as this card does


@pytest.mark.parametrize("key, registers, threads, shared, held", [
    ("h200", 231, 256, 12544, 1),  # w_128x256x8_8x16_warp16x2: 59,392 registers a block
    ("h200", 227, 128, 40704, 2),  # a_64x128x16_8x8_s3: registers, not its 41 KiB of tiles
    ("h200", 164, 128, 12800, 3),  # s_64x128x8_8x8_db: 168 × 32 × 4 = 21,504 registers a block
    ("t4", 164, 128, 12800, 3),
    ("t4", 32, 128, 12800, 5),  # few registers: the T4's 64 KiB of shared memory holds 5 (no reserved KiB)
    ("h200", 32, 128, 40960, 5),  # 228 KiB, 41 KiB a block with the 1 KiB the system keeps per block
    ("h200", 16, 1024, 0, 2),  # threads: 2048 an SM
    ("t4", 16, 32, 0, 16),  # the card's own limit of blocks
])
def test_blocks_per_sm_are_the_fewest_that_registers_shared_memory_threads_and_the_card_allow(key, registers,
                                                                                              threads, shared, held):
    assert card.blocks_per_sm(KNOWN[key], registers, threads, shared) == held


def test_a_card_is_known_by_its_name_and_the_h100_as_the_h200_but_its_name():
    assert card.known_as(dataclasses.replace(H200)) == "h200" and card.known_as(KNOWN["h100"]) == "h100"
    assert card.known_as(dataclasses.replace(H200, name="NVIDIA B200")) is None
    assert dataclasses.replace(KNOWN["h100"], name=H200.name) == H200  # sm_90 and 132 SMs: the same limits
