"""check: everything that keeps the Chinese edition from being committed, one line each."""
import io
import pathlib
import re
import tokenize

from ..links import INSTALL_TAG, ZH_INSTALL
from . import catalogs, make, own_words, sources

UPDATE, BUILD = "python -m tools translate update", "python -m tools translate build"
FINGERPRINT = pathlib.Path("tests/data/seed_runs.txt")  # the source articles' fingerprint (own_words)


def check(root, digests=None):
    """Problems of the edition under `root`: catalogs missing, out of date with the English, with
    untranslated or fuzzy messages; generated files missing or out of date, code cells that differ from
    the English notebook's, Chinese files without an English source, and runs copied from the source
    articles (`digests`, by default the committed fingerprint where there is one)."""
    root = pathlib.Path(root)
    units = make.units(root)
    problems = [p for unit in units for p in catalog_problems(root, unit)]
    files, _ = make.generated(root)
    problems += generated_problems(root, files)
    problems += [p for path in sources.english_notebooks(root) for p in code_problems(root, path)]
    problems += orphans(root, units, files)
    problems += term_problems(root, units)
    problems += paragraph_problems(root, units)
    if digests is None and (root / FINGERPRINT).exists():
        digests = own_words.read_fingerprint(root / FINGERPRINT)
    return problems + (own_words.problems(root, digests) if digests else [])


def catalog_problems(root, unit):
    name = unit.catalog.as_posix()
    catalog = make.catalog_of(root, unit)
    if catalog is None:
        return [f"{name}: missing: run `{UPDATE}`, then translate it"]
    problems = []
    if catalogs.keys(catalog) != catalogs.keys(unit.template):
        problems.append(f"{name}: out of date with {unit.source.as_posix()}: run `{UPDATE}`")
    if catalog.obsolete:
        problems.append(f"{name}: {len(catalog.obsolete)} obsolete messages (#~): reuse their translations "
                        "where they fit, then delete them")
    for m in catalog:
        where = m.context if m.context and m.context != make.DATA else repr(m.id[:60])
        if m.id and not m.string:
            problems.append(f"{name}: {where} untranslated")
        elif m.id and m.fuzzy:
            problems.append(f"{name}: {where} fuzzy: the English changed; review the translation, "
                            "then clear the fuzzy flag")
        elif m.id and make.is_code(unit):
            problems += [f"{name}: {m.id!r}: its msgstr has fields the code does not, {sorted(extra)}: copy "
                         "each {field} as the msgid writes it" for extra in [_fields(m.string) - _fields(m.id)] if extra]
        elif m.id and sources.markdown_shape(m.string) != sources.markdown_shape(m.id):
            problems.append(f"{name}: {m.context} breaks the markdown: the English has "
                            f"{_listed(sources.markdown_shape(m.id))}, the translation "
                            f"{_listed(sources.markdown_shape(m.string))}; keep its tables, headings and code")
    return problems


def _fields(text):
    from tiledlab.notebook.cells import pieces
    try:
        return {field for _, field in pieces(text) if field}
    except ValueError:  # a stray brace: the whole text is a field the code does not have
        return {text}


def _listed(shape):
    return ", ".join(shape) if shape else "no table, heading or code"


def generated_problems(root, files):
    problems = []
    for rel, text in files.items():
        path = root / rel
        if not path.exists():
            problems.append(f"{rel.as_posix()}: missing: run `{BUILD}`")
        elif (path.read_bytes() if isinstance(text, bytes) else path.read_text(encoding="utf-8")) != text:
            problems.append(f"{rel.as_posix()}: out of date: run `{BUILD}`")
    return problems


def _copied_cells(nb):
    """{id: what must be the English cell's} of the code and raw cells: type, metadata but the run's
    timing, and the source's tokens without comments (Python's; a raw cell's text)."""
    return {c.id: (c.cell_type, {k: v for k, v in c.metadata.items() if k != "execution"}, statements(c))
            for c in nb.cells if c.cell_type != "markdown"}


def _as_english(chinese):
    """The Chinese notebook `chinese` with its install cell's own words (links.ZH_INSTALL) made English again."""
    for cell in chinese.cells:
        if INSTALL_TAG in cell.metadata.get("tags", []):
            for english, zh in ZH_INSTALL.items():
                cell.source = cell.source.replace(zh, english)
    return chinese


def statements(cell):
    """A code cell's tokens, comments and the line breaks they leave out (its text, where it is not Python)."""
    if cell.cell_type != "code":
        return cell.source
    try:
        return [(t.type, t.string) for t in tokenize.generate_tokens(io.StringIO(cell.source).readline)
                if t.type not in (tokenize.COMMENT, tokenize.NL)]
    except (tokenize.TokenError, SyntaxError):
        return cell.source


def code_problems(root, english_path):
    """A line for each code (or raw) cell of the Chinese notebook that is not the English one's, but for
    its comments and its outputs (a run in Chinese stores its own)."""
    zh_path = root / sources.ZH_NOTEBOOKS / english_path.name
    if not zh_path.exists():
        return []
    name = zh_path.relative_to(root).as_posix()
    english = _copied_cells(sources.read_notebook(english_path))
    chinese = _copied_cells(_as_english(sources.read_notebook(zh_path)))
    problems = [f"{name}: code cell {i} differs from {english_path.relative_to(root).as_posix()}"
                for i, cell in english.items() if chinese.get(i) != cell]
    problems += [f"{name}: code cell {i} is not in the English notebook" for i in chinese if i not in english]
    if not problems and list(chinese) != list(english):
        problems.append(f"{name}: its code cells are not in the English notebook's order")
    return problems


def orphans(root, units, files):
    """Chinese notebooks, pages and catalogs that no English source makes."""
    made = {root / rel for rel in files} | {root / unit.catalog for unit in units}
    found = [p for folder, pattern in ((sources.ZH_NOTEBOOKS, "*.ipynb"), (sources.ZH_DOCS, "*.md"),
                                       (sources.LOCALE, "**/*.po"))
             for p in sorted((root / folder).glob(pattern)) if p not in made]
    return [f"{p.relative_to(root).as_posix()}: no English source makes it: delete it" for p in found]


GLOSSARY = sources.DOCS / "glossary.md"  # its table's third column: the variants the edition never writes


def glossary_terms(root):
    """[(the row's 中文, its terms, the variants to avoid)] of each row of the glossary's table that names
    variants ("a / b", "a、b" and "a, b" list terms; "1/T" is one)."""
    path = pathlib.Path(root) / GLOSSARY
    rows = [line.split("|")[1:-1] for line in path.read_text(encoding="utf-8").splitlines()
            if line.startswith("|")] if path.exists() else []
    split = re.compile(r"\s+/\s+|、|，|,\s*")
    return [(row[1].strip(), [t.strip() for t in split.split(re.sub(r"（[^）]*）", "", row[1])) if t.strip()],
             [t.strip() for t in split.split(row[2]) if t.strip()]) for row in rows[2:] if len(row) > 3 and row[2].strip()]


def term_problems(root, units):
    """A line for each translation that writes a variant the glossary avoids (its own table aside)."""
    terms, problems = glossary_terms(root), []
    for unit in units:
        catalog = make.catalog_of(root, unit)
        for m in catalog or ():
            if not m.id or not isinstance(m.string, str) or m.id.startswith("| English"):
                continue
            for said, preferred, avoided in terms:
                text = m.string
                kept = [t for t in preferred if not any(t in variant for variant in avoided)]  # 命中 is in 未命中
                for term in sorted(kept, key=len, reverse=True):  # 公平对照组 is not the variant 公平对照
                    text = text.replace(term, "\0")
                problems += [f"{unit.catalog.as_posix()}: {m.context or m.id[:40]!r} writes 「{variant}」: the "
                             f"glossary says 「{said}」" for variant in avoided
                             if re.search(r"\s*".join(map(re.escape, variant.split())), text)]
    return problems


def paragraph_problems(root, units):
    """A line for each English paragraph (a heading, a sentence the series repeats, a comment) that two
    translations render differently: one rendering per paragraph, read wherever a message and its
    translation have as many paragraphs (blank-line separated) as each other."""
    renderings = {}
    for unit in units:
        for m in make.catalog_of(root, unit) or ():
            if not m.id or not isinstance(m.string, str) or not m.string or m.fuzzy or m.context == make.DATA:
                continue
            english, chinese = m.id.split("\n\n"), m.string.split("\n\n")
            for said, written in zip(english, chinese) if len(english) == len(chinese) else ():
                where = f"{unit.catalog.as_posix()}: {m.context or repr(m.id[:40])}"
                renderings.setdefault(said.strip(), {}).setdefault(written.strip(), where)
    return [f"{' and '.join(found.values())} render {said[:60]!r} in {len(found)} ways: write it one way"
            for said, found in renderings.items() if len(found) > 1]
