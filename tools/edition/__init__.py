"""The Chinese edition (中文版): one source, two languages.

The English notebooks (notebooks/*.ipynb) and docs pages (docs/index.md, teaching.md, glossary.md) are the
source. Translations live in gettext catalogs, one per notebook and page:

    locale/zh_CN/LC_MESSAGES/notebooks/<stem>.po   one message per markdown cell (msgctxt: the cell's id)
    locale/zh_CN/LC_MESSAGES/docs/<stem>.po        one message per top-level markdown block ("<stem>:<n>")

    tiledlab/locale/zh_CN/LC_MESSAGES/notebooks.po  what the notebooks' code prints and draws, for all of
                                                   them (no msgctxt; "data" for values of the data),
                                                   compiled to notebooks.mo, which tiledlab.notebook.cells
                                                   reads as the cells run (setup() calls it)

and the Chinese edition is generated from both: notebooks/zh/<stem>.ipynb (markdown from the catalog,
code cells copied with their statements token for token, an exercise's and Colab's install cell's
comments translated; metadata "language": "zh-CN", notebooks/zh/LANGUAGE for tiledlab.i18n) and
docs/zh/<page>.md. A code cell keeps the outputs the Chinese notebook stores while its source is
unchanged (a run in Chinese: `python -m tools execute --inplace notebooks/zh/<stem>.ipynb`, then
build), and takes the English notebook's otherwise. Cells tagged `links` are translated with their URLs
kept, notebook URLs pointed at notebooks/zh/. Nobody edits the generated files by hand.

How a change to an English cell reaches the Chinese edition:

    python -m tools translate update   # catalogs follow the English: new messages untranslated,
                                          # changed ones fuzzy (old translation and msgid kept),
                                          # vanished ones obsolete (#~, kept for reuse)
    (translate: fill each empty msgstr, review each fuzzy one and clear its flag; Poedit, Weblate, ...)
    python -m tools translate build    # notebooks/zh/ and docs/zh/ regenerated
    python -m tools translate check    # nothing out of date, untranslated, fuzzy, obsolete, copied or
                                       # against the glossary (its column of variants): exit 0

A code-only change needs update (nothing changes in the catalog) and build. tests/test_edition.py runs
check on the repository, so a commit that leaves the edition behind fails.

Why gettext PO files, read and written with Babel: PO is what translators' tools read (Poedit, Weblate,
Lokalize, msgmerge); its fuzzy flag marks a translation whose English changed, with the previous msgid
beside it, so a reviewer sees what changed; Babel (already installed with Sphinx and JupyterLab) reads
and writes PO and merges catalogs as msgmerge does. One catalog per notebook serves JupyterLab and the
website alike, since the site is built from the generated notebooks.

Modules: sources (what is translated), catalogs (PO files, merging), generate (a Chinese notebook or
page from an English one and its catalog), make (update, build), verify (check), own_words (the
fingerprint of the source articles: no run of 12 of their CJK characters may appear in the edition).
"""
from .make import build, update
from .own_words import write_fingerprint
from .verify import check

__all__ = ["update", "build", "check", "write_fingerprint"]
