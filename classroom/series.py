"""The series in this clone: its notebooks in order, each read or refused in one line (for the slides
and the maintainers' tools, which run from a clone too)."""
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]  # the clone: notebooks/, docs/, solutions/, classroom/
NOTEBOOKS = ROOT / "notebooks"


def read_notebook(path):
    """The notebook at `path` (nbformat, version 4), or a ValueError naming the file when it is not a
    valid notebook (any JSON but a notebook's, or one whose cells are malformed)."""
    import nbformat
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        return nb
    except OSError:
        raise
    except Exception as error:  # nbformat's and jsonschema's errors, or a KeyError/TypeError on odd JSON
        reason = " ".join(str(error).split())[:160] or type(error).__name__
        raise ValueError(f"{path} is not a Jupyter notebook ({reason}): give an .ipynb file saved by "
                         "Jupyter") from None


def lessons(folder=NOTEBOOKS):
    """The series' notebooks in order (00, 01, ...)."""
    return sorted(pathlib.Path(folder).glob("[0-9][0-9]_*.ipynb"))
