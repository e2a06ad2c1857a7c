"""The "Run it online" cell and Colab's install cell of every notebook, from pyproject.toml.

The repository's address lives in one place, pyproject.toml's [project.urls] Repository; the links and
the install cell name one reference, the release tag v<version> (`ref`), so what Colab or Binder opens is
the notebook of the release that Colab's install cell installs, not whatever main holds since. A notebook
cannot import tiledlab before it is installed, so each notebook holds both literally: `python -m tools links` writes them, and tests/test_colab.py checks they agree.
"""
import copy
import pathlib
import re
import tomllib

import tomlkit

from classroom.series import read_notebook

CHECKOUT = pathlib.Path(__file__).resolve().parents[1]  # the clone
GITHUB = "https://github.com/"
PLACEHOLDER = "OWNER/tiledlab"  # pyproject's address until the series is published
LINKS_TAG = "links"  # the cell of links: translated with its URLs kept (tools/edition)
INSTALL_TAG = "colab-install"  # Colab's install cell: a no-op elsewhere, left as committed by `execute`

LINKS_CELL = """\
**Run it online:** [Open in Colab](https://colab.research.google.com/github/{repo}/blob/{ref}/notebooks/{stem}.ipynb)
(an NVIDIA GPU, chosen in Runtime › Change runtime type) ·
[Open in Binder](https://mybinder.org/v2/gh/{repo}/{ref}?urlpath=lab/tree/notebooks/{stem}.ipynb)
(no GPU: numba's CUDA simulator). The folded cell below installs tiledlab on Colab; elsewhere it does nothing."""
#: The same cell while the repository has no public address: links there could only fail.
UNPUBLISHED_CELL = """\
**Run it:** in the series' folder, `python -m tiledlab lab` opens the notebooks in JupyterLab (the README
says how to install it first); on a class server, open `{stem}.ipynb` from JupyterLab's file list.
The folded cell below installs tiledlab on Colab once the series is published; here it does nothing."""
#: The install cell's metadata: folded in JupyterLab (its purpose is the links cell's last line), left off the site.
INSTALL_METADATA = {"jupyter": {"source_hidden": True}, "tags": [INSTALL_TAG, "remove-cell"]}

INSTALL_CELL = """\
# On Google Colab only (it sets COLAB_RELEASE_TAG): install tiledlab, at the release these notebooks
# were written for, with the CUDA 12 libraries numba-cuda compiles and links with. Anywhere else: nothing.
import os
if os.environ.get("COLAB_RELEASE_TAG"):
    import importlib.metadata as md, subprocess, sys
    os.environ.setdefault("TILEDLAB_LANG", "en")
    source = os.environ.get("TILEDLAB_COLAB_SOURCE", "git+https://github.com/{repo}@{ref}")
    had = {{d.name: d.version for d in md.distributions()}}
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", f"tiledlab[cuda12] @ {{source}}"], check=True)
    # kernels linked into cubins here (nvJitLink as new as NVVM): Colab's driver never compiles newer PTX
    subprocess.run([sys.executable, "-c", "from tiledlab.backend import link_on_host; link_on_host()"], check=True)
    changed = {{d.name for d in md.distributions() if had.get(d.name) != d.version}}
    stale = sorted(m for m, d in md.packages_distributions().items() if m in sys.modules and changed & set(d))
    if stale:  # imported before the install (Colab preloads numpy): the old version stays in use
        print(f"pip changed {{', '.join(stale)}}, already imported: restarting the runtime; run all cells again.")
        get_ipython().kernel.do_shutdown(restart=True)"""
#: What differs in the Chinese edition's install cell besides its comments: the language and the one message.
ZH_INSTALL = {'"TILEDLAB_LANG", "en"': '"TILEDLAB_LANG", "zh"',
              "pip changed {', '.join(stale)}, already imported: restarting the runtime; run all cells again.":
              "pip 更新了已经导入的 {', '.join(stale)}：正在重启运行时，请重新运行全部单元格。"}


def in_chinese(install):
    """The Chinese edition's install cell of the English one, `install` (its comments translated or not)."""
    for english, chinese in ZH_INSTALL.items():
        install = install.replace(english, chinese)
    return install


def _pyproject(checkout):
    path = pathlib.Path(checkout) / "pyproject.toml"
    if not path.is_file():
        raise FileNotFoundError(f"no pyproject.toml in {checkout}: run `links` from a clone of the series")
    return path


def project(checkout=CHECKOUT):
    """(owner/name, version) from the checkout's pyproject.toml."""
    path = _pyproject(checkout)
    meta = tomllib.loads(path.read_text())["project"]
    url = meta.get("urls", {}).get("Repository", "")
    if not url.startswith(GITHUB):
        raise ValueError(f"{path}: [project.urls] Repository must be {GITHUB}owner/name, not {url!r}")
    return url.removeprefix(GITHUB), meta["version"]


def set_repository(repo, checkout=CHECKOUT):
    """Write `repo` (owner/name) as pyproject.toml's Repository URL, keeping the rest as it is (tomlkit)."""
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo) or {".", ".."} & set(repo.split("/")):
        raise ValueError(f"--repo {repo!r}: give the GitHub repository as owner/name")
    path = _pyproject(checkout)
    project(checkout)  # a Repository URL to replace
    doc = tomlkit.parse(path.read_text())
    doc["project"]["urls"]["Repository"] = GITHUB + repo
    path.write_text(tomlkit.dumps(doc))


def ref(version):
    """The one git reference the links open and Colab installs: the release's tag."""
    return f"v{version}"


def online_cells(stem, repo, version):
    """{tag: source} of the two cells a notebook carries after its title."""
    links = UNPUBLISHED_CELL if repo == PLACEHOLDER else LINKS_CELL
    return {LINKS_TAG: links.format(repo=repo, stem=stem, ref=ref(version)),
            INSTALL_TAG: INSTALL_CELL.format(repo=repo, ref=ref(version))}


def write_online_cells(path, repo, version):
    """Put the links cell and the install cell right after the title cell of one notebook (nbformat),
    replacing the ones it has; True if the file changed."""
    import nbformat
    nb = read_notebook(path)
    want = online_cells(pathlib.Path(path).stem, repo, version)
    kept = [c for c in nb.cells if not set(c.metadata.get("tags", [])) & set(want)]
    had = [c for c in nb.cells if c not in kept]
    new = [nbformat.v4.new_markdown_cell(want[LINKS_TAG], metadata={"tags": [LINKS_TAG]}),
           nbformat.v4.new_code_cell(want[INSTALL_TAG], metadata=copy.deepcopy(INSTALL_METADATA))]
    for cell, old in zip(new, had):  # keep the ids of cells that were there
        cell.id = old.id
    if [(c.cell_type, c.source, c.metadata) for c in had] == [(c.cell_type, c.source, c.metadata) for c in new]:
        return False
    nb.cells = kept[:1] + new + kept[1:]
    nbformat.write(nb, path)
    return True


def links(repo=None, checkout=None):
    """Set the repository (owner/name) in pyproject.toml when given, then rewrite every notebook's two
    cells of the clone `checkout` (default: this one): (owner/name, version, the notebooks changed)."""
    checkout = checkout or CHECKOUT
    if repo is not None:  # an empty --repo "" is a mistake too, not "leave it as it is"
        set_repository(repo, checkout)
    repo, version = project(checkout)
    notebooks = sorted((pathlib.Path(checkout) / "notebooks").glob("*.ipynb"))
    return repo, version, [p.name for p in notebooks if write_online_cells(p, repo, version)]
