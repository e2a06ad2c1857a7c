"""Notebook 7 says what its data and its kernels show: cp.async is Ampere's, not every rung is faster, the
registry's figures for LADDER_TOP are the committed ones, and kernels that add in the same k order agree bit for bit."""
import re
from pathlib import Path

import nbformat
import numpy as np

import tiledlab as tl
from tiledlab import data
from tiledlab.core import registry

PAGE = Path(__file__).parents[1] / "notebooks" / "07_register_tiling.ipynb"


def sentences():
    cells = nbformat.read(PAGE, as_version=4).cells
    text = " ".join(c.source for c in cells if c.cell_type == "markdown")
    return re.split(r"(?<=[.:;])\s+", text)


def test_cp_async_is_ampere_and_tma_is_hopper():
    mentions = [s for s in sentences() if "cp.async" in s]
    assert mentions, "the page should say how cuBLAS copies its tiles"
    for s in mentions:
        assert "sm_80" in s or "Ampere" in s, s
        assert "Hopper" not in s or "TMA" in s or "tensor memory accelerator" in s, s


def test_page_does_not_claim_that_every_rung_rises():
    cells = nbformat.read(PAGE, as_version=4).cells
    assert not any("moves right and up" in c.source for c in cells)


def test_registry_comment_on_the_ladders_top_states_the_committed_figures():
    line = next(l for l in Path(registry.__file__).read_text().splitlines() if l.startswith("LADDER_TOP ="))
    ladder = data.load("h200/ladder.csv")
    stated = re.findall(r"(\d+) % of cuBLAS at N = (\d+)", line)
    for pct, n in stated:
        assert round(data.value(ladder, "pct_cublas", kernel=registry.LADDER_TOP, N=int(n))) == int(pct), line
    assert stated or "%" not in line, line


def test_kernels_with_the_same_k_order_agree_bit_for_bit():
    rng = np.random.default_rng(7)
    A, B = rng.standard_normal((33, 40)).astype(np.float32), rng.standard_normal((40, 45)).astype(np.float32)
    tiled = tl.matmul(A, B, "tiled", tile=8)
    assert np.array_equal(tiled, tl.matmul(A, B, "regtile_2d", BM=16, BN=16, BK=4, TM=4, TN=4))
    assert np.array_equal(tiled, tl.matmul(A, B, "naive", tile=8))
    assert not np.array_equal(tiled, tl.matmul(A[:, ::-1].copy(), B[::-1].copy(), "tiled", tile=8))  # k reversed


def test_registry_comment_names_the_fastest_kernels_of_the_committed_data():
    ladder = data.load("h200/ladder.csv").query("kernel != 'cublas'")
    fastest = {n: ladder.loc[ladder.query("N == @n")["tflops"].idxmax(), "kernel"] for n in ladder["N"].unique()}
    top = registry.KERNELS[registry.LADDER_TOP]
    warp_tiled_twin = [k.name for k in registry.KERNELS.values() if (k.family, k.constants, set(k.code.options)) ==
                       (top.family, top.constants, set(top.code.options) | {"warp"})]
    assert fastest.pop(1024) == "s_64x128x8_8x8_db"
    assert [*set(fastest.values())] == warp_tiled_twin
