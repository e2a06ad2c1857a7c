"""check: everything that keeps the Chinese edition from being committed, one line each."""
import pathlib

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
    for m in catalog:
        if m.id and not m.string:
            problems.append(f"{name}: {m.context} untranslated")
        elif m.id and m.fuzzy:
            problems.append(f"{name}: {m.context} fuzzy: the English changed; review the translation, "
                            "then clear the fuzzy flag")
        elif m.id and sources.markdown_shape(m.string) != sources.markdown_shape(m.id):
            problems.append(f"{name}: {m.context} breaks the markdown: the English has "
                            f"{_listed(sources.markdown_shape(m.id))}, the translation "
                            f"{_listed(sources.markdown_shape(m.string))}; keep its tables, headings and code")
    return problems


def _listed(shape):
    return ", ".join(shape) if shape else "no table, heading or code"


def generated_problems(root, files):
    problems = []
    for rel, text in files.items():
        path = root / rel
        if not path.exists():
            problems.append(f"{rel.as_posix()}: missing: run `{BUILD}`")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"{rel.as_posix()}: out of date: run `{BUILD}`")
    return problems


def _copied_cells(nb):
    """{id: the cell as it must be copied} of the cells that are never translated."""
    return {c.id: c for c in nb.cells if c.cell_type != "markdown"}


def code_problems(root, english_path):
    """A line for each code (or raw) cell of the Chinese notebook not exactly the English one's."""
    zh_path = root / sources.ZH_NOTEBOOKS / english_path.name
    if not zh_path.exists():
        return []
    name = zh_path.relative_to(root).as_posix()
    english = _copied_cells(sources.read_notebook(english_path))
    chinese = _copied_cells(sources.read_notebook(zh_path))
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
