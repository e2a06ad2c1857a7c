"""Barrier hazards said in one message whatever kind thread timing produced, and checked on products
with at least two tile phases (where the second barrier has a step to guard)."""
import contextlib
import io
import pathlib
import re

import nbformat
import numpy as np
import pytest
from conftest import operands

import tiledlab
from tiledlab.counting import count_loads
from tiledlab.counting.exercises import check
from tiledlab.counting.hazards import EFFECT, hazard_message
from tiledlab.counting.variants import without_barrier

NOTEBOOK_2 = pathlib.Path(__file__).parents[1] / "notebooks" / "02_redundant_reads.ipynb"
KINDS = ("read_after_write", "write_after_read", "write_after_write", "read-after-write", "write-after-read")


def test_one_message_whatever_the_kind():
    one = hazard_message({"read_after_write": 0, "write_after_read": 1152, "write_after_write": 0})
    other = hazard_message({"read_after_write": 1000, "write_after_read": 152, "write_after_write": 0})
    assert one == other and EFFECT in one and "1,152" in one
    assert not any(kind in one for kind in KINDS)
    assert not re.search(r"\d", hazard_message({"read_after_write": 3, "write_after_read": 0,
                                                "write_after_write": 0}, count=False))
    assert "no barrier hazards" in hazard_message({"read_after_write": 0, "write_after_read": 0,
                                                   "write_after_write": 0})


def test_check_names_the_effect_and_the_total_not_the_kinds(capsys):
    assert check(without_barrier(tiledlab.tiled, 1), tile=4) is False
    out = capsys.readouterr().out
    assert EFFECT in out and re.search(r"\d+ barrier hazards", out)
    assert not any(kind in out for kind in KINDS)


def test_the_second_barrier_guards_nothing_with_one_tile_phase(rng):
    broken = without_barrier(tiledlab.tiled, 1)
    one_phase = count_loads(broken, *operands(rng, 4, 4, 4), tile=4)  # the 4×4 product of notebook 2
    two_phases = count_loads(broken, *operands(rng, 4, 8, 4), tile=4)  # K = 2T: phase 1 overwrites phase 0's tile
    assert sum(one_phase.hazards.values()) == 0
    assert sum(two_phases.hazards.values()) > 0


def hazard_cell():
    cells = [c for c in nbformat.read(NOTEBOOK_2, 4).cells if "hazard-check" in c.metadata.get("tags", [])]
    assert len(cells) == 1, "notebook 2 has one cell tagged hazard-check"
    return cells[0].source


@pytest.mark.parametrize("which", [0, 1])
def test_notebook_2s_hazard_line_catches_either_missing_barrier(which):
    rng = np.random.default_rng(0)
    scope = {"tiled": without_barrier(tiledlab.tiled, which), "count_loads": count_loads,
             "rand": lambda M, K: rng.standard_normal((M, K), dtype=np.float32)}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(hazard_cell(), scope)
    assert EFFECT in out.getvalue() and "no barrier hazards" not in out.getvalue()


def test_notebook_2s_hazard_line_passes_the_lesson_kernel():
    rng = np.random.default_rng(0)
    scope = {"tiled": tiledlab.tiled, "count_loads": count_loads,
             "rand": lambda M, K: rng.standard_normal((M, K), dtype=np.float32)}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(hazard_cell(), scope)
    assert "no barrier hazards" in out.getvalue()
