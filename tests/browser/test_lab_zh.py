"""Run All on notebooks of the Chinese edition in JupyterLab, checked as test_lab.py checks the English
ones: in the zh/ working copy that `tiledlab lab --lang zh` makes, kernels started beside its LANGUAGE
file, so every message and figure label a cell prints is Chinese. A file of its own, so that pytest-xdist
(--dist loadfile) runs it on the other worker, beside the English Run All.

Two of the eight: their code cells are the English notebooks' byte for byte (tests/test_edition.py) and
nbval runs every English one on a kernel, so what a Chinese Run All adds is the language: each cell as the
Chinese kernel rewrites it (checked for all eight in tests/test_zh_cells.py, without running them; `pytest
-m slow` runs all eight in Chinese, tests/test_zh_reader.py) and what the browser shows. 00 renders the most
figures (Chinese axis labels), 02 a widget and the exercise checks' Chinese feedback."""
import pytest

from .test_lab import NOTEBOOKS_ZH, check_run_all, committed_hashes, lab, rel, runner  # noqa: F401 (fixtures)

IN_THE_BROWSER = [nb for nb in NOTEBOOKS_ZH if nb.stem in ("00_start_here", "02_redundant_reads")]


def test_the_chosen_notebooks_exist():
    assert len(IN_THE_BROWSER) == 2


@pytest.mark.parametrize("notebook", IN_THE_BROWSER, ids=[rel(nb).removesuffix(".ipynb") for nb in IN_THE_BROWSER])
def test_run_all(runner, notebook, record, committed_hashes, zh_outputs_are_chinese):
    check_run_all(runner, notebook, record, committed_hashes, zh_outputs_are_chinese)
