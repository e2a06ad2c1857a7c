"""Execute the series' notebooks top to bottom and time each one: how the stored outputs are made (on a
GPU, `--inplace`), and where the start page's "minutes per notebook" come from.

Widget state is not stored, so static renders (the website, nbval, a plain viewer) show a widget's text
form instead of trying to load its JavaScript.
"""
import os
import pathlib
import platform
import tempfile
import time

from classroom.series import NOTEBOOKS, lessons, read_notebook  # the committed notebooks/ of the clone
from tiledlab.data import stamp

from .links import INSTALL_TAG


class NotebookError(Exception):
    """A cell of a notebook being run raised: the notebook's problem, not the tools' (exit 5)."""

    def __init__(self, path, cell, error):
        where = f"cell {cell} (counted from 0)" if cell is not None else "its kernel"
        super().__init__(f"{path}: {where} failed: {error}")


def _untouched_install_cell(nb):
    """Leave Colab's install cell as committed: it ran here as a no-op, and a stored execution count or
    timing would say it had done something."""
    for cell in nb.cells:
        if INSTALL_TAG in cell.get("metadata", {}).get("tags", []):
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)


def notebooks(paths=()):
    """The notebooks to run: `paths`, each checked to be a notebook file, or else the whole series."""
    if not paths:
        found = lessons()
        if not found:
            raise FileNotFoundError(f"no notebooks in {NOTEBOOKS}: run this from a clone of the series, "
                                    "or name the notebooks to run")
        return found
    paths = [pathlib.Path(p) for p in paths]
    for path in paths:
        if not path.is_file():
            raise FileNotFoundError(f"no notebook file at {path}: give the path of an .ipynb file "
                                    "(or none, to run the whole series)")
    return paths


def execute(path, inplace=False, timeout=1800):
    """Run one notebook in a fresh kernel; return the seconds it took. With inplace, save its outputs."""
    import nbclient
    import nbformat
    from traitlets.config import Config

    path = pathlib.Path(path)
    nb = read_notebook(path)
    # Local sockets (ipc) where the platform has them: a TCP kernel warns, once per notebook, that its
    # traffic is not encrypted, which is true and beside the point on one machine.
    config = Config()
    if os.name == "posix":  # for ipc, `ip` is the sockets' path prefix: absolute, as the kernel runs elsewhere
        config.KernelManager.transport = "ipc"
        config.KernelManager.ip = os.path.join(tempfile.gettempdir(), f"tiledlab-kernel-{os.getpid()}")
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=False,
                                     resources={"metadata": {"path": str(path.parent)}}, config=config)
    running = []  # the index of the cell that runs now
    client.on_cell_start = lambda cell, cell_index: running.append(cell_index)
    start = time.perf_counter()
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as error:
        raise NotebookError(path, running[-1], f"{error.ename}: {error.evalue}") from None
    except (nbclient.exceptions.CellTimeoutError, nbclient.exceptions.DeadKernelError) as error:
        raise NotebookError(path, running[-1] if running else None, " ".join(str(error).split())[:200]) from None
    seconds = time.perf_counter() - start
    if inplace:
        _untouched_install_cell(nb)
        nbformat.write(nb, path)
    return seconds


def run(paths, inplace=False, report=print):
    """Execute `paths` in order; one row each: notebook, seconds, minutes, backend, device, machine, date."""
    machine = f"{os.cpu_count()} CPU cores, {platform.machine()}"
    rows = []
    for path in paths:
        seconds = execute(path, inplace)
        rows.append({"notebook": pathlib.Path(path).stem, "seconds": round(seconds, 1),
                     "minutes": round(seconds / 60, 2), "machine": machine, **stamp()})
        report(f"{rows[-1]['notebook']}: {seconds:.0f} s")
    return rows
