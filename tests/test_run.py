"""`python -m tools execute`: a notebook runs top to bottom, quietly."""
import json
import subprocess
import sys


def test_execute_runs_a_notebook_without_the_tcp_warning(tmp_path):
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": "a", "metadata": {}, "outputs": [],
                     "source": "print(6 * 7)"}],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "tiny.ipynb"
    path.write_text(json.dumps(nb))
    run = subprocess.run([sys.executable, "-m", "tools", "execute", "--inplace", str(path)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "without encryption" not in run.stderr and "Parent appears to have exited" not in run.stderr
    assert "".join(json.loads(path.read_text())["cells"][0]["outputs"][0]["text"]) == "42\n"
