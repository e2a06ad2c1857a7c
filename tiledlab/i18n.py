"""The language of what tiledlab says to a student: English, or Chinese for the Chinese edition (notebooks/zh/).

`language()` is "zh" when TILEDLAB_LANG starts with "zh" ("zh_CN"), else when the first word of a file
LANGUAGE in the current folder is "zh" (a Jupyter kernel starts in its notebook's folder; notebooks/zh/ has
one), else "en"; it never raises, and is asked at every message, so a notebook may switch at any time.

`_()` (also `gettext`) translates an English message through the gettext domain "tiledlab":
tiledlab/locale/zh_CN/LC_MESSAGES/tiledlab.po, compiled to the .mo beside it by `python -m tools.code_catalog`
(the stdlib reads the .mo: a student's install needs nothing more). A message with numbers has named
placeholders, filled after translation: `_("{n:,} loads").format(n=n)`. `N_()` only marks a message defined at
import time, to be translated where it is shown.

A notebook's own words are in the domain "notebooks" (`notebook_text`, `shown`; tiledlab.notebook.cells
translates a cell's literals). This module only translates strings, with the standard library alone.
"""
import contextlib
import gettext as _gettext
import os
import pathlib
import unicodedata
from functools import lru_cache

DOMAIN = "tiledlab"
LOCALE_DIR = pathlib.Path(__file__).parent / "locale"
PO = LOCALE_DIR / "zh_CN" / "LC_MESSAGES" / f"{DOMAIN}.po"
MO = PO.with_suffix(".mo")
NOTEBOOK_DOMAIN = "notebooks"  # the notebooks' own words, kept by `translate update`


def language():
    """ "zh" for the Chinese edition, else "en" (see the module's docstring for how it is decided)."""
    if os.environ.get("TILEDLAB_LANG", "").strip().lower().startswith("zh"):
        return "zh"
    with contextlib.suppress(OSError, ValueError):  # ./LANGUAGE that cannot be read: English
        if os.path.isfile("LANGUAGE"):  # not a folder, a pipe or a device, which would block a read
            with open("LANGUAGE", "rb") as f:  # its first word: only its start is read
                return "zh" if f.read(64).decode("utf-8", errors="replace").lstrip().lower().startswith("zh") else "en"
    return "en"


@lru_cache(maxsize=None)
def catalog(domain=DOMAIN):
    """The Chinese translations of a compiled catalog (NullTranslations when it is missing)."""
    return _gettext.translation(domain, LOCALE_DIR, languages=["zh_CN"], fallback=True)


def gettext(message):
    """`message` in the language of `language()`: its Chinese msgstr for "zh", else unchanged."""
    return catalog().gettext(message) if message and language() == "zh" else message  # "": the header


_ = gettext


DATA = "data"  # notebooks.po's context of a value the data holds (a level's name), shown in a table or figure


def notebook_text(message):
    """A notebook's words, or a value of its data, in the reader's language (a table's heading or cell)."""
    if not message or language() != "zh":  # "" would be the catalog's header
        return message
    notebooks = catalog(NOTEBOOK_DOMAIN)
    value = notebooks.pgettext(DATA, message)
    return value if value != message else notebooks.gettext(message)


def width(text):
    """Columns `text` takes in a monospace font: two for a CJK (wide) character, one for any other."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def N_(message):
    """Mark `message` for the catalog without translating it now (a constant, translated where it is shown)."""
    return message


def shown(value):
    """A value a cell shows (an f-string's field, a figure's labels): a string, or the strings of a list,
    tuple or array, in Chinese where notebooks.po has them as data (msgctxt "data"); else `value` itself."""
    def text(v):
        return catalog(NOTEBOOK_DOMAIN).pgettext(DATA, v) if isinstance(v, str) and v else v
    if language() != "zh":
        return value
    if isinstance(value, str):
        return text(value)
    if isinstance(value, (list, tuple)) or str(getattr(value, "dtype", "")) in ("object", "string", "str"):
        items = list(value)
        new = [text(v) for v in items]
        return new if any(isinstance(a, str) and a != b for a, b in zip(new, items)) else value
    return value
