"""Run All on every notebook of the Chinese edition in JupyterLab, checked as test_lab.py checks the
English ones: in the zh/ working copy that `tiledlab lab --lang zh` makes, kernels started beside its
LANGUAGE file, so every message and figure label a cell prints is Chinese. A file of its own, so that
pytest-xdist (--dist loadfile) runs it on the other worker, beside the English Run All."""
import pytest

from .test_lab import NOTEBOOKS_ZH, check_run_all, committed_hashes, lab, rel, runner  # noqa: F401 (fixtures)


@pytest.mark.parametrize("notebook", NOTEBOOKS_ZH, ids=[rel(nb).removesuffix(".ipynb") for nb in NOTEBOOKS_ZH])
def test_run_all(runner, notebook, record, committed_hashes):
    check_run_all(runner, notebook, record, committed_hashes)
