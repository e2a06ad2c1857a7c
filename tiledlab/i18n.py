"""The language of what tiledlab says to a student: English, or Chinese for the Chinese edition (notebooks/zh/).
`_()` translates through the domain "tiledlab" (PO, compiled by `python -m tools.code_catalog`), placeholders named
and filled after: `_("{n:,} loads").format(n=n)`; `N_()` only marks. A notebook's words are the domain "notebooks"."""
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
DATA = "data"  # notebooks.po's context of a value the data holds (a level's name), shown in a table or figure


def language():
    """ "zh" if TILEDLAB_LANG or ./LANGUAGE (a kernel starts in notebooks/zh/, which has one) says so, else "en";
    asked at every message, so a notebook may switch at any time; never raises."""
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
    """A value a cell shows (a string, a list, tuple or array of them) in Chinese where notebooks.po has it as data."""
    def text(v):
        return catalog(NOTEBOOK_DOMAIN).pgettext(DATA, v) if isinstance(v, str) and v else v
    if language() != "zh":
        return value
    if isinstance(value, (list, tuple)) or str(getattr(value, "dtype", "")) in ("object", "string", "str"):
        new = [text(v) for v in value]
        return new if any(isinstance(a, str) and a != b for a, b in zip(new, value)) else value
    return text(value)
