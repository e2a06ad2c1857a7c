"""Measurements committed from a real GPU, with their provenance, for readers without one: `load("h200/bench.csv")`,
`row()` and `value()` read them, `stamp()` and `write_rows()` make new ones; a folder per card of core.card.KNOWN."""
import datetime
from importlib import resources

import pandas as pd

from ..backend import describe
from ..i18n import _

PROVENANCE = ("backend", "device", "compute_capability", "numba", "numba_cuda", "numpy", "date")
VERSIONS = PROVENANCE + ("cupy", "ncu")  # read as text: a version such as "0.60" is not the number 0.6


def read_csv(path):
    """A measurement CSV: whole numbers stay whole (Int64), a blank is <NA>, provenance columns stay text."""
    header = pd.read_csv(path, nrows=0).columns
    text = {c: "string" for c in VERSIONS if c in header}
    return pd.read_csv(path, dtype=text, float_precision="round_trip").convert_dtypes()  # floats exactly as written


def stamp():
    """The provenance columns every measurement row carries: backend, device, versions, date."""
    info = {**describe(), "date": datetime.date.today().isoformat()}
    return {k: info[k] for k in PROVENANCE}


def write_rows(rows, path, fields=None):
    """Rows (dicts or a DataFrame) as CSV, columns `fields` (else all), values as given (1, not 1.0), missing blank."""
    table = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows), dtype=object)
    (table if fields is None else table.reindex(columns=fields)).to_csv(path, index=False)


def path(name):
    """Path of a committed data file, e.g. path('h200/bench.csv')."""
    return resources.files(__name__) / name


def load(name):
    """A committed data file as a DataFrame, e.g. load('h200/bench.csv')."""
    if not path(name).is_file():
        raise FileNotFoundError(_missing(name))
    return read_csv(path(name))


def _missing(name):
    """Where the committed files are, not the package's path: the folders with a file of that name, else all."""
    folders = sorted(f.name for f in path("").iterdir() if f.is_dir() and not f.name.startswith("_"))
    base = str(name).replace("\\", "/").rsplit("/", 1)[-1]
    if found := [f"{folder}/{base}" for folder in folders if path(folder).joinpath(base).is_file()]:
        return _("no committed data file {name!r}; did you mean {found}?").format(
            name=name, found=_(" or ").join(map(repr, found)))
    return _("no committed data file {name!r}; the files are in the folders {folders}, e.g. 'h200/bench.csv'").format(
        name=name, folders=", ".join(f + "/" for f in folders))


def row(table, **where):
    """The one row whose columns equal `where` (a mask: pandas 2 and 3 differ on labels), else LookupError."""
    _columns(table, *where)
    match = pd.Series(True, index=table.index)
    for column, wanted in where.items():
        match &= (table[column] == wanted).fillna(False).astype(bool)  # a blank cell matches nothing
    found = table[match]
    if len(found) != 1:
        query = ", ".join(f"{column}={repr(wanted) if isinstance(wanted, str) else wanted}"  # N=4096, not np.int64
                          for column, wanted in where.items())
        raise LookupError(f"{'no row' if found.empty else f'{len(found)} rows'} with {query}: expected exactly one")
    return found.iloc[0]


def value(table, column, **where):
    """`column` of the one row whose columns equal `where`: value(bench, "median_ms", kernel="naive", N=4096)."""
    _columns(table, column)
    return row(table, **where)[column]


def _columns(table, *names):
    """A KeyError naming the table's columns when one of `names` is not among them."""
    if unknown := [n for n in names if n not in table.columns]:
        raise KeyError(_("no column {name!r} in this table; its columns are {columns}").format(
            name=unknown[0], columns=", ".join(map(str, table.columns))))


def provenance(table):
    """One line saying where the rows of a committed DataFrame were measured (from its first row)."""
    r = table.iloc[0]
    return _("measured on {device} (compute capability {cc}) on {date}, numba {numba}, numba-cuda {numba_cuda}, "
             "numpy {numpy}").format(device=r["device"], cc=r["compute_capability"], date=r["date"], numba=r["numba"],
                                     numba_cuda=r["numba_cuda"], numpy=r["numpy"])
