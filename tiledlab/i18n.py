"""The language of what tiledlab says to a student: English, or Chinese for the Chinese edition (notebooks/zh/).

`language()` is "zh" when the environment variable TILEDLAB_LANG is "zh" (or starts with "zh", such as
"zh_CN"), else when a file named LANGUAGE whose first word is "zh" is in the current folder (a Jupyter
kernel starts in its notebook's folder, and notebooks/zh/ has one), else "en"; it never raises. It is
asked at every message, so a notebook may switch with os.environ["TILEDLAB_LANG"] = "zh" at any time.

`_()` (also `gettext`) translates an English message through the gettext domain "tiledlab":
tiledlab/locale/zh_CN/LC_MESSAGES/tiledlab.po, compiled to the .mo beside it (`compile_catalog()`, which
needs Babel; the stdlib reads the .mo, so a student's install needs nothing more). A message with numbers
has named placeholders, filled after translation: `_("{n:,} loads").format(n=n)`. `N_()` only marks a
message defined at import time, to be translated where it is shown.

`cjk_font()` is the installed font that draws Chinese figure labels, or None.
"""
import gettext as _gettext
import os
import pathlib
from functools import lru_cache

DOMAIN = "tiledlab"
LOCALE_DIR = pathlib.Path(__file__).parent / "locale"
PO = LOCALE_DIR / "zh_CN" / "LC_MESSAGES" / f"{DOMAIN}.po"
MO = PO.with_suffix(".mo")

# Fonts with Simplified Chinese glyphs, in the order they are preferred: Debian/Ubuntu's fonts-noto-cjk
# (the CI machine's), Adobe's name for the same design, WenQuanYi (older Linux), then Windows' and macOS's own.
CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans CJK JP", "Source Han Sans SC", "WenQuanYi Zen Hei",
             "WenQuanYi Micro Hei", "Microsoft YaHei", "PingFang SC", "Heiti SC", "SimHei", "Noto Sans SC")


def language():
    """ "zh" for the Chinese edition, else "en" (see the module's docstring for how it is decided)."""
    if os.environ.get("TILEDLAB_LANG", "").strip().lower().startswith("zh"):
        return "zh"
    return "zh" if _said().startswith("zh") else "en"


def _said():
    """The first word of ./LANGUAGE, lower-cased; "" when there is none, or it is not a plain file (a
    folder, a pipe or a device, which would block a read), or it cannot be read. Only its start is read."""
    try:
        path = pathlib.Path("LANGUAGE")
        if not path.is_file():
            return ""
        with path.open("rb") as f:
            start = f.read(64)
    except (OSError, ValueError):
        return ""
    words = start.decode("utf-8", errors="replace").split()
    return words[0].lower() if words else ""


@lru_cache(maxsize=None)
def _catalog():
    """The Chinese translations of the compiled catalog (NullTranslations when it is missing)."""
    return _gettext.translation(DOMAIN, LOCALE_DIR, languages=["zh_CN"], fallback=True)


def gettext(message):
    """`message` in the language of `language()`: its Chinese msgstr for "zh", else unchanged."""
    return _catalog().gettext(message) if language() == "zh" else message


_ = gettext


def N_(message):
    """Mark `message` for the catalog without translating it now (a constant, translated where it is shown)."""
    return message


KEYWORDS = {"_": None, "N_": None, "gettext": None}


def extract(package=pathlib.Path(__file__).parent):
    """{msgid: [(file, line), ...]} of every message marked in the package's code (Babel's extractor)."""
    from babel.messages.extract import extract_from_dir
    found = {}
    for file, line, message, _comments, _context in extract_from_dir(
            package, [("**.py", "python")], keywords=KEYWORDS, comment_tags=()):
        found.setdefault(message, []).append((file, line))
    return found


def update_catalog(po=PO):
    """Bring the .po up to date with the code, as msgmerge does: new messages untranslated, changed ones
    fuzzy, gone ones dropped (a developer's step; then translate, and `compile_catalog()`)."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po, write_po
    template = Catalog(domain=DOMAIN)
    for message, places in sorted(extract().items()):
        template.add(message, locations=places)
    with open(po, "rb") as f:
        catalog = read_po(f, locale="zh_CN", domain=DOMAIN)
    catalog.update(template, no_fuzzy_matching=False)
    catalog.obsolete.clear()
    with open(po, "wb") as f:
        write_po(f, catalog, width=120, sort_output=True, include_lineno=False)


def compile_catalog(po=PO, mo=MO):
    """Write the .mo of the .po with Babel (a developer's step, after editing the .po); returns the .mo's bytes."""
    import io

    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    with open(po, "rb") as f:
        catalog = read_po(f)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    if mo is not None:
        pathlib.Path(mo).write_bytes(buffer.getvalue())
        _catalog.cache_clear()
    return buffer.getvalue()


# Their files' names, for fonts installed after matplotlib cached its list of fonts (it does not look again).
CJK_FILES = ("notosanscjk", "notosanssc", "sourcehansans", "wqy-", "msyh", "pingfang", "stheiti", "simhei")


@lru_cache(maxsize=1)
def _found_late():
    """Add to matplotlib's fonts the CJK fonts of the system it has not cached yet; how many."""
    from matplotlib import font_manager
    known = {f.fname for f in font_manager.fontManager.ttflist}
    late = [path for path in font_manager.findSystemFonts()
            if path not in known and any(name in pathlib.Path(path).name.lower() for name in CJK_FILES)]
    for path in late:
        try:
            font_manager.fontManager.addfont(path)
        except (OSError, RuntimeError, ValueError):  # a font file FreeType cannot read
            pass
    return len(late)


def cjk_font():
    """The family name of the first font of CJK_FONTS that matplotlib knows (looking for fonts installed
    since it cached its list once, when none is known), or None."""
    from matplotlib import font_manager

    def first():
        known = {f.name for f in font_manager.fontManager.ttflist}
        return next((name for name in CJK_FONTS if name in known), None)
    return first() or (_found_late() and first()) or None


if __name__ == "__main__":  # python -m tiledlab.i18n: update the catalog from the code, then compile it
    update_catalog()
    compile_catalog()
    print(f"updated {PO} and wrote {MO}")
