"""What runs on Colab's free GPU, a Tesla T4 (compute capability 7.5), derived from the code: a kernel that
issues cp.async (tiledlab.core.ptx) needs 8.0 and is refused with that reason; every other kernel of the
registry runs. Notebooks 0 to 6 use none of the refused kernels; notebook 7 names some, and on the T4 the
simulator models (TILEDLAB_CARD=t4) it still runs to its end, printing the refusal where each would run
(the slow test). docs/classroom.md states these counts; a test here holds it to them."""
import pathlib
import re

import nbformat
import pytest

from tiledlab.core import card as cards
from tiledlab.core.registry import KERNELS

ROOT = pathlib.Path(__file__).resolve().parents[1]
T4 = cards.KNOWN["t4"]
CP_ASYNC = "cp.async needs compute capability 8.0 or higher"


def refused():
    return {name: kernel.refusal(T4) for name, kernel in KERNELS.items() if kernel.refusal(T4)}


def code(path):
    return "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")


def test_a_t4_refuses_exactly_the_kernels_that_issue_cp_async():
    assert T4.compute_capability == (7, 5)
    found = refused()
    assert found and all(CP_ASYNC in why for why in found.values()), found
    assert set(found) == {n for n, k in KERNELS.items() if k.compute_capability == cards.CP_ASYNC}


def test_only_notebook_7_names_a_kernel_the_t4_refuses():
    names = set(refused())
    naming = {path.stem: sorted(n for n in names if re.search(rf"\b{n}\b", code(path)))
              for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))}
    assert {stem for stem, found in naming.items() if found} == {"07_register_tiling"}, naming


def test_the_guide_states_what_runs_on_a_t4():
    guide = " ".join((ROOT / "docs" / "classroom.md").read_text().split())
    runs, total = len(KERNELS) - len(refused()), len(KERNELS)
    assert f"{runs} of the registry's {total} kernels run on a T4" in guide
    assert f"the {total - runs} refused all issue cp.async" in guide
    named = [n for n in refused() if re.search(rf"\b{n}\b", code(ROOT / "notebooks" / "07_register_tiling.ipynb"))]
    assert f"Notebook 7 names {len(named)} of them" in guide


@pytest.mark.slow
def test_notebook_7_runs_to_its_end_on_a_t4_saying_what_it_refuses(monkeypatch):
    import nbclient
    path = ROOT / "notebooks" / "07_register_tiling.ipynb"
    nb = nbformat.read(path, as_version=4)
    monkeypatch.setenv("TILEDLAB_CARD", "t4")  # the notebook's kernel inherits them
    monkeypatch.setenv("TILEDLAB_BACKEND", "simulator")
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    said = "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    shown = set(re.findall(r"(\w+): Tesla T4 \(sm_75, 40 SMs\) cannot run it: " + re.escape(CP_ASYNC), said))
    assert shown and shown <= set(refused()), said[-2000:]
