"""Measurements committed with the package (from a real GPU), with their provenance, for readers without
one: `load("h200/bench.csv")` reads a file of this folder; `stamp()` and `write_rows()` make new ones."""
import csv
import datetime
from importlib import resources

from ..backend import describe

PROVENANCE = ("backend", "device", "compute_capability", "numba", "numba_cuda", "numpy", "date")

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


def stamp():
    """The provenance columns every measurement row carries: backend, device, versions, date."""
    info = {**describe(), "date": datetime.date.today().isoformat()}
    return {k: info[k] for k in PROVENANCE}


def write_rows(rows, path, fields=None):
    """Write measurement rows (dicts) as CSV; columns are `fields`, or every key of the rows in order."""
    fields = fields or list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows({k: row.get(k, "") for k in fields} for row in rows)


def path(name):
    """Path of a committed data file, e.g. path('h200/bench.csv')."""
    return resources.files(__name__) / name


def load(name):
    """Rows of a committed data file, e.g. load('h200/bench.csv')."""
    return read_rows(path(name))


def provenance(rows):
    """One line saying where committed rows were measured."""
    r = rows[0]
    return (f"measured on {r['device']} (compute capability {r['compute_capability']}) on {r['date']}, "
            f"numba {r['numba']}, numba-cuda {r['numba_cuda']}, numpy {r['numpy']}")
