"""A careless teacher's command lines (python -m tiledlab, python -m classroom, classroom.capacity): each wrong
one refused in one line with exit 2, before anything runs or is written; never a traceback, never a silently
wrong result. The findings: docs of the probe in the lead's notes (hostile-teacher.md)."""
import pathlib

import pytest

from tiledlab.core import best
from tiledlab.experiments import bench, tune

NOT_WRITABLE = pathlib.Path("/proc/tiledlab-cannot-write-here")  # mkdir fails there, even as root


def refused(result, *words):
    """Exit 2, and stderr's last line is one `tiledlab: error:` line naming `words`, with no traceback."""
    last = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
    return (result.returncode == 2 and "Traceback" not in result.stderr and last.startswith("tiledlab: error: ")
            and all(w in last for w in words))


@pytest.fixture
def never_run(monkeypatch):
    """bench's and tune's runs fail the test: a refusal must come before them."""
    def run(*args, **kwargs):
        raise AssertionError("ran before refusing")
    monkeypatch.setattr(bench, "run", run)
    monkeypatch.setattr(tune, "run", run)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(best.CACHE_ENV, str(tmp_path / "cache"))


# --- python -m tiledlab ----------------------------------------------------------------------------

@pytest.mark.parametrize("kernels, says", [(["tiledd"], "did you mean 'tiled'"), (["best"], "--kernels best")])
def test_tune_refuses_a_kernel_it_cannot_time_in_one_line(kernels, says, tmp_path, cache, never_run, tiledlab_cli):
    result = tiledlab_cli("tune", "--shape", "4x4x4", "--kernels", *kernels, "--out", tmp_path / "out")
    assert refused(result, says), result.stderr  # was a KeyError traceback, exit 4


def test_tune_on_the_simulator_forecasts_and_refuses_days_of_work(tmp_path, cache, never_run, tiledlab_cli):
    result = tiledlab_cli("tune", "--out", tmp_path / "out")  # the defaults: N up to 8192
    assert refused(result, "--shape 64x64x64", "--force"), result.stderr


@pytest.mark.parametrize("argv", [["bench"], ["tune", "--shape", "4x4x4"], ["takeaways"]])
@pytest.mark.parametrize("empty", ["", " "])
def test_an_empty_out_folder_is_refused_not_the_current_folder(argv, empty, cache, never_run, tiledlab_cli):
    assert refused(tiledlab_cli(*argv, "--out", empty), "--out", "empty")


@pytest.mark.skipif(not pathlib.Path("/proc").is_dir(), reason="needs /proc, where no folder can be made")
@pytest.mark.parametrize("argv", [["bench", "--n", "8", "--tile", "4"], ["tune", "--shape", "4x4x4", "--kernels", "tiled"]])
def test_an_out_folder_that_cannot_be_made_fails_before_the_run(argv, cache, never_run, tiledlab_cli):
    assert refused(tiledlab_cli(*argv, "--out", NOT_WRITABLE), str(NOT_WRITABLE))


def test_a_misspelt_command_is_named(tiledlab_cli):
    assert refused(tiledlab_cli("cout"), "did you mean count?")
