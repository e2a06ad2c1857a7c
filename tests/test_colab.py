"""Every notebook opens on Colab and Binder: its links cell and its Colab install cell agree with
pyproject.toml's one repository address, the install cell does nothing off Colab, and on "Colab"
(COLAB_RELEASE_TAG set, this checkout as the install source) it installs a working tiledlab into a
fresh virtual environment.

The last test is slow (a full pip install, about 1.5 minutes): it runs once per suite, and
`-m "not slow"` leaves it out.
"""
import ast
import contextlib
import importlib.metadata
import io
import json
import os
import pathlib
import re
import subprocess
import sys
import time

import nbformat
import pytest
from packaging.version import Version

from tools import cli as tools_cli
from tools import execute, links
from tools.edition import generate

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PYENV_312 = sorted(pathlib.Path.home().glob(".pyenv/versions/3.12*/bin/python"))


def tagged(nb, tag):
    return [i for i, c in enumerate(nb.cells) if tag in c.metadata.get("tags", [])]


def install_cell():
    nb = nbformat.read(NOTEBOOKS[0], as_version=4)
    return nb.cells[tagged(nb, execute.INSTALL_TAG)[0]].source


def test_the_repository_is_named_once_in_pyproject():
    text = (ROOT / "pyproject.toml").read_text()
    assert len(re.findall(r"https://github\.com/", text)) == 1
    repo, version = links.project(ROOT)
    assert re.fullmatch(r"[\w.-]+/[\w.-]+", repo) and version


def check_online_cells(path, repo, version):
    """The notebook's second cell says how to run it, its third installs tiledlab on Colab, both naming
    `repo`; an unpublished series (the placeholder address) offers no link, since none could work."""
    nb = nbformat.read(path, as_version=4)
    stem = path.stem
    want = links.online_cells(stem, repo, version)
    zh = path.parent.name == "zh"
    if zh:  # the Chinese edition copies the English cells, its links pointed at zh/
        want[links.LINKS_TAG] = generate.links_cell(want[links.LINKS_TAG])
    assert tagged(nb, links.LINKS_TAG) == [1] and tagged(nb, execute.INSTALL_TAG) == [2], path
    online, install = nb.cells[1], nb.cells[2]
    assert online.cell_type == "markdown" and online.source == want[links.LINKS_TAG], path
    assert install.cell_type == "code", path
    if zh:  # ... and the install cell's comments translated, every statement as in the English one
        assert ast.dump(ast.parse(install.source)) == ast.dump(ast.parse(links.in_chinese(want[execute.INSTALL_TAG]))), path
        assert '"TILEDLAB_LANG", "zh"' in install.source and "restarting" not in install.source, path
    else:
        assert install.source == want[execute.INSTALL_TAG], path
    assert install.outputs == [] and install.execution_count is None
    assert install.metadata == links.INSTALL_METADATA, path  # folded in JupyterLab, off the site
    assert "folded cell below installs tiledlab on Colab" in online.source, path  # its purpose, one line above it
    assert f'"git+https://github.com/{repo}@v{version}"' in install.source
    urls = re.findall(r"\((https://[^)]+)\)", online.source)
    folder = "notebooks/zh" if path.parent.name == "zh" else "notebooks"
    if repo == links.PLACEHOLDER:
        assert urls == [] and "http" not in online.source and "python -m tiledlab lab" in online.source, path
    else:  # the notebook's own path, literally (the Chinese edition's are notebooks/zh/<stem>.ipynb)
        assert urls == [f"https://colab.research.google.com/github/{repo}/blob/v{version}/{folder}/{stem}.ipynb",
                        f"https://mybinder.org/v2/gh/{repo}/v{version}?urlpath=lab/tree/{folder}/{stem}.ipynb"], path
    assert "<img" not in online.source and "![" not in online.source  # no remote badge images (the site is offline)
    # The install cell is the first code cell, before the one that imports tiledlab.
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[0] is install and "import tiledlab" in code[1].source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_links_and_install_cell_follow_the_title_and_agree_with_pyproject(path):
    check_online_cells(path, *links.project(ROOT))


def test_links_command_rewrites_a_stale_notebook_and_leaves_a_current_one(tmp_path):
    copy = tmp_path / NOTEBOOKS[1].name
    copy.write_bytes(NOTEBOOKS[1].read_bytes())
    assert not links.write_online_cells(copy, *links.project(ROOT))  # the committed notebook agrees
    assert copy.read_bytes() == NOTEBOOKS[1].read_bytes()
    assert links.write_online_cells(copy, "someone/fork", "9.9.9")
    check_online_cells(copy, "someone/fork", "9.9.9")
    assert len(nbformat.read(copy, as_version=4).cells) == len(nbformat.read(NOTEBOOKS[1], as_version=4).cells)
    assert links.write_online_cells(copy, links.PLACEHOLDER, "9.9.9")  # and back
    check_online_cells(copy, links.PLACEHOLDER, "9.9.9")


def git(*args, cwd):
    return subprocess.run(["git", "-c", "user.name=Teacher", "-c", "user.email=teacher@example.org", *args],
                          cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_publishing_on_a_bare_repository_names_it_in_every_notebook(tmp_path, monkeypatch):
    """tools/README.md's "Publishing" steps, on a local bare repository standing in for GitHub: after
    `links --repo`, the commit, the tag and the push, a fresh clone's notebooks (both editions), install
    cells and pyproject all name the new address."""
    bare, clone, fresh = tmp_path / "series.git", tmp_path / "clone", tmp_path / "fresh"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    git("clone", "-q", str(ROOT), str(clone), cwd=tmp_path)
    monkeypatch.setattr(links, "CHECKOUT", clone)  # `python -m tools links` run in the clone
    assert tools_cli.main(["links", "--repo", "teacher/series"]) == 0
    version = links.project(clone)[1]
    git("commit", "-qam", "published as teacher/series", cwd=clone)
    git("tag", f"v{version}", cwd=clone)
    git("push", "-q", str(bare), "HEAD:refs/heads/main", "--tags", cwd=clone)
    git("clone", "-q", "--branch", f"v{version}", str(bare), str(fresh), cwd=tmp_path)
    assert links.project(fresh) == ("teacher/series", version)
    published = sorted((fresh / "notebooks").glob("*.ipynb")) + sorted((fresh / "notebooks" / "zh").glob("*.ipynb"))
    assert len(published) == len(NOTEBOOKS) + len(list((ROOT / "notebooks" / "zh").glob("*.ipynb")))
    for path in published:
        check_online_cells(path, "teacher/series", version)
    assert (fresh / "pyproject.toml").read_text().count("#") == (ROOT / "pyproject.toml").read_text().count("#")


def test_off_colab_the_install_cell_prints_nothing_and_runs_nothing(monkeypatch):
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    ran = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: ran.append(a))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        exec(install_cell(), {})
    assert out.getvalue() == "" and ran == []


@pytest.mark.parametrize("edition,said", [("", "en"), ("zh", "zh")])
def test_on_colab_the_install_cell_makes_tiledlab_speak_its_editions_language(edition, said, monkeypatch, tmp_path):
    """Colab opens a notebook in /content, where no LANGUAGE file says the edition: the install cell does."""
    nb = nbformat.read(ROOT / "notebooks" / edition / NOTEBOOKS[1].name, as_version=4)
    monkeypatch.setenv("COLAB_RELEASE_TAG", "test")
    monkeypatch.delenv("TILEDLAB_LANG", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: None)  # no pip here: nothing changes, no restart ...
    monkeypatch.setattr(importlib.metadata, "distributions", lambda: [])  # ... even where two copies of one are installed
    exec(nb.cells[tagged(nb, execute.INSTALL_TAG)[0]].source, {})
    from tiledlab.i18n import _, language
    assert language() == said and (_("Passed.") != "Passed.") == (said == "zh")


# Runs the install cell as Colab would, in the fresh environment's own Python, with a stand-in for
# IPython's get_ipython() that records a restart. `preload` is imported first, as Colab preloads numpy.
DRIVER = """
import json, sys
for name in sys.argv[2:]:
    __import__(name)
restarts = []
class Kernel:
    def do_shutdown(self, restart):
        restarts.append(restart)
class Shell:
    kernel = Kernel()
exec(open(sys.argv[1]).read(), {"get_ipython": Shell})
print("RESTARTS", json.dumps(restarts))
"""
CHECK = """
import numpy as np, tiledlab
from tiledlab.counting import count_loads
A = np.ones((8, 8), np.float32)
assert np.allclose(tiledlab.matmul(A, A, kernel="tiled", tile=4), A @ A)
print(json.dumps({"simulator": tiledlab.SIMULATOR, "tiled_loads": count_loads("tiled", A, A, tile=4).total}))
""".replace("json.dumps", "__import__('json').dumps")


LINKED = """
import json, warnings
from tiledlab.backend import host_linking, link_on_host
link_on_host()
warnings.simplefilter("ignore")
from cuda.core import Linker
print(json.dumps([host_linking()[0], str(Linker.which_backend())]))
"""


@pytest.mark.parametrize("installed, wanted", [
    ({"nvidia-cuda-nvcc-cu12": "12.9.86"}, "nvidia-nvjitlink-cu12>=12.9"),  # no nvJitLink: the driver would link
    ({"nvidia-cuda-nvcc-cu12": "12.9.86", "nvidia-nvjitlink-cu12": "12.6.85"}, "nvidia-nvjitlink-cu12>=12.9"),
    ({"nvidia-cuda-nvcc-cu12": "12.9.86", "nvidia-nvjitlink-cu12": "12.9.86"}, ""),
    ({"nvidia-cuda-nvcc-cu12": "12.6.77", "nvidia-nvjitlink-cu12": "12.9.86"}, ""),
    ({"nvidia-nvvm": "13.1.80", "nvidia-nvjitlink": "13.0.88"}, "nvidia-nvjitlink>=13.1"),
    ({}, ""),  # no NVVM wheel: the system's toolkit, nothing to match
])
def test_kernels_are_linked_on_the_host_by_an_nvjitlink_as_new_as_nvvm(installed, wanted, monkeypatch):
    """Colab's T4 driver (550, PTX ISA 8.4) refuses the PTX of a newer NVVM; nvJitLink links it into a cubin on the
    host, which the driver loads. An nvJitLink older than NVVM (torch pins one) cannot read its PTX either."""
    from tiledlab import backend
    monkeypatch.setattr(backend, "_release", lambda dist: tuple(int(x) for x in installed[dist].split(".")[:2])
                        if dist in installed else None)
    assert backend.host_linking()[0] == wanted
    ran = []
    monkeypatch.setattr(subprocess, "run", lambda command, **kw: ran.append(command))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        backend.link_on_host()
    assert ran == ([[sys.executable, "-m", "pip", "install", "-q", wanted]] if wanted else [])
    assert out.getvalue() == backend.host_linking()[1] + (f" (installed {wanted})" if wanted else "") + "\n"
    assert ("kernels are linked on this host" in out.getvalue()) == (wanted == "" and installed != {})


@pytest.mark.slow
def test_on_colab_the_install_cell_installs_a_working_tiledlab_into_a_fresh_venv(tmp_path):
    """A fresh venv (Python 3.12 from ~/.pyenv when there, Colab's recent Python), COLAB_RELEASE_TAG
    set, this checkout as the source: the cell installs tiledlab[cuda12], which imports and runs on the
    simulator. An old tqdm installed and imported first must be replaced and reported as stale, with a
    restart asked for, as a preloaded numpy would be on Colab."""
    python = str(PYENV_312[-1]) if PYENV_312 else sys.executable
    venv = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    subprocess.run([py, "-m", "pip", "install", "-q", "tqdm==4.59.0"], check=True, env=env, capture_output=True)
    (tmp_path / "cell.py").write_text(install_cell())
    (tmp_path / "driver.py").write_text(DRIVER)
    env.update(COLAB_RELEASE_TAG="release-colab-test", TILEDLAB_COLAB_SOURCE=ROOT.as_uri(),
               TILEDLAB_BACKEND="simulator")
    started = time.monotonic()
    done = subprocess.run([py, str(tmp_path / "driver.py"), str(tmp_path / "cell.py"), "tqdm"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600)
    installed_s = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pip changed tqdm, already imported: restarting the runtime" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "RESTARTS [true]"
    # After the "restart" (a new process), tiledlab imports and runs; the extra's numpy pin holds.
    check = subprocess.run([py, "-c", CHECK], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr
    assert json.loads(check.stdout.strip().splitlines()[-1]) == {"simulator": True, "tiled_loads": 2 * 8 ** 3 // 4}
    versions = subprocess.run([py, "-c", "import importlib.metadata as m; print(m.version('numpy'), "
                               "m.version('numba-cuda'), m.version('tqdm'))"], env=env, capture_output=True,
                              text=True, check=True).stdout.split()
    assert Version(versions[0]) < Version("2.5") and versions[1].startswith("0.30.") and versions[2] != "4.59.0", versions
    # Kernels linked on the host (tiledlab.backend.link_on_host, which the install cell runs): nvJitLink as new as
    # NVVM, and cuda.core's linker is nvJitLink, not the driver (that would compile PTX newer than Colab's driver)
    linked = subprocess.run([py, "-c", LINKED], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert linked.returncode == 0, linked.stdout + linked.stderr
    assert linked.stdout.strip().splitlines()[-1] == '["", "nvJitLink"]', linked.stdout
    again = subprocess.run([py, str(tmp_path / "driver.py"), str(tmp_path / "cell.py"), "numpy"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=300)
    # Run again: nothing changes, so nothing is reported and no restart is asked for; the cell says how kernels link.
    lines = again.stdout.strip().splitlines()
    assert again.returncode == 0 and len(lines) == 2 and lines[1] == "RESTARTS []", again.stdout + again.stderr
    assert "kernels are linked on this host" in lines[0], lines
    print(f"install {installed_s:.0f} s")
