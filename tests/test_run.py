"""`python -m tools execute`, end to end: a notebook runs top to bottom in a fresh kernel, quietly, and
Colab's install cell is left as committed (how the H200 outputs are stored: no output, count or timing)."""
import subprocess
import sys

import nbformat

from tools import execute


def test_execute_runs_a_notebook_quietly_and_leaves_the_install_cell_as_committed(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", metadata={"tags": [execute.INSTALL_TAG]}),
                nbformat.v4.new_code_cell("print(6 * 7)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "tiny.ipynb"
    nbformat.write(nb, path)
    run = subprocess.run([sys.executable, "-m", "tools", "execute", "--inplace", str(path)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "without encryption" not in run.stderr and "Parent appears to have exited" not in run.stderr
    install, other = nbformat.read(path, as_version=4).cells
    assert install.outputs == [] and install.execution_count is None and "execution" not in install.metadata
    assert other.execution_count == 2 and other.outputs[0]["text"] == "42\n"
