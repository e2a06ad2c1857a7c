"""The command line refuses bad input in one line (exit 2) and never ends in a bare traceback."""
import pathlib
import re
import subprocess
import sys

import pytest

import tiledlab
from tiledlab import cli
from classroom import cli as classroom_cli
from tools import cli as tools_cli


def refused(result, *words):
    """Exit 2, and stderr's last line is one `tiledlab: error:` line naming `words`, with no traceback."""
    last = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
    return (result.returncode == 2 and "Traceback" not in result.stderr and last.startswith("tiledlab: error: ")
            and all(w in last for w in words))


@pytest.fixture
def a_file(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("not a folder")
    return path


def test_bench_out_under_a_file_is_refused_before_it_runs(a_file, tiledlab_cli):
    result = tiledlab_cli("bench", "--n", "8", "--tile", "4", "--out", str(a_file / "sub"))
    assert refused(result, "--out", str(a_file)), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1  # refused before the forecast and the run


def test_takeaways_out_that_is_a_file_is_refused(a_file, tiledlab_cli):
    result = tiledlab_cli("takeaways", "--out", str(a_file))
    assert refused(result, "--out", "not a folder"), result.stderr
    assert a_file.read_text() == "not a folder"


def test_lab_dest_that_is_a_file_is_refused(a_file, tmp_path, tiledlab_cli):
    src = tmp_path / "notebooks"
    src.mkdir()
    (src / "01_a.ipynb").write_text("{}")
    result = tiledlab_cli("lab", "--src", str(src), "--dest", str(a_file), "--dry-run")
    assert refused(result, str(a_file), "not a folder"), result.stderr


def test_execute_a_missing_notebook_is_refused(tmp_path, capsys):
    assert tools_cli.main(["execute", str(tmp_path / "no-such.ipynb")]) == 2
    assert "no-such.ipynb" in capsys.readouterr().err


def test_execute_times_into_a_folder_is_refused_before_running(tmp_path, capsys):
    assert tools_cli.main(["execute", str(tmp_path / "no-such.ipynb"), "--times", str(tmp_path)]) == 2
    assert "--times" in capsys.readouterr().err


def test_count_too_large_for_memory_is_refused_before_allocating(tiledlab_cli):
    result = tiledlab_cli("count", "--n", "100000")
    assert refused(result, "GiB", "--n"), result.stderr


def test_count_memory_forecast_grows_like_n_squared_and_counts_the_buffers():
    small, large = cli.count_bytes(1024, 8), cli.count_bytes(2048, 8)
    assert 3.9 < large / small < 4.1
    # A, B, C as float32 and, for tiled, at least three int64 maps of N×N (loads of A, B and C)
    assert small > 3 * 4 * 1024**2 + 3 * 8 * 1024**2


@pytest.mark.skipif(not tiledlab.SIMULATOR, reason="the forecast is for the simulator")
def test_count_forecasts_its_time_on_the_simulator(tiledlab_cli):
    """The forecast scales one timed launch, so a busy machine may say "about 1 s": its form is tested, not its
    number (test_a_forecast_says_its_seconds_or_under_a_second tests the wording of each)."""
    result = tiledlab_cli("count", "--n", "12", "--tile", "4", "--json")
    assert result.returncode == 0 and "{" not in result.stderr
    forecast = r"^CUDA simulator: this count should take (under a second|about [\d,]+ s) "
    assert re.search(forecast, result.stderr, re.M), result.stderr


@pytest.mark.parametrize("seconds, said", [(0.4, "should take under a second"), (42.4, "should take about 42 s")])
def test_a_forecast_says_its_seconds_or_under_a_second(seconds, said, capsys):
    cli._simulator_forecast(seconds, "this count", "use --n 64 or less", force=False)
    assert said in capsys.readouterr().err


@pytest.mark.skipif(not tiledlab.SIMULATOR, reason="the forecast is for the simulator")
def test_a_count_that_would_take_hours_on_the_simulator_is_refused(tiledlab_cli):
    result = tiledlab_cli("count", "--n", "1024")
    assert refused(result, "on the simulator", "--force", "--n"), result.stderr


def test_repeated_kernels_keep_every_value(tmp_path, tiledlab_cli):
    result = tiledlab_cli("bench", "--kernels", "no_such_kernel", "--kernels", "tiled", "--out", str(tmp_path))
    assert refused(result, "no_such_kernel"), result.stderr
    args = cli.parser().parse_args(["tune", "--kernels", "a", "b", "--kernels", "c"])
    assert args.kernels == ["a", "b", "c"]


def test_argparse_errors_are_one_line(capsys):
    assert cli.main(["count", "--n", "zero"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tiledlab: error: ") and "N must be a whole number" in err[0]


def test_help_documents_the_exit_codes():
    text = subprocess.run([sys.executable, "-m", "tiledlab", "--help"], capture_output=True, text=True,
                          timeout=120).stdout  # end to end: the entry point and argparse's help
    assert all(f"{code} " in text for code in "01234") and "bad input" in text and "please report" in text
    assert "5  " in tools_cli.parser().format_help()  # execute's: a notebook's own cell failed


@pytest.mark.parametrize("error,code,words", [
    (ValueError("tile must be from 1 to 32"), 2, "tile must be from 1 to 32"),
    (MemoryError(), 2, "not enough memory"),
    (PermissionError(13, "Permission denied", "/root/out"), 2, "/root/out"),
    (IsADirectoryError(21, "Is a directory", "out"), 2, "out"),
    (FileNotFoundError("no notebooks in x"), 2, "no notebooks in x"),
    (OSError(28, "No space left on device", "out/bench.csv"), 2, "No space left"),
])
def test_each_kind_of_bad_input_exits_2_in_one_line(monkeypatch, capsys, error, code, words):
    def fail(args):
        raise error
    monkeypatch.setitem(cli.HANDLERS, "info", fail)
    assert cli.main(["info"]) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tiledlab: error: ") and words in err[0]


def test_cannot_run_here_exits_3(monkeypatch, capsys):
    from tiledlab.experiments import Unavailable

    def fail(args):
        raise Unavailable("ncu (Nsight Compute) is not on PATH")
    monkeypatch.setitem(cli.HANDLERS, "info", fail)
    assert cli.main(["info"]) == 3 and "not on PATH" in capsys.readouterr().err


def test_an_unexpected_error_is_a_bug_with_a_traceback_not_exit_1(monkeypatch, capsys):
    def fail(args):
        raise KeyError("latency row")
    monkeypatch.setitem(cli.HANDLERS, "info", fail)
    assert cli.main(["info"]) == 4
    err = capsys.readouterr().err
    assert "Traceback" in err and "KeyError" in err and "please report" in err


def test_free_memory_is_known_on_either_backend(monkeypatch):
    on_this_backend = cli._free_bytes()
    monkeypatch.setattr(cli, "SIMULATOR", not cli.SIMULATOR)  # the other branch: device memory too, or not
    for free in (on_this_backend, cli._free_bytes()):
        assert 2**20 < free < float("inf")


@pytest.mark.parametrize("command, home", [("slides", "classroom"), ("class-report", "classroom"), ("ladder", "tools")])
def test_a_command_that_moved_out_of_the_package_says_where_it_is(command, home, tiledlab_cli):
    result = tiledlab_cli(command, "--out", "x")
    assert refused(result, f"python -m {home} {command}", "clone"), result.stderr


@pytest.mark.parametrize("command", sorted(set(classroom_cli.HANDLERS) | set(tools_cli.HANDLERS)))
def test_every_command_of_a_clone_is_pointed_to_though_the_package_lists_only_its_own(command, capsys):
    assert command not in cli.HANDLERS
    assert cli.main([command]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert all(f"python -m {home} {command}" in last for home in ("classroom", "tools")) and "clone" in last, last


def test_classroom_run_by_a_python_without_tiledlabs_packages_says_which_to_use():
    """The guide's `python -m classroom class-report` with a `python` that is not the clone's environment (none
    activated): one line naming the environment to use, exit 3, not numba's ModuleNotFoundError traceback."""
    result = subprocess.run([sys.executable, "-S", "-m", "classroom", "class-report", "my-class"],  # -S: no packages
                            cwd=pathlib.Path(__file__).parents[1], capture_output=True, text=True, timeout=60)
    assert result.returncode == 3 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("tiledlab: error: cannot run here: ")
    assert ".venv/bin/python -m classroom" in result.stderr
