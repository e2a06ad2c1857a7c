"""The notebooks as documents: the kernels they define are the package's, and their stored outputs are clean."""
import inspect
import json
import pathlib
import re

import pytest

from tiledlab.core import kernels

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def code_cells(path):
    return [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def test_kernel_cells_are_the_package_kernels_word_for_word():
    package = inspect.getsource(kernels)
    defined = set()
    for path in NOTEBOOKS:
        for cell in code_cells(path):
            if "kernel-source" not in cell["metadata"].get("tags", []):
                continue
            src = "".join(cell["source"])
            for name in re.findall(r"^def (\w+)\(", src, re.M):
                assert inspect.getsource(getattr(kernels, name).py_func).rstrip() in src, f"{path.name}: {name} drifted"
                defined.add(name)
            for constant in re.findall(r"^[A-Z]\w* = .*$", src, re.M):
                assert constant in package, f"{path.name}: {constant!r} is not in tiledlab/core/kernels.py"
    assert defined == set(kernels.LESSON_KERNELS)  # each lesson kernel appears in an editable cell


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_outputs_hold_no_errors_or_warnings(path):
    for cell in code_cells(path):
        for out in cell.get("outputs", []):
            assert out["output_type"] != "error", "".join(cell["source"])[:80]
            assert out.get("name") != "stderr", "".join(out.get("text", ""))[:200]
