"""Measurements committed with the package (from a real GPU), with their provenance, for readers without one."""
import csv
from importlib import resources

def _value(text):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def read_rows(path):
    """Rows of a measurement CSV as dicts, numbers converted."""
    with open(path, newline="") as f:
        return [{k: _value(v) for k, v in row.items()} for row in csv.DictReader(f)]


def path(name):
    """Path of a committed data file, e.g. path('h200/bench.csv')."""
    return resources.files("tiledlab") / "data" / name


def load(name):
    """Rows of a committed data file, e.g. load('h200/bench.csv')."""
    return read_rows(path(name))


def provenance(rows):
    """One line saying where committed rows were measured."""
    r = rows[0]
    return (f"measured on {r['device']} (compute capability {r['compute_capability']}) on {r['date']}, "
            f"numba {r['numba']}, numba-cuda {r['numba_cuda']}, numpy {r['numpy']}")
