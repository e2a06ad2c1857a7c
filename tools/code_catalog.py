"""python -m tools.code_catalog: bring the package's catalog (tiledlab/locale/zh_CN/LC_MESSAGES/tiledlab.po)
up to date with the messages the code marks with `_()`, `N_()` or `gettext()`, then compile its .mo, which
tiledlab.i18n reads with the standard library (a maintainer's step, with Babel; then translate and run again)."""
import io
import pathlib

from tiledlab import i18n
from tiledlab.i18n import DOMAIN, MO, PO

KEYWORDS = {"_": None, "N_": None, "gettext": None}
PACKAGE = PO.parents[3]  # tiledlab/


def extract(package=PACKAGE):
    """{msgid: [(file, line), ...]} of every message marked in the package's code (Babel's extractor)."""
    from babel.messages.extract import extract_from_dir
    found = {}
    for file, line, message, _comments, _context in extract_from_dir(
            package, [("**.py", "python")], keywords=KEYWORDS, comment_tags=()):
        found.setdefault(message, []).append((file, line))
    return found


def update_catalog(po=PO):
    """Bring the .po up to date with the code, as msgmerge does: new messages untranslated, changed ones
    fuzzy, gone ones dropped."""
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
    """Write the .mo of the .po with Babel (unless mo is None); returns the .mo's bytes."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    with open(po, "rb") as f:
        catalog = read_po(f)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    if mo is not None:
        pathlib.Path(mo).write_bytes(buffer.getvalue())
        i18n.catalog.cache_clear()  # read the new .mo from now on
    return buffer.getvalue()


if __name__ == "__main__":
    update_catalog()
    compile_catalog()
    print(f"updated {PO} and wrote {MO}")
