"""Own words: the Chinese edition must not copy the two source articles it was inspired by.

A fingerprint of the articles is committed instead of their text: the first 16 hex digits of the SHA-256
of every run of RUN consecutive CJK characters (U+4E00–U+9FFF, U+3400–U+4DBF) in them, counted after every
other character (spaces, line breaks, punctuation, Latin words, digits) is removed, so that re-wrapping
or re-punctuating a copied sentence still matches. Any such run in a Chinese file is a copy.
"""
import hashlib
import pathlib
import re

RUN = 12
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
HEADER = f"""\
# Fingerprint of the two source articles of the Chinese edition ("own words"): the first 16
# hex digits of the SHA-256 (UTF-8) of every run of {RUN} CJK characters (U+4E00-U+9FFF, U+3400-U+4DBF)
# of their text with all other characters removed, sorted, one a line. The articles are not in the
# repository; tests/test_edition.py fails on any Chinese file that has one of these runs. Made by:
#   python -m tools translate fingerprint /work/shared/seeds/*.txt --out tests/data/seed_runs.txt
"""


def cjk(text):
    """The CJK characters of `text`, in order, nothing else."""
    return "".join(_CJK.findall(text))


def runs(text, n=RUN):
    """Every run of n consecutive CJK characters of `text` (see the module's docstring)."""
    chars = cjk(text)
    return [chars[i:i + n] for i in range(len(chars) - n + 1)]


def digest(run):
    return hashlib.sha256(run.encode("utf-8")).hexdigest()[:16]


def fingerprint(texts):
    """The sorted digests of every run of the texts."""
    return sorted({digest(r) for text in texts for r in runs(text)})


def write_fingerprint(articles, out):
    """Write the fingerprint of the article files `articles` to `out` (see HEADER); return its size."""
    digests = fingerprint(pathlib.Path(a).read_text(encoding="utf-8") for a in articles)
    pathlib.Path(out).write_text(HEADER + "".join(f"{d}\n" for d in digests), encoding="utf-8")
    return len(digests)


def read_fingerprint(path):
    lines = pathlib.Path(path).read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def copied(text, digests):
    """The stretches of `text`'s CJK characters whose runs are in `digests` (overlapping runs joined)."""
    chars, hits = cjk(text), [digest(r) in digests for r in runs(text)]
    stretches, start = [], None
    for i, hit in enumerate([*hits, False]):
        if hit and start is None:
            start = i
        elif not hit and start is not None:
            stretches.append(chars[start:i - 1 + RUN])
            start = None
    return stretches


def texts(path):
    """The text of a Chinese file to scan: a catalog's translations, a notebook's cell sources, or the
    whole file."""
    path = pathlib.Path(path)
    if path.suffix == ".po":
        from . import catalogs
        catalog = catalogs.read(path)
        found = []
        for m in [*catalog, *catalog.obsolete.values()]:
            if m.id:
                found += [m.string] if isinstance(m.string, str) else list(m.string)  # plural forms
        return [s for s in found if s]
    if path.suffix == ".ipynb":
        from . import sources
        return [cell.source for cell in sources.read_notebook(path).cells]
    return [path.read_text(encoding="utf-8", errors="replace")]


#: Where the Chinese edition's text lives, relative to the repository root.
SCANNED = ("locale/**/*.po", "tiledlab/locale/**/*.po", "docs/zh/**/*", "notebooks/zh/**/*")


def scanned(root):
    root = pathlib.Path(root)
    return sorted({p for pattern in SCANNED for p in root.glob(pattern) if p.is_file()})


def problems(root, digests):
    """One line per stretch of a Chinese file under `root` that copies the fingerprinted articles."""
    found = []
    for path in scanned(root):
        for stretch in sorted({s for text in texts(path) for s in copied(text, digests)}):
            found.append(f"{path.relative_to(root).as_posix()}: copies 「{stretch}」 from the source articles "
                         f"({RUN}+ CJK characters in a row): say it in your own words")
    return found
