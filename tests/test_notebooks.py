"""The notebooks as documents: the kernels they define are the package's, and their stored outputs are clean."""
import inspect
import json
import pathlib
import re

import pytest

from tiledlab.core import kernels, regtile

EDITABLE = {"naive": kernels, "tiled": kernels, "regtile_2d": regtile}  # kernel → the module that defines it

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def code_cells(path):
    return [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def _function(module, name):
    obj = getattr(module, name)
    return getattr(getattr(obj, "code", None), "function", None) or obj.py_func  # a Kernel, or a @cuda.jit kernel


def test_kernel_cells_are_the_package_kernels_word_for_word():
    defined = set()
    for path in NOTEBOOKS:
        for cell in code_cells(path):
            if "kernel-source" not in cell["metadata"].get("tags", []):
                continue
            src = "".join(cell["source"])
            for name in re.findall(r"^def (\w+)\(", src, re.M):
                module = EDITABLE[name]
                assert inspect.getsource(_function(module, name)).rstrip() in src, f"{path.name}: {name} drifted"
                defined.add(name)
                for constant in re.findall(r"^[A-Z]\w* = .*$", src, re.M):
                    assert constant in inspect.getsource(module), f"{path.name}: {constant!r} is not in {module.__name__}"
    assert defined == set(EDITABLE)  # each of these kernels appears in an editable cell


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_outputs_hold_no_errors_or_warnings(path):
    for cell in code_cells(path):
        for out in cell.get("outputs", []):
            assert out["output_type"] != "error", "".join(cell["source"])[:80]
            assert out.get("name") != "stderr", "".join(out.get("text", ""))[:200]
