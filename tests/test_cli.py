"""python -m tiledlab's commands, in this process (cli.main), but for one run of the real entry point."""
import csv
import json
import pathlib
import re
import subprocess
import sys
import tomllib
from types import SimpleNamespace

import pytest
from conftest import gpu_only

import tiledlab
from tiledlab import cli as command_line
from tools.measure import latency


def test_info_names_backend_and_versions():
    """The one end-to-end run: `python -m tiledlab` (tiledlab/__main__.py) in a process of its own."""
    done = subprocess.run([sys.executable, "-m", "tiledlab", "info"], capture_output=True, text=True, timeout=300)
    out = done.stdout
    assert done.returncode == 0, done.stderr
    assert ("CUDA simulator" in out) == tiledlab.SIMULATOR
    assert "numba:" in out and "numba-cuda:" in out and "numpy:" in out


def test_version_and_help_name_what_is_installed_and_every_exit_code(capsys):
    for flag in ("--version", "--help"):
        with pytest.raises(SystemExit) as done:
            command_line.main([flag])
        assert done.value.code == 0
    out = capsys.readouterr().out
    pyproject = tomllib.loads((pathlib.Path(tiledlab.__file__).parents[1] / "pyproject.toml").read_text())
    assert out.startswith(f"tiledlab {pyproject['project']['version']}\n")
    assert re.findall(r"^  (\d)  ", out, flags=re.MULTILINE) == list("01234")  # the README's, tools' 5 apart


def test_a_clone_pip_never_installed_says_its_version_too(monkeypatch):
    """On PYTHONPATH (a GPU machine's --target install, a clone) pip recorded nothing: the clone's pyproject says."""
    from importlib import metadata

    def unrecorded(name):
        raise metadata.PackageNotFoundError(name)
    monkeypatch.setattr(metadata, "version", unrecorded)
    pyproject = tomllib.loads((pathlib.Path(tiledlab.__file__).parents[1] / "pyproject.toml").read_text())
    assert command_line.version() == pyproject["project"]["version"]


def test_count_json_reports_measured_equal_to_formula(tiledlab_cli):
    run = tiledlab_cli("count", "--n", "32", "--tile", "8", "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {"naive": {"measured": 65536, "formula": 65536},
                                      "tiled": {"measured": 8192, "formula": 8192}}


def test_count_table(tiledlab_cli):
    run = tiledlab_cli("count", "--n", "12", "--tile", "4")
    assert run.returncode == 0 and "naive / tiled = 4 (T = 4)" in run.stdout and "NO" not in run.stdout
    run = tiledlab_cli("count", "--n", "16", "--tile", "3")  # 2N³ / (2N²·⌈N/T⌉): not T where T does not divide N
    assert run.returncode == 0 and "naive / tiled = 2.66667 (N / ⌈N/T⌉ = 16/6: T = 3 leaves" in run.stdout


def test_bad_tile_is_a_clear_error(tiledlab_cli):
    run = tiledlab_cli("count", "--n", "8", "--tile", "40")
    assert run.returncode == 2 and "1600 threads per block" in run.stderr


def test_bench_writes_csv_and_png(tiledlab_cli, tmp_path):
    run = tiledlab_cli("bench", "--n", "8", "16", "--tile", "4", "--repeats", "2", "--warmup", "1", "--out", str(tmp_path))
    assert run.returncode == 0, run.stderr
    rows = list(csv.DictReader(open(tmp_path / "bench.csv")))
    assert {(r["kernel"], r["N"]) for r in rows} >= {("naive", "8"), ("tiled", "16")}
    assert all(r["backend"] == tiledlab.BACKEND and r["date"] and r["numba"] for r in rows)
    assert all(float(r["rel_err"]) < 1e-5 for r in rows)
    assert (tmp_path / "bench.png").stat().st_size > 1000
    assert "16/" in run.stderr or "done" in run.stderr  # the progress bar
    header = run.stdout.splitlines()[0].split()
    assert ("TFLOP/s" in header) != tiledlab.SIMULATOR and "ms" in header  # Python's threads: milliseconds, no 0.000


@pytest.fixture
def tools_cli(capsys):
    """`python -m tools ARGS` (the maintainers' measure) run by tools.cli.main in this process."""
    from tools import cli

    def run(*args):
        code = cli.main([str(a) for a in args])
        said = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=said.out, stderr=said.err)
    return run


@pytest.mark.skipif(not tiledlab.SIMULATOR, reason="checks the simulator's refusal")
def test_measure_refuses_on_the_simulator(tools_cli, tmp_path):
    run = tools_cli("measure", "--out", str(tmp_path), "--quick")
    assert run.returncode == 3 and "needs a real GPU" in run.stderr  # 3: cannot run here (cli's convention)


@gpu_only
@pytest.mark.alone  # other workers' kernels on the card made shared memory read slower than DRAM (H100, 14 workers)
def test_measure_quick_on_gpu(tools_cli, tmp_path):
    run = tools_cli("measure", "--out", str(tmp_path), "--quick")
    assert run.returncode == 0, run.stderr
    rows = list(csv.DictReader(open(tmp_path / "latency.csv")))
    names = [case[0] for case in latency.cases(int(rows[0]["l2_bytes"]))]  # the level names measure writes
    lat = {r["level"]: float(r["ns_per_load"]) for r in rows if r["index"] == "uint32"}
    assert list(lat) == names
    assert lat[names[0]] < lat[names[-1]]  # shared memory is faster than the cold 2 GiB DRAM ring


@pytest.mark.parametrize("args,message", [
    (("bench", "--n", "0"), "N must be a whole number of at least 1, got 0"),
    (("bench", "--repeats", "0"), "repeats must be a whole number of at least 1"),
    (("count", "--n", "-4"), "N must be a whole number of at least 1"),
    (("bench", "--warmup", "-1"), "warm-up launches must be a whole number of at least 0"),
    (("bench", "--n", "8.5"), "N must be a whole number of at least 1, got '8.5'"),
])
def test_bad_numbers_are_refused_with_a_message(args, message, tiledlab_cli):
    run = tiledlab_cli(*args)
    assert run.returncode == 2 and message in run.stderr and "Traceback" not in run.stderr


def test_help_describes_every_option_with_its_default(capsys):
    with pytest.raises(SystemExit):
        command_line.main(["bench", "--help"])
    text = capsys.readouterr().out
    assert "(default: 10)" in text and "(default: 2)" in text and "timed launches per point" in text
    assert "by backend" in text


@pytest.mark.skipif(not tiledlab.SIMULATOR, reason="the forecast is for the simulator")
def test_a_simulator_bench_that_would_take_hours_is_refused_before_it_starts(tiledlab_cli, tmp_path):
    run = tiledlab_cli("bench", "--n", "1024", "2048", "--tile", "8", "16", "32", "--out", str(tmp_path))
    assert run.returncode == 2 and "hours on the simulator" in run.stderr and "--force" in run.stderr
    assert not (tmp_path / "bench.csv").exists()
