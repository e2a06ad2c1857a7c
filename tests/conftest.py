import importlib.util
import linecache
from types import SimpleNamespace
import pathlib

import numpy as np
import pytest

import tiledlab

gpu_only = pytest.mark.skipif(tiledlab.SIMULATOR, reason="needs a real GPU: the simulator has no caches, "
                                                        "warps or clocks, and its times say nothing of GPU speed")


def source_line(kernel, *as_written):
    """The line number, in its file, of the first line of `kernel` (a numba dispatcher) holding any of
    `as_written`: the line a refusal of that code must name."""
    fn = kernel.py_func
    lines = linecache.getlines(fn.__code__.co_filename)
    return next(n for n in range(fn.__code__.co_firstlineno, len(lines) + 1) if any(c in lines[n - 1] for c in as_written))


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def operands(rng, M, K, N):
    return (rng.standard_normal((M, K), dtype=np.float32), rng.standard_normal((K, N), dtype=np.float32))


class Recording(np.ndarray):
    """An array that logs every scalar index read from it (the simulator keeps the subclass on the
    'device' copy and forwards kernel loads to it). One log for all views: copies keep recording."""
    log = []

    def __getitem__(self, index):
        if isinstance(index, (int, np.integer)):
            Recording.log.append(int(index))
        return super().__getitem__(index)


@pytest.fixture
def recording():
    Recording.log = []
    yield Recording
    Recording.log = []


simulator_only = pytest.mark.skipif(not tiledlab.SIMULATOR, reason="records loads through the simulator's arrays")
needs_jupyterlab = pytest.mark.skipif(importlib.util.find_spec("jupyter_server") is None,
                                      reason="`tiledlab lab` starts JupyterLab, which is not installed here")


@pytest.fixture
def tiledlab_cli(capsys):
    """tiledlab_cli(*args): `python -m tiledlab ARGS` run by cli.main in this process (a subprocess would
    add only an interpreter's start): its returncode, stdout and stderr."""
    from tiledlab import cli

    def run(*args):
        code = cli.main([str(a) for a in args])
        said = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=said.out, stderr=said.err)
    return run


ZH_OUTPUTS = pathlib.Path(__file__).resolve().parent / "data" / "zh_outputs.txt"


def chinese_zh_outputs():
    """The stems of the zh notebooks whose stored outputs come from a Chinese run (tests/data/zh_outputs.txt
    says `chinese`); the others store copies of the English run's. The file must name every zh notebook once."""
    rows = [line.split() for line in ZH_OUTPUTS.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]
    stems = {p.stem for p in (ZH_OUTPUTS.parents[2] / "notebooks" / "zh").glob("*.ipynb")}
    assert sorted(row[0] for row in rows) == sorted(stems) and all(row[1:] in (["chinese"], ["english"]) for row in rows), \
        f"{ZH_OUTPUTS}: one line per zh notebook, its stem and `chinese` or `english`"
    return {row[0] for row in rows if row[1:] == ["chinese"]}


@pytest.fixture(scope="session")
def zh_outputs_chinese():
    """chinese_zh_outputs(): the zh notebooks whose printed text is compared with their stored outputs
    (nbval here, the browser's Run All in tests/browser/test_lab.py)."""
    return chinese_zh_outputs()


def pytest_collection_modifyitems(config, items):
    """The longest files first (pytest-xdist's --dist loadfile hands out whole files in this order), and
    where a zh notebook stores the English run's outputs (tests/data/zh_outputs.txt says `english`),
    nbval runs its cells without comparing their outputs: run, they print Chinese."""
    items[:] = sorted(items, key=_longest_first)  # stable: each file's tests keep their order
    chinese = chinese_zh_outputs()
    for item in items:
        path = pathlib.Path(str(item.fspath))
        if type(item).__name__ == "IPyNbCell" and path.parent.name == "zh" and path.stem not in chinese:
            item.options["check"] = False


# The browser files, longest first (seconds on two busy cores, 2026-12-02): the class server's two tests
# (test_hub.py, with class-report's), the three Run Alls (test_lab.py), the site (two Sphinx builds), slides.
BROWSER = ("test_hub.py", "test_lab.py", "test_site.py", "test_slides.py")
# The unit files of ten seconds or more, longest first (a --durations run); the rest after them, in their
# order: short files last, so that neither worker is left with a long one while the other has nothing.
LONG_UNITS = ("test_nbgrader.py", "test_arch_compile.py", "test_exercises.py", "test_run.py", "test_bench.py", "test_readme.py",
              "test_best.py", "test_dynamic_shared.py", "test_async_rungs.py", "test_zh_reader.py", "test_colab.py",
              "test_plots.py", "test_claims.py", "test_edition.py", "test_regtile.py", "test_fair.py")


def _longest_first(item):
    """Where a file's tests go in the run: the browser files (minutes, a handful of tests), the notebooks
    under nbval (the later lessons take longer), then the unit tests, the long files first. xdist's own order
    (--loadscope-reorder, off in pyproject.toml) puts the files with the most tests first, so the browser's
    few long tests came last and one worker ran them while the other had nothing left to do."""
    path = pathlib.Path(str(item.fspath))
    if path.parent.name == "browser":
        return (0, BROWSER.index(path.name) if path.name in BROWSER else len(BROWSER))
    if path.suffix == ".ipynb":
        return (1, -int(path.name[:2]) if path.name[:2].isdigit() else 0)
    return (2, LONG_UNITS.index(path.name) if path.name in LONG_UNITS else len(LONG_UNITS))
